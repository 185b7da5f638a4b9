#include "recall/fusion.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace strata::recall {

std::vector<FusedHit> FuseByRank(std::span<const ArmHit> sparse, std::span<const ArmHit> dense,
                                 int k) {
  std::vector<FusedHit> fused;
  absl::flat_hash_map<int64_t, size_t> at;  // version id -> index in fused
  auto add = [&](std::span<const ArmHit> arm, std::optional<int> FusedHit::*rank) {
    for (size_t i = 0; i < arm.size(); ++i) {
      auto [it, inserted] = at.try_emplace(arm[i].version_id, fused.size());
      if (inserted) fused.push_back({arm[i].version_id, arm[i].memory_id, 0.0, {}, {}, false});
      FusedHit& hit = fused[it->second];
      if (hit.*rank) continue;  // An arm lists a version once; keep its best rank.
      hit.*rank = static_cast<int>(i) + 1;
      hit.exact |= arm[i].exact;
      hit.score += 1.0 / (k + static_cast<double>(i + 1));
    }
  };
  add(sparse, &FusedHit::sparse_rank);
  add(dense, &FusedHit::dense_rank);
  std::sort(fused.begin(), fused.end(), [](const FusedHit& a, const FusedHit& b) {
    if (a.exact != b.exact) return a.exact;
    // Among exact matches BM25 decides: a dense neighbour of one says nothing about which
    // holds the identifier best.
    if (a.exact && a.sparse_rank != b.sparse_rank) return *a.sparse_rank < *b.sparse_rank;
    if (a.score != b.score) return a.score > b.score;
    if (a.memory_id != b.memory_id) return a.memory_id < b.memory_id;
    return a.version_id < b.version_id;
  });
  return fused;
}

}  // namespace strata::recall
