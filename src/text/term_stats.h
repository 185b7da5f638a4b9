#pragma once
// How common query terms are in the keyword index, so that recall need not score every
// document that matches a term present in most of them.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "store/db.h"

namespace strata::text {

// Below this many indexed versions every term is kept: scoring all matches is cheap.
inline constexpr int64_t kPruneMinRows = 10000;

struct SplitTerms {
  std::vector<std::string> selective;  // In at most half of the indexed versions.
  std::vector<std::string> common;     // In more than half: BM25 gives them ~zero weight.
};

// Document frequencies come from counting a term's matches, stopping at half the index, and
// are cached until the index size moves by a tenth.
// Thread safety: as the Db it borrows.
class TermStats {
 public:
  explicit TermStats(store::Db* db) : db_(db) {}

  // Splits `terms`. When every term is common, or the index holds fewer than kPruneMinRows
  // versions, all are selective.
  absl::StatusOr<SplitTerms> Split(const std::vector<std::string>& terms);

  // The number of versions in the keyword index (FTS5's own row count).
  absl::StatusOr<int64_t> IndexedRows();

 private:
  struct Entry {
    int64_t capped_df;  // min(df, cap at the time)
    int64_t rows_at;    // IndexedRows() when counted
  };
  absl::StatusOr<bool> IsCommon(const std::string& term, int64_t rows);

  store::Db* db_;  // Not owned; outlives this.
  absl::flat_hash_map<std::string, Entry> cache_;
};

}  // namespace strata::text
