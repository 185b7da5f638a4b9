#pragma once
// Finding what a new memory resembles: candidates from the band index, each scored by exact
// character-trigram Jaccard, and merged into only when the new memory adds nothing.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dedup/content.h"
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
  Identity identity;
  double similarity = 0;
};

// What a new memory's body resembles among the current memories of its scope.
struct Resemblance {
  // The memory it may be merged into: similarity at least the threshold, and the new body
  // adds nothing to it (AddsNothing) and has at least kMinMergeUnits value units. The most
  // similar such memory (ties: lowest id).
  std::optional<Match> merge;
  // Without a merge: the others at least that similar, most similar first (ties: lowest
  // id), at most kMaxSimilar.
  std::vector<Match> similar;
};

// Thread safety: as the Db it borrows.
class DuplicateFinder {
 public:
  // `index` holds the band keys; both outlive this.
  DuplicateFinder(store::Db* db, DedupIndex* index, double threshold)
      : threshold_(threshold), index_(index), versions_(db) {}

  // What `body` (with `units`, its Analyze) resembles in `identity`'s category and
  // workspace. Candidates share one of `keys` (the body's BandKeys).
  absl::StatusOr<Resemblance> Find(const Identity& identity, const text::ParsedBody& body,
                                   const ContentUnits& units, const std::vector<int64_t>& keys);

  double threshold() const { return threshold_; }
  // Counters since construction, for stats.
  int64_t checks() const { return checks_; }
  int64_t candidates_verified() const { return candidates_verified_; }
  // histogram()[n]: checks that verified n candidates.
  const std::array<int64_t, kMaxCandidates + 1>& histogram() const { return histogram_; }

 private:
  double threshold_;
  DedupIndex* index_;  // Not owned.
  temporal::VersionTable versions_;
  int64_t checks_ = 0;
  int64_t candidates_verified_ = 0;
  std::array<int64_t, kMaxCandidates + 1> histogram_{};
};

}  // namespace strata::dedup
