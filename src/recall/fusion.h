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
  int64_t memory_id;   // Breaks ties.
  bool exact = false;  // An exact keyword match (recaller.h); only the keyword arm's can be.
};

struct FusedHit {
  int64_t version_id;
  int64_t memory_id;
  double score;  // Sum over arms of 1 / (k + rank), ranks 1-based.
  std::optional<int> sparse_rank;
  std::optional<int> dense_rank;
  bool exact = false;
};

// Every version of either arm: exact keyword matches first, in the keyword arm's order;
// then the rest, best fused score first; ties by memory id then version id. Rank fusion alone weighs a dense neighbour with
// no word of the query as much as the keyword arm's match of all of them, and pushed exact
// matches ranked 6th-10th by BM25 out of a top 10.
std::vector<FusedHit> FuseByRank(std::span<const ArmHit> sparse, std::span<const ArmHit> dense,
                                 int k = kRrfK);

}  // namespace strata::recall
