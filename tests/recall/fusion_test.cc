// recall::FuseByRank against hand-computed reciprocal-rank scores: the exact sums, items in
// both arms first, the tie order, empty arms, the ranks reported per arm.

#include "recall/fusion.h"

#include <cstdint>
#include <optional>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::recall {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<int64_t> VersionIds(const std::vector<FusedHit>& fused) {
  std::vector<int64_t> ids;
  for (const FusedHit& hit : fused) ids.push_back(hit.version_id);
  return ids;
}

// 1 / (60 + rank), as fusion.h defines the score.
double R(int rank) { return 1.0 / (60.0 + rank); }

TEST(FuseByRank, ScoresAreExactlyTheSumOfReciprocalRanks) {
  // Version v belongs to memory v * 10.
  const std::vector<ArmHit> sparse = {{1, 10}, {2, 20}, {3, 30}};
  const std::vector<ArmHit> dense = {{3, 30}, {4, 40}, {1, 10}};
  const std::vector<FusedHit> fused = FuseByRank(sparse, dense);
  // 1: R(1) + R(3) = 0.0322...; 3: R(3) + R(1), the same: tie, memory 10 < 30.
  // 2: R(2); 4: R(2): tie, memory 20 < 40.
  ASSERT_THAT(VersionIds(fused), ElementsAre(1, 3, 2, 4));
  EXPECT_EQ(fused[0].score, R(1) + R(3));
  EXPECT_EQ(fused[1].score, R(3) + R(1));
  EXPECT_EQ(fused[2].score, R(2));
  EXPECT_EQ(fused[3].score, R(2));
}

TEST(FuseByRank, ScoreMatchesTheFormulaForEveryRank) {
  std::vector<ArmHit> sparse;
  std::vector<ArmHit> dense;
  for (int64_t i = 1; i <= 100; ++i) {
    sparse.push_back({i, i});
    dense.push_back({1000 + i, 1000 + i});
  }
  for (const FusedHit& hit : FuseByRank(sparse, dense)) {
    if (hit.sparse_rank) {
      EXPECT_EQ(hit.score, R(*hit.sparse_rank));
      EXPECT_EQ(*hit.sparse_rank, hit.version_id);
      EXPECT_FALSE(hit.dense_rank);
    } else {
      ASSERT_TRUE(hit.dense_rank);
      EXPECT_EQ(hit.score, R(*hit.dense_rank));
      EXPECT_EQ(*hit.dense_rank, hit.version_id - 1000);
    }
  }
}

TEST(FuseByRank, AnItemInBothArmsBeatsItemsInOne) {
  // Version 9 is last in both arms; every other version is first or second in one arm only.
  // 2 / 63 = 0.0317 > 1 / 61 = 0.0164.
  const std::vector<ArmHit> sparse = {{1, 1}, {2, 2}, {9, 9}};
  const std::vector<ArmHit> dense = {{3, 3}, {4, 4}, {9, 9}};
  const std::vector<FusedHit> fused = FuseByRank(sparse, dense);
  ASSERT_THAT(VersionIds(fused), ElementsAre(9, 1, 3, 2, 4));
  EXPECT_EQ(fused[0].score, 2 * R(3));
  EXPECT_EQ(fused[0].sparse_rank, 3);
  EXPECT_EQ(fused[0].dense_rank, 3);
}

TEST(FuseByRank, TiesBreakByAscendingMemoryIdThenVersionId) {
  // Equal scores everywhere: each version is first in one arm.
  const std::vector<ArmHit> sparse = {{5, 50}};
  const std::vector<ArmHit> dense = {{6, 7}};
  EXPECT_THAT(VersionIds(FuseByRank(sparse, dense)), ElementsAre(6, 5));
  // Two versions of one memory (as_of can surface neither twice, but fusion must not care).
  const std::vector<ArmHit> same_memory_sparse = {{12, 3}};
  const std::vector<ArmHit> same_memory_dense = {{11, 3}};
  EXPECT_THAT(VersionIds(FuseByRank(same_memory_sparse, same_memory_dense)), ElementsAre(11, 12));
  // The order is independent of which arm a tied item came from.
  EXPECT_THAT(VersionIds(FuseByRank(dense, sparse)), ElementsAre(6, 5));
}

TEST(FuseByRank, EmptyArms) {
  const std::vector<ArmHit> none;
  EXPECT_THAT(FuseByRank(none, none), IsEmpty());

  const std::vector<ArmHit> some = {{3, 30}, {1, 10}, {2, 20}};
  const std::vector<FusedHit> sparse_only = FuseByRank(some, none);
  ASSERT_THAT(VersionIds(sparse_only), ElementsAre(3, 1, 2));  // The arm's own order.
  for (size_t i = 0; i < sparse_only.size(); ++i) {
    EXPECT_EQ(sparse_only[i].sparse_rank, static_cast<int>(i) + 1);
    EXPECT_EQ(sparse_only[i].dense_rank, std::nullopt);
    EXPECT_EQ(sparse_only[i].score, R(static_cast<int>(i) + 1));
  }
  const std::vector<FusedHit> dense_only = FuseByRank(none, some);
  ASSERT_THAT(VersionIds(dense_only), ElementsAre(3, 1, 2));
  for (size_t i = 0; i < dense_only.size(); ++i) {
    EXPECT_EQ(dense_only[i].dense_rank, static_cast<int>(i) + 1);
    EXPECT_EQ(dense_only[i].sparse_rank, std::nullopt);
  }
}

TEST(FuseByRank, RanksAreReportedPerArm) {
  const std::vector<ArmHit> sparse = {{1, 1}, {2, 2}, {3, 3}};
  const std::vector<ArmHit> dense = {{3, 3}, {5, 5}};
  const std::vector<FusedHit> fused = FuseByRank(sparse, dense);
  // 3: R(3) + R(1); 1: R(1); 5: R(2) ties 2: R(2) -> memory 2 first.
  ASSERT_THAT(VersionIds(fused), ElementsAre(3, 1, 2, 5));
  EXPECT_EQ(fused[0].sparse_rank, 3);
  EXPECT_EQ(fused[0].dense_rank, 1);
  EXPECT_EQ(fused[1].sparse_rank, 1);
  EXPECT_EQ(fused[1].dense_rank, std::nullopt);
  EXPECT_EQ(fused[2].sparse_rank, 2);
  EXPECT_EQ(fused[2].dense_rank, std::nullopt);
  EXPECT_EQ(fused[3].sparse_rank, std::nullopt);
  EXPECT_EQ(fused[3].dense_rank, 2);
  EXPECT_EQ(fused[3].memory_id, 5);
}

TEST(FuseByRank, AVersionListedTwiceInOneArmCountsOnceAtItsBestRank) {
  const std::vector<ArmHit> sparse = {{1, 1}, {2, 2}, {1, 1}};
  const std::vector<ArmHit> none;
  const std::vector<FusedHit> fused = FuseByRank(sparse, none);
  ASSERT_THAT(VersionIds(fused), ElementsAre(1, 2));
  EXPECT_EQ(fused[0].score, R(1));
  EXPECT_EQ(fused[0].sparse_rank, 1);
}

TEST(FuseByRank, KIsAParameter) {
  const std::vector<ArmHit> sparse = {{1, 1}, {2, 2}};
  const std::vector<ArmHit> dense = {{2, 2}};
  const std::vector<FusedHit> fused = FuseByRank(sparse, dense, /*k=*/0);
  ASSERT_THAT(VersionIds(fused), ElementsAre(2, 1));
  EXPECT_EQ(fused[0].score, 1.0 / 2 + 1.0 / 1);
  EXPECT_EQ(fused[1].score, 1.0);
}

TEST(FuseByRank, DefaultKIsSixty) { EXPECT_EQ(kRrfK, 60); }

TEST(FuseByRank, ExactKeywordMatchesRankAboveEverythingElse) {
  // 3 is BM25's 3rd and exact; 1 and 2 are in both arms but only partial keyword matches.
  const std::vector<ArmHit> sparse = {{1, 1}, {2, 2}, {3, 3, true}};
  const std::vector<ArmHit> dense = {{1, 1}, {2, 2}, {4, 4}};
  const std::vector<FusedHit> fused = FuseByRank(sparse, dense);
  ASSERT_THAT(VersionIds(fused), ElementsAre(3, 1, 2, 4));
  EXPECT_TRUE(fused[0].exact);
  EXPECT_FALSE(fused[1].exact);
  EXPECT_EQ(fused[0].score, R(3));  // The score is still the fused one.
}

TEST(FuseByRank, ExactMatchesKeepTheKeywordArmsOrderAmongThemselves) {
  // 2 has the higher fused score (both arms), but BM25 ranks 1 first.
  const std::vector<ArmHit> sparse = {{1, 1, true}, {2, 2, true}, {3, 3}};
  const std::vector<ArmHit> dense = {{2, 2}};
  const std::vector<FusedHit> fused = FuseByRank(sparse, dense);
  ASSERT_THAT(VersionIds(fused), ElementsAre(1, 2, 3));
  EXPECT_GT(fused[1].score, fused[0].score);
}

}  // namespace
}  // namespace strata::recall
