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
// The common ones outlive the process: Save keeps them in the store (a meta row), and a
// TermStats reads what was saved before its first count. A common term's count reads half a
// sample of its matches, from pages a process just started has not read yet: on Perseus
// Vault's corpus a start's first recall counted "entity" and "group" again, 2-3 ms of it at
// 10K and 100K memories (PERF.md, "Session 43").
// Thread safety: as the Db it borrows.
class TermStats {
 public:
  explicit TermStats(store::Db* db) : db_(db) {}

  // Splits `terms`. When there are fewer than two (then nothing is read), when every term is
  // common, or when the index holds fewer than kPruneMinRows versions, all are selective.
  absl::StatusOr<SplitTerms> Split(const std::vector<std::string>& terms);

  // Saves what this TermStats counted since it read the saved answers, with those another
  // process saved meanwhile (the terms counted here as rare leave them), in a write
  // transaction of its own; nothing when it counted nothing that changes them.
  // REQUIRES: no transaction open on the Db.
  absl::Status Save();

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
  // Common terms, each with the index size it was counted at.
  using SavedTerms = absl::flat_hash_map<std::string, int64_t>;
  // The saved ones.
  absl::StatusOr<SavedTerms> ReadSaved();

  store::Db* db_;  // Not owned; outlives this.
  absl::flat_hash_map<std::string, Entry> cache_;
  // The saved answers when first read (they are in cache_ too, as room allowed); nullopt
  // until then.
  std::optional<SavedTerms> saved_;
  // Counted here since, where they change the saved ones: the answers Save writes (a rare
  // one takes its term out).
  absl::flat_hash_map<std::string, Entry> counted_;
};

}  // namespace strata::text
