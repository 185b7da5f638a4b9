#pragma once
// Reciprocal rank fusion of the keyword and dense arms (docs/design.md §5).

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace strata::recall {

inline constexpr int kRrfK = 60;

// One arm's result: best first.
struct ArmHit {
  int64_t version_id;
  int64_t memory_id;  // Breaks ties.
};

struct FusedHit {
  int64_t version_id;
  int64_t memory_id;
  double score;  // Sum over arms of 1 / (k + rank), ranks 1-based.
  std::optional<int> sparse_rank;
  std::optional<int> dense_rank;
};

// Every version of either arm, best fused score first, ties by memory id then version id.
std::vector<FusedHit> FuseByRank(std::span<const ArmHit> sparse, std::span<const ArmHit> dense,
                                 int k = kRrfK);

}  // namespace strata::recall
