#include "dedup/band_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace strata::dedup {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<int64_t> Lookup(const BandMap& map, int64_t key) {
  std::vector<int64_t> ids;
  map.ForEach(key, [&](int64_t id) { ids.push_back(id); });
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(BandMapTest, AnEmptyMapHasNothing) {
  BandMap map;
  EXPECT_THAT(Lookup(map, 10), IsEmpty());
  map.Erase(10, 1);  // Nothing to erase is not an error.
  EXPECT_EQ(map.size(), 0u);
}

TEST(BandMapTest, AKeyHoldsEachMemoryOnce) {
  BandMap map;
  map.Insert(10, 1);
  map.Insert(10, 1);
  map.Insert(10, 2);
  map.Insert(20, 1);
  EXPECT_EQ(map.size(), 3u);
  EXPECT_THAT(Lookup(map, 10), ElementsAre(1, 2));
  EXPECT_THAT(Lookup(map, 20), ElementsAre(1));
  map.Erase(10, 1);
  EXPECT_THAT(Lookup(map, 10), ElementsAre(2));
  EXPECT_THAT(Lookup(map, 20), ElementsAre(1));
  map.Clear();
  EXPECT_THAT(Lookup(map, 10), IsEmpty());
  EXPECT_EQ(map.size(), 0u);
}

TEST(BandMapTest, TheLargestMemoryIdRoundTrips) {
  BandMap map;
  map.Insert(-1, BandMap::kMaxMemoryId);
  map.Insert(std::numeric_limits<int64_t>::min(), 1);
  EXPECT_THAT(Lookup(map, -1), ElementsAre(BandMap::kMaxMemoryId));
  EXPECT_THAT(Lookup(map, std::numeric_limits<int64_t>::min()), ElementsAre(1));
}

// Random inserts and erases through several growths, against a std::set of pairs: every
// key answers exactly the memories a reference holds (keys here are few, so fingerprints
// do not collide), which checks that deletion's backward shifts keep every run reachable.
TEST(BandMapTest, MatchesAReferenceUnderRandomInsertsAndErases) {
  std::mt19937_64 rng(7);
  BandMap map;
  std::set<std::pair<int64_t, int64_t>> reference;
  std::vector<int64_t> keys;
  for (int i = 0; i < 500; ++i) keys.push_back(static_cast<int64_t>(rng()));
  for (int step = 0; step < 60000; ++step) {
    const int64_t key = keys[rng() % keys.size()];
    const int64_t id = 1 + static_cast<int64_t>(rng() % 40);
    if (rng() % 3 == 0) {
      map.Erase(key, id);
      reference.erase({key, id});
    } else {
      map.Insert(key, id);
      reference.insert({key, id});
    }
    ASSERT_EQ(map.size(), reference.size()) << "step " << step;
  }
  std::map<int64_t, std::vector<int64_t>> expected;
  for (const auto& [key, id] : reference) expected[key].push_back(id);
  for (int64_t key : keys) EXPECT_EQ(Lookup(map, key), expected[key]) << "key " << key;
  // Then everything erased: the map is empty again.
  for (const auto& [key, id] : reference) map.Erase(key, id);
  EXPECT_EQ(map.size(), 0u);
  for (int64_t key : keys) EXPECT_THAT(Lookup(map, key), IsEmpty());
}

}  // namespace
}  // namespace strata::dedup
