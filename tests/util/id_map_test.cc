// util/id_map.h: an IdMap finds what was set and nothing else, whether its ids fill their
// range (kept in a vector) or not (hashed), and for ids outside the range it was told.

#include "util/id_map.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace strata::util {
namespace {

// No value set below is the smallest int64.
using Map = IdMap<int64_t, std::numeric_limits<int64_t>::min()>;

// Sets `ids` in `map` (value: id / 2 + 1), checks each against a std::map kept alongside, then
// looks up every id in [low - 5, high + 5] and the extremes.
void CheckAgainstStdMap(Map& map, const std::vector<int64_t>& ids, int64_t low, int64_t high) {
  std::map<int64_t, int64_t> want;
  for (const int64_t id : ids) {
    const auto [value, added] = map.TryEmplace(id, id / 2 + 1);
    EXPECT_EQ(added, want.emplace(id, id / 2 + 1).second) << id;
    EXPECT_EQ(*value, id / 2 + 1) << id;
  }
  EXPECT_EQ(map.size(), want.size());
  for (int64_t id = low - 5; id <= high + 5; ++id) {
    const int64_t* found = map.Find(id);
    const auto it = want.find(id);
    ASSERT_EQ(found != nullptr, it != want.end()) << id;
    if (found != nullptr) {
      EXPECT_EQ(*found, it->second) << id;
    }
  }
  for (const int64_t id :
       {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(map.Find(id) != nullptr, want.contains(id)) << id;
  }
}

TEST(IdMap, DenseIdsAreFoundAndOnlyThey) {
  // Every other id of [100, 1100]: half the range, kept in a vector.
  std::vector<int64_t> ids;
  for (int64_t id = 100; id <= 1100; id += 2) ids.push_back(id);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(3));
  Map map(100, 1100, ids.size());
  CheckAgainstStdMap(map, ids, 100, 1100);
}

TEST(IdMap, SparseIdsAreFoundAndOnlyThey) {
  // 20 ids across a range of 10,000: hashed.
  std::vector<int64_t> ids;
  for (int64_t id = 7; id < 10'007; id += 500) ids.push_back(id);
  Map map(7, 10'006, ids.size());
  CheckAgainstStdMap(map, ids, 7, 10'006);
}

TEST(IdMap, IdsOutsideTheRangeToldStillWork) {
  std::vector<int64_t> ids = {-3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 50, 9, 2};
  Map map(0, 10, 11);
  CheckAgainstStdMap(map, ids, -3, 50);
}

TEST(IdMap, SetReplacesAValueAndAddsOne) {
  Map map(1, 4, 4);
  map.Set(2, 20);
  map.Set(2, 21);
  map.Set(9, 90);  // Outside the range.
  map.Set(9, 91);
  ASSERT_NE(map.Find(2), nullptr);
  EXPECT_EQ(*map.Find(2), 21);
  ASSERT_NE(map.Find(9), nullptr);
  EXPECT_EQ(*map.Find(9), 91);
  EXPECT_EQ(map.Find(1), nullptr);
  EXPECT_EQ(map.size(), 2u);
}

TEST(IdMap, SaysTheRangeItWasTold) {
  const Map map(-2, 40, 10);
  EXPECT_EQ(map.low(), -2);
  EXPECT_EQ(map.high(), 40);
  // A map of pointers by the same ids, null marking none.
  int value = 7;
  IdMap<const int*, nullptr> pointers(map.low(), map.high(), 20);  // In a vector.
  EXPECT_TRUE(pointers.TryEmplace(3, &value).second);
  EXPECT_FALSE(pointers.TryEmplace(3, &value).second);
  ASSERT_NE(pointers.Find(3), nullptr);
  EXPECT_EQ(**pointers.Find(3), 7);
  EXPECT_EQ(pointers.Find(4), nullptr);
}

TEST(IdMap, AnEmptyOrDefaultMapFindsNothing) {
  Map none;
  EXPECT_EQ(none.Find(0), nullptr);
  EXPECT_EQ(none.size(), 0u);
  const auto [value, added] = none.TryEmplace(5, 1);
  EXPECT_TRUE(added);
  EXPECT_EQ(*value, 1);
  // The widest range there is: hashed, not a vector over it.
  Map widest(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 3);
  CheckAgainstStdMap(
      widest, {std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::max()}, -2, 2);
}

}  // namespace
}  // namespace strata::util
