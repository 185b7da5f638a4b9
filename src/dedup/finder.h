#pragma once
// Finding the near-duplicate of a new memory: candidates from the band index, each verified
// by exact character-trigram Jaccard.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dedup/index.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/version_table.h"
#include "text/body_text.h"

namespace strata::dedup {

// At most this many candidates are verified per write (the most band hits first).
inline constexpr size_t kMaxCandidates = 64;

struct Match {
  int64_t memory_id = 0;
  double similarity = 0;
};

// Thread safety: as the Db it borrows.
class DuplicateFinder {
 public:
  DuplicateFinder(store::Db* db, double threshold)
      : db_(db), threshold_(threshold), index_(db), versions_(db) {}

  // The current memory in `identity`'s category and workspace whose body is most similar to
  // `body` (ties: lowest id), if the character-trigram Jaccard similarity of their normal JSON
  // is at least the threshold. Candidates share one of `keys` (the body's BandKeys).
  absl::StatusOr<std::optional<Match>> Find(const Identity& identity, const text::ParsedBody& body,
                                            const std::vector<int64_t>& keys);

  double threshold() const { return threshold_; }
  // Counters since construction, for stats.
  int64_t checks() const { return checks_; }
  int64_t candidates_verified() const { return candidates_verified_; }
  // histogram()[n]: checks that verified n candidates.
  const std::array<int64_t, kMaxCandidates + 1>& histogram() const { return histogram_; }

 private:
  store::Db* db_;  // Not owned; outlives this.
  double threshold_;
  DedupIndex index_;
  temporal::VersionTable versions_;
  int64_t checks_ = 0;
  int64_t candidates_verified_ = 0;
  std::array<int64_t, kMaxCandidates + 1> histogram_{};
};

}  // namespace strata::dedup
