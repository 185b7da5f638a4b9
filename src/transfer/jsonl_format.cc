#include "transfer/jsonl_format.h"

#include <string>

#include <nlohmann/json.hpp>

#include "util/json_text.h"
#include "util/status_macros.h"

namespace strata::transfer {

absl::StatusOr<std::vector<ForeignRecord>> ReadJsonl(const ForeignImport& what) {
  int64_t budget = kMaxForeignBytes;
  ASSIGN_OR_RETURN(const std::string text, ReadWhole(what.path, budget));
  std::vector<ForeignRecord> records;
  JsonParser parser;
  for (const TextLine& line : NonBlankLines(text)) {
    ForeignRecord& record = records.emplace_back(
        ForeignRecord{.at = {.file = what.path, .line = line.number},
                      .record = absl::InvalidArgumentError("expected a JSON object")});
    absl::StatusOr<nlohmann::json> parsed = parser.Parse(line.text);
    if (!parsed.ok()) {
      record.record = parsed.status();
    } else if (parsed->is_object()) {
      record.record = RequestFromFields(*parsed, what);
    }
  }
  return records;
}

}  // namespace strata::transfer
