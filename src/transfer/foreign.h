#pragma once
// Memories from other systems' files (README, "Export and import"). Each format's reader
// (server_memory.h, markdown.h, csv_format.h, jsonl_format.h) turns its input into write
// requests numbered by file and line; Store::ImportForeign writes them through the write
// path with WriteInBatches (batches.h). The inputs are read whole: a graph's relations may
// come before the entities they name, and these files are small.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "text/body_text.h"
#include "transfer/batches.h"

namespace strata::transfer {

// The most a foreign import reads (a file, or a folder's notes together).
inline constexpr int64_t kMaxForeignBytes = int64_t{1} << 30;

using ForeignRecord = Numbered<WriteRequest>;

// Reads and parses what.path as what.format, bad records included (reported when written).
// Errors (the whole import): InvalidArgument (kStrata, a CSV without its header, more than
// kMaxForeignBytes), NotFound.
absl::StatusOr<std::vector<ForeignRecord>> ReadForeign(const ForeignImport& what);

// What the write path derives from a record's body without the store: the parse, and the
// band keys a new memory of it gets (dedup::BodyKeys).
struct PreparedBody {
  absl::StatusOr<text::ParsedBody> body;
  std::optional<std::vector<int64_t>> keys;  // When asked for (ComputeKeys) and it parses.
};

// Prepares the bodies of `records` in order on a thread of its own, ahead of the writer that
// takes them (at most kLead ahead, so memory stays bounded): parsing and the near-duplicate
// analysis take about as long as writing.
// Thread safety: Take is called by one thread, for increasing indexes. The preparing thread
// writes an entry only before publishing it and reads `records`, which must not change while
// this lives; it stops when done or when this is destroyed.
class BodyPreparer {
 public:
  static constexpr size_t kLead = 2048;
  explicit BodyPreparer(const std::vector<ForeignRecord>& records);
  ~BodyPreparer();
  BodyPreparer(const BodyPreparer&) = delete;
  BodyPreparer& operator=(const BodyPreparer&) = delete;

  // Record i's (waiting until it is prepared); each index at most once, in increasing order.
  // REQUIRES: records[i].record is OK.
  PreparedBody Take(size_t i);

  // Whether the bodies prepared from now on come with band keys: worth it while the records
  // are mostly new memories (true at first); a record already stored needs none.
  void ComputeKeys(bool with_keys) { with_keys_.store(with_keys, std::memory_order_relaxed); }

 private:
  void Run();

  const std::vector<ForeignRecord>& records_;  // Not owned; outlives this.
  std::vector<PreparedBody> prepared_;         // Entry i: written before ready_ > i.
  std::atomic<size_t> ready_{0};               // Entries prepared.
  std::atomic<size_t> taken_{0};               // Entries before this one are no longer wanted.
  std::atomic<bool> stopping_{false};
  std::atomic<bool> with_keys_{true};
  std::jthread thread_;  // Last: started once the members it uses are.
};

// The format of `path` (DetectImportFormat).
absl::StatusOr<ImportFormat> DetectFormat(const std::string& path);

// ---- Shared by the readers ----

// The bytes of the file at `path`, counted against `budget` (bytes still allowed). Errors:
// NotFound, InvalidArgument past the budget.
absl::StatusOr<std::string> ReadWhole(const std::string& path, int64_t& budget);

// The 1-based line of `text` (counted from `first_line`) holding the first byte that is not
// UTF-8, or 0 when it all is.
int64_t FirstNonUtf8Line(std::string_view text, int64_t first_line = 1);

// The lines of `text` that hold more than whitespace, with their 1-based numbers, without
// their line ends ("\n" or "\r\n").
struct TextLine {
  int64_t number = 0;
  std::string_view text;
};
std::vector<TextLine> NonBlankLines(std::string_view text);

// A write request from named fields: `category`, `key` (strings), `body` (any JSON; a string
// is stored as a JSON string), `valid_from`, `valid_to` (unix ms, or text strata's time
// arguments accept), `tags` (an array of strings, or one string of comma-separated tags),
// `type` (default "insight"). Another field, or one of the wrong type, is InvalidArgument
// naming it. The workspace and a missing category come from `what`. Never merged by dedup.
absl::StatusOr<WriteRequest> RequestFromFields(const nlohmann::json& fields,
                                               const ForeignImport& what);

}  // namespace strata::transfer
