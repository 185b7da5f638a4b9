#pragma once
// How common query terms are in the keyword index, so that recall need not score every
// document that matches a term present in most of them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "store/db.h"

namespace strata::text {

// Below this many indexed versions every term is kept: scoring all matches is cheap. At 5,000
// memories of Perseus Vault's corpus, where "entity" and "group" are in every body, scoring
// them all made a keyword recall 14 ms (p50); pruned, it costs what its rare terms cost.
inline constexpr int64_t kPruneMinRows = 1000;
// A common term's count reads up to half this many matches (a term in every version: that
// many postings). At 20,000 a node's first keyword recall on PostgreSQL took ~140 ms at 100K
// memories, counting "entity" and "group" of Perseus Vault's corpus (~16K postings each, on
// pages autovacuum had not marked all-visible yet), and again as the index grew by each
// tenth. 2,000 still tells a term in more than half of the versions from one in fewer: a
// term near half, the only one the sample can misjudge, has a BM25 weight near zero anyway.
inline constexpr int64_t kSampleRows = 2000;

struct SplitTerms {
  std::vector<std::string> selective;  // In at most half of the indexed versions.
  std::vector<std::string> common;     // In more than half: BM25 gives them ~zero weight.
};

// Whether a term is common comes from counting its matches: in an index of up to
// 2 * kSampleRows versions all of them (stopping at half), in a larger one among the newest
// kSampleRows, so that the count costs the same at 100K and 1M. Answers are cached until the
// index size moves by a tenth.
// Thread safety: as the Db it borrows.
class TermStats {
 public:
  explicit TermStats(store::Db* db) : db_(db) {}

  // Splits `terms`. When there are fewer than two (then nothing is read), when every term is
  // common, or when the index holds fewer than kPruneMinRows versions, all are selective.
  absl::StatusOr<SplitTerms> Split(const std::vector<std::string>& terms);

  // The number of versions in the keyword index (FTS5's own row count; text_totals's).
  absl::StatusOr<int64_t> IndexedRows();

 private:
  struct Entry {
    bool common;
    int64_t rows_at;  // IndexedRows() when counted
  };
  // The cached answer for `term`, unless the index has moved too far since.
  std::optional<bool> Cached(const std::string& term, int64_t rows) const;
  // Counts `term`'s matches (none when `bound`, at least their number, says it is rare) and
  // caches the answer.
  absl::StatusOr<bool> IsCommon(const std::string& term, int64_t rows, int64_t bound);

  store::Db* db_;  // Not owned; outlives this.
  absl::flat_hash_map<std::string, Entry> cache_;
};

}  // namespace strata::text
