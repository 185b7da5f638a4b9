#include "embed/embedder.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/sv.h"

namespace strata::embed {

std::string EmbedderInfo::Fingerprint() const {
  return absl::StrCat(name, "/", version, "/", dimension, "/", options);
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseOptions(
    std::string_view options) {
  std::vector<std::pair<std::string, std::string>> out;
  if (options.empty()) return out;
  for (absl::string_view entry : absl::StrSplit(ToAbsl(options), ',')) {
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("embedder option \"", entry, "\": expected key=value"));
    }
    std::string key(entry.substr(0, eq));
    for (const auto& [k, v] : out) {
      if (k == key) {
        return absl::InvalidArgumentError(absl::StrCat("embedder option \"", key, "\": repeated"));
      }
    }
    out.emplace_back(std::move(key), std::string(entry.substr(eq + 1)));
  }
  return out;
}

}  // namespace strata::embed
