#pragma once
// The dense arm without the index: every visible version's vector, scored.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "temporal/visibility.h"
#include "vector/chance_level.h"

namespace strata::vector {

struct ScoredVersion {
  int64_t version_id;
  int64_t memory_id;
  double similarity;  // Cosine; -2 for a vector that does not decode (never a match).
};

struct ScanResult {
  std::vector<ScoredVersion> best;  // Closest first, ties by version id.
  ChanceLevel chance;               // Over every version scored.
};

// The `want` visible versions (of `visibility`'s read) with a vector in `space` closest to
// `query` (unit length), and the query's chance level among all of them.
absl::StatusOr<ScanResult> ExactScan(temporal::Visibility& visibility, int64_t space,
                                     std::span<const float> query, size_t want);

}  // namespace strata::vector
