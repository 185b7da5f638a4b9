#pragma once
// The FTS5 keyword index over versions (rowid = versions.id).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/db.h"

namespace strata::text {

// Column weights for bm25(): body text, key, category.
inline constexpr double kTextWeight = 1.0;
inline constexpr double kKeyWeight = 2.0;
inline constexpr double kCategoryWeight = 0.5;

// A match of the index, as ranked.
struct RankedMatch {
  int64_t version_id;
  double score;     // BM25 with the column weights above; higher is better.
  uint64_t phrases;  // Bit i: the match holds phrase i of the MATCH expression.
};

// Maintains the contentless index. The index stores no text, so removal needs the same
// values that were added. Callers own transactions.
// Thread safety: as the Db it borrows.
class FtsIndex {
 public:
  explicit FtsIndex(store::Db* db) : db_(db) {}

  // `text` is the version's searchable text (text::BodyText of its body).
  absl::Status Add(int64_t version_id, std::string_view text, std::string_view key,
                   std::string_view category);
  absl::Status Remove(int64_t version_id, std::string_view body_json, std::string_view key,
                      std::string_view category);

  // The matches of `match` (an FTS5 MATCH expression) ranked by BM25, best first (ties by
  // version id), from the `offset`-th on, at most `limit`. Reads only the index: costs what
  // ranking every match costs, not what loading them does.
  absl::StatusOr<std::vector<RankedMatch>> Rank(std::string_view match, int64_t offset,
                                                int64_t limit);
  // The version ids matching `match`, newest (highest id) first, below `below` when given,
  // at most `limit`: the index's own order, which needs no sort.
  absl::StatusOr<std::vector<int64_t>> NewestMatches(std::string_view match,
                                                     std::optional<int64_t> below, int64_t limit);

 private:
  store::Db* db_;  // Not owned; outlives this.
};

}  // namespace strata::text
