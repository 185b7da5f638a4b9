// vector::HnswIndex against brute force (recall@10 on seeded random unit vectors), label
// replacement, and its file: a save/load round trip, and every way a file can be refused
// (another space, truncation, garbage, a missing file) without a crash.

#include "vector/hnsw_index.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "testing/random_vectors.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "vector/codec.h"

namespace strata::vector {
namespace {

using ::strata::testing::RandomUnitVectors;
using ::strata::testing::ReadAll;
using ::strata::testing::WriteAll;

using ::strata::testing::StatusIs;
using ::testing::_;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::HasSubstr;

constexpr int kDim = 64;
constexpr char kFingerprint[] = "test/1/64/";

std::span<const float> Row(const std::vector<float>& vectors, size_t i, int dim = kDim) {
  return std::span<const float>(vectors.data() + i * dim, dim);
}

// Rows i .. i + n - 1, one after the other.
std::span<const float> Rows(const std::vector<float>& vectors, size_t i, size_t n) {
  return std::span<const float>(vectors).subspan(i * kDim, n * kDim);
}

// The labels of the `k` most similar rows of `data` (label = row index + 1), exactly.
std::vector<int64_t> BruteForce(const std::vector<float>& data, std::span<const float> query,
                                size_t k) {
  const size_t n = data.size() / kDim;
  std::vector<std::pair<float, int64_t>> scored;
  scored.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    scored.emplace_back(Dot(Row(data, i), query), static_cast<int64_t>(i) + 1);
  }
  std::partial_sort(scored.begin(), scored.begin() + k, scored.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int64_t> labels;
  for (size_t i = 0; i < k; ++i) labels.push_back(scored[i].second);
  return labels;
}

std::vector<int64_t> Labels(const std::vector<Neighbor>& neighbors) {
  std::vector<int64_t> labels;
  for (const Neighbor& n : neighbors) labels.push_back(n.label);
  return labels;
}

// Fraction of the true top-k found by the index over `queries`.
double RecallAtK(const HnswIndex& index, const std::vector<float>& data,
                 const std::vector<float>& queries, size_t k) {
  const size_t nq = queries.size() / kDim;
  size_t found = 0;
  for (size_t q = 0; q < nq; ++q) {
    const std::vector<int64_t> truth = BruteForce(data, Row(queries, q), k);
    const std::vector<int64_t> got = Labels(index.Search(Row(queries, q), k));
    for (int64_t label : truth) found += std::count(got.begin(), got.end(), label);
  }
  return static_cast<double>(found) / static_cast<double>(nq * k);
}

class HnswIndexTest : public ::testing::Test {
 protected:
  static constexpr size_t kPoints = 5000;
  static constexpr size_t kQueries = 100;

  void SetUp() override {
    std::mt19937_64 rng(20260301);
    data_ = RandomUnitVectors(rng, kPoints, kDim);
    queries_ = RandomUnitVectors(rng, kQueries, kDim);
    for (size_t i = 0; i < kPoints; ++i) labels_.push_back(static_cast<int64_t>(i) + 1);
  }

  // An index of data_, label = row + 1.
  std::unique_ptr<HnswIndex> Build(bool parallel) const {
    auto index = std::make_unique<HnswIndex>(kDim);
    if (parallel) {
      index->AddParallel(labels_, data_, 2);
    } else {
      for (size_t i = 0; i < kPoints; ++i) index->Add(labels_[i], Row(data_, i));
    }
    return index;
  }

  strata::testing::TempDir dir_;
  std::string path_ = dir_.File("memory.db.hnsw");
  std::vector<float> data_;
  std::vector<float> queries_;
  std::vector<int64_t> labels_;
};

TEST_F(HnswIndexTest, RecallAtTenAgainstBruteForceAddedOneByOne) {
  const std::unique_ptr<HnswIndex> index = Build(/*parallel=*/false);
  EXPECT_EQ(index->size(), kPoints);
  const double recall = RecallAtK(*index, data_, queries_, 10);
  EXPECT_GE(recall, 0.95) << "recall@10 " << recall;
}

TEST_F(HnswIndexTest, RecallAtTenAgainstBruteForceAddedInParallel) {
  const std::unique_ptr<HnswIndex> index = Build(/*parallel=*/true);
  EXPECT_EQ(index->size(), kPoints);
  const double recall = RecallAtK(*index, data_, queries_, 10);
  EXPECT_GE(recall, 0.95) << "recall@10 " << recall;
}

TEST_F(HnswIndexTest, AnIndexBuiltFromAnothersLinksFindsAsMuch) {
  // The first index as an embedding worker builds it, a batch at a time, reading each batch's
  // links after it; the second as another process catches up: all at once, on two threads
  // (links to vectors still being inserted are searched for instead).
  HnswIndex first(kDim);
  std::vector<std::vector<int64_t>> links(kPoints);
  constexpr size_t kBatch = 64;
  for (size_t at = 0; at < kPoints; at += kBatch) {
    const size_t n = std::min(kBatch, kPoints - at);
    first.AddParallel(std::span(labels_).subspan(at, n), Rows(data_, at, n), 1);
    for (size_t i = at; i < at + n; ++i) links[i] = first.Links(labels_[i]);
  }
  EXPECT_THAT(links.back(), Not(IsEmpty()));
  HnswIndex second(kDim);
  second.AddParallel(labels_, data_, 2, links);
  EXPECT_EQ(second.size(), kPoints);
  const double recall = RecallAtK(second, data_, queries_, 10);
  EXPECT_GE(recall, 0.95) << "recall@10 " << recall << ", first index's "
                          << RecallAtK(first, data_, queries_, 10);
}

TEST_F(HnswIndexTest, AVectorIsLinkedAsItsLinksSayWithoutASearch) {
  HnswIndex index(kDim);
  index.AddParallel(std::span(labels_).first(1000), Rows(data_, 0, 1000), 1);
  // Each new vector linked to label 7 alone, which a search would seldom choose: those drawn
  // for the lowest layer (all but ~1 in kM) link to it.
  constexpr size_t kNew = 20;
  const std::vector<std::vector<int64_t>> links(kNew, std::vector<int64_t>{7});
  index.AddParallel(std::span(labels_).subspan(1000, kNew), Rows(data_, 1000, kNew), 1, links);
  int linked = 0;
  for (size_t i = 1000; i < 1000 + kNew; ++i) {
    const std::vector<int64_t> got = index.Links(labels_[i]);
    linked += std::find(got.begin(), got.end(), 7) != got.end();
  }
  EXPECT_GE(linked, 15);
  EXPECT_EQ(index.size(), 1000 + kNew);
}

TEST_F(HnswIndexTest, AVectorLinkedToALabelNotHeldIsSearchedFor) {
  HnswIndex index(kDim);
  index.AddParallel(std::span(labels_).first(1000), Rows(data_, 0, 1000), 1);
  const std::vector<std::vector<int64_t>> links = {{labels_[3], 999999}};
  index.AddParallel(std::span(labels_).subspan(1000, 1), Rows(data_, 1000, 1), 1, links);
  const std::vector<int64_t> got = index.Links(labels_[1000]);
  EXPECT_THAT(got, Not(IsEmpty()));
  EXPECT_THAT(got, Not(Contains(999999)));
  EXPECT_THAT(Labels(index.Search(Row(data_, 1000), 1)), ElementsAre(labels_[1000]));
  EXPECT_THAT(index.Links(999999), IsEmpty());
}

TEST_F(HnswIndexTest, SearchesRunBetweenTheInsertsOfABatch) {
  HnswIndex index(kDim);
  index.AddParallel(std::span(labels_).first(1000), std::span(data_).first(1000 * kDim), 2);
  // The rest goes in on two threads while another thread searches for vectors held from the
  // start: each search sees them, whatever the inserts in flight.
  std::atomic<bool> done{false};
  std::atomic<int> searches{0}, misses{0};
  std::jthread searcher([&] {
    for (size_t i = 0; !done; i = (i + 7) % 1000) {
      const std::vector<Neighbor> hits = index.Search(Row(data_, i), 1);
      misses += hits.empty() || hits[0].label != labels_[i];
      ++searches;
    }
  });
  index.AddParallel(std::span(labels_).subspan(1000), std::span(data_).subspan(1000 * kDim), 2);
  // The batch is done; a few more searches, so some ran after it too.
  const int at_end = searches;
  while (searches < at_end + 10) std::this_thread::yield();
  done = true;
  searcher.join();
  EXPECT_EQ(index.size(), kPoints);
  EXPECT_GT(searches.load(), 10);
  EXPECT_EQ(misses.load(), 0) << "of " << searches.load() << " searches";
  EXPECT_GE(RecallAtK(index, data_, queries_, 10), 0.95);
}

TEST_F(HnswIndexTest, ALabelTwiceInOneBatchIsAddedOnce) {
  HnswIndex index(kDim);
  const std::vector<int64_t> labels = {labels_[0], labels_[1], labels_[0]};
  std::vector<float> vectors;
  for (size_t row : {0, 1, 2}) {
    const std::span<const float> v = Row(data_, row);
    vectors.insert(vectors.end(), v.begin(), v.end());
  }
  index.AddParallel(labels, vectors, 2);
  EXPECT_EQ(index.size(), 2u);
  // The first of the two is the one kept.
  EXPECT_EQ(index.Search(Row(data_, 0), 1)[0].label, labels_[0]);
  EXPECT_NEAR(index.Search(Row(data_, 0), 1)[0].similarity, 1.0f, 1e-3);
}

TEST_F(HnswIndexTest, StoredVectorsAreFoundFirstWithTheirSimilarity) {
  const std::unique_ptr<HnswIndex> index = Build(/*parallel=*/true);
  int self_first = 0;
  for (size_t i = 0; i < kPoints; i += 50) {
    const std::vector<Neighbor> got = index->Search(Row(data_, i), 3);
    ASSERT_EQ(got.size(), 3u);
    if (got[0].label == labels_[i]) {
      ++self_first;
      EXPECT_NEAR(got[0].similarity, 1.0f, 1e-4);
    }
    // Closest first, and the similarity is the cosine of the stored vector (of its one byte
    // per dimension: vector/int8_element.h; these test vectors are not quantized already, as
    // stored ones are).
    EXPECT_GE(got[0].similarity, got[1].similarity);
    EXPECT_GE(got[1].similarity, got[2].similarity);
    EXPECT_NEAR(got[1].similarity, Dot(Row(data_, got[1].label - 1), Row(data_, i)), 0.01);
  }
  EXPECT_GE(self_first, 98);  // Of 100.
}

TEST_F(HnswIndexTest, SearchReturnsAtMostWhatItHolds) {
  HnswIndex index(kDim);
  EXPECT_TRUE(index.Search(Row(queries_, 0), 10).empty());
  for (size_t i = 0; i < 5; ++i) index.Add(labels_[i], Row(data_, i));
  EXPECT_EQ(index.Search(Row(queries_, 0), 10).size(), 5u);
  EXPECT_TRUE(index.Search(Row(queries_, 0), 0).empty());
  EXPECT_EQ(index.dimension(), kDim);
}

TEST_F(HnswIndexTest, GrowsPastItsInitialCapacity) {
  HnswIndex index(kDim);
  for (size_t i = 0; i < 3000; ++i) index.Add(labels_[i], Row(data_, i));
  EXPECT_EQ(index.size(), 3000u);
  const std::vector<Neighbor> got = index.Search(Row(data_, 2999), 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].label, labels_[2999]);
}

TEST_F(HnswIndexTest, AddLeavesAHeldLabelAsItIs) {
  // A label is a version, whose vector never changes: the same version given again (two
  // processes embedding it at once) is not an update.
  HnswIndex index(kDim);
  for (size_t i = 0; i < 200; ++i) index.Add(labels_[i], Row(data_, i));
  index.Add(labels_[6], Row(data_, 4000));
  index.AddParallel(std::vector<int64_t>{labels_[7], labels_[8]}, Rows(data_, 4001, 2), 2);
  EXPECT_EQ(index.size(), 200u);
  for (size_t i : {6, 7, 8}) {
    const std::vector<Neighbor> got = index.Search(Row(data_, i), 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].label, labels_[i]);
    EXPECT_NEAR(got[0].similarity, 1.0f, 1e-4);
  }
  for (const Neighbor& n : index.Search(Row(data_, 4000), 5)) EXPECT_LT(n.similarity, 0.99f);
}

TEST_F(HnswIndexTest, AddAfterRemoveTakesTheNewVector) {
  // Only a database from before schema 5 gives a purged version's id to a new version.
  HnswIndex index(kDim);
  for (size_t i = 0; i < 200; ++i) index.Add(labels_[i], Row(data_, i));
  index.Remove(labels_[6]);
  index.Add(labels_[6], Row(data_, 4000));
  EXPECT_EQ(index.size(), 200u);
  const std::vector<Neighbor> got = index.Search(Row(data_, 4000), 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].label, labels_[6]);
  EXPECT_NEAR(got[0].similarity, 1.0f, 1e-4);
}

TEST_F(HnswIndexTest, SaveThenLoadGivesTheSameSearchResults) {
  const std::unique_ptr<HnswIndex> index = Build(/*parallel=*/true);
  ASSERT_OK(index->Save(path_, {.fingerprint = kFingerprint, .watermark = 5000}));
  ASSERT_OK_AND_ASSIGN(auto loaded, HnswIndex::Load(path_, kFingerprint, kDim));
  const auto& [copy, meta] = loaded;
  EXPECT_EQ(meta.fingerprint, kFingerprint);
  EXPECT_EQ(meta.watermark, 5000);
  EXPECT_EQ(copy->size(), index->size());
  EXPECT_EQ(copy->dimension(), kDim);
  for (size_t q = 0; q < kQueries; ++q) {
    const std::vector<Neighbor> want = index->Search(Row(queries_, q), 10);
    const std::vector<Neighbor> got = copy->Search(Row(queries_, q), 10);
    ASSERT_EQ(Labels(got), Labels(want)) << "query " << q;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].similarity, want[i].similarity);
  }
}

void ExpectSameChance(const HnswIndex& a, const HnswIndex& b, const std::vector<float>& queries) {
  for (size_t q = 0; q < queries.size() / kDim; ++q) {
    const ChanceLevel want = a.Chance(Row(queries, q));
    const ChanceLevel got = b.Chance(Row(queries, q));
    EXPECT_EQ(got.mean, want.mean) << "query " << q;
    EXPECT_EQ(got.sd, want.sd) << "query " << q;
    EXPECT_EQ(got.population, want.population) << "query " << q;
  }
}

// The chance sample depends on which labels the index holds, not on the order they came in:
// a restart, a reload or a rebuild of the same store gives each query the same chance level.
TEST_F(HnswIndexTest, ChanceIsTheSameWhateverOrderTheVectorsCameIn) {
  const std::unique_ptr<HnswIndex> in_order = Build(/*parallel=*/false);
  HnswIndex reversed(kDim);
  for (size_t end = kPoints; end > 0; end -= 1000) {
    std::vector<int64_t> labels(labels_.begin() + end - 1000, labels_.begin() + end);
    std::reverse(labels.begin(), labels.end());
    std::vector<float> vectors;
    for (int64_t label : labels) {
      const std::span<const float> v = Row(data_, label - 1);
      vectors.insert(vectors.end(), v.begin(), v.end());
    }
    reversed.AddParallel(labels, vectors, 2);
  }
  ExpectSameChance(*in_order, reversed, queries_);
  EXPECT_EQ(in_order->Chance(Row(queries_, 0)).population, kPoints);
}

TEST_F(HnswIndexTest, ChanceIsTheSameAfterSaveAndLoad) {
  const std::unique_ptr<HnswIndex> index = Build(/*parallel=*/true);
  index->Remove(labels_[0]);
  ASSERT_OK(index->Save(path_, {.fingerprint = kFingerprint, .watermark = 5000}));
  ASSERT_OK_AND_ASSIGN(auto loaded, HnswIndex::Load(path_, kFingerprint, kDim));
  ExpectSameChance(*index, *loaded.first, queries_);
}

// Load reads hnswlib's file format itself (in one pass): what it loads, saved again, is the
// same file byte for byte, upper levels, removed vectors and spare capacity included.
TEST_F(HnswIndexTest, ALoadedIndexSavesTheSameBytes) {
  const std::unique_ptr<HnswIndex> index = Build(/*parallel=*/true);
  index->Remove(labels_[0]);
  index->Remove(labels_[kPoints / 2]);
  ASSERT_OK(index->Save(path_, {.fingerprint = kFingerprint, .watermark = 5000}));
  ASSERT_OK_AND_ASSIGN(auto loaded, HnswIndex::Load(path_, kFingerprint, kDim));
  const std::string again = path_ + ".again";
  ASSERT_OK(loaded.first->Save(again, loaded.second));
  const std::string saved = ReadAll(path_);
  ASSERT_GT(saved.size(), kPoints * kDim);
  EXPECT_TRUE(saved == ReadAll(again)) << "the second save differs";
  EXPECT_EQ(loaded.first->size(), index->size());
}

TEST_F(HnswIndexTest, ChanceWithoutRemovedVectorsIsThatOfAnIndexNeverGivenThem) {
  const std::unique_ptr<HnswIndex> index = Build(/*parallel=*/true);
  for (size_t i = 0; i < kPoints / 2; ++i) index->Remove(labels_[i]);
  HnswIndex second_half(kDim);
  second_half.AddParallel(std::span(labels_).subspan(kPoints / 2),
                          Rows(data_, kPoints / 2, kPoints / 2), 2);
  ExpectSameChance(*index, second_half, queries_);
  EXPECT_EQ(index->Chance(Row(queries_, 0)).population, kPoints / 2);
}

TEST_F(HnswIndexTest, ChanceOfASmallIndexIsOverEveryVector) {
  HnswIndex index(kDim);
  for (size_t i = 0; i < 50; ++i) index.Add(labels_[i], Row(data_, i));
  const std::vector<Neighbor> all = index.Search(Row(queries_, 0), 50);
  ASSERT_EQ(all.size(), 50u);
  double sum = 0;
  for (const Neighbor& n : all) sum += n.similarity;
  const ChanceLevel chance = index.Chance(Row(queries_, 0));
  // Chance compares the query's bytes, as the graph does; Search rescored the query itself.
  EXPECT_NEAR(chance.mean, sum / 50, 1e-3);
  EXPECT_GT(chance.sd, 0);
  EXPECT_EQ(chance.population, 50u);
}

TEST_F(HnswIndexTest, LoadedIndexAcceptsNewAndReaddedVectors) {
  {
    HnswIndex index(kDim);
    for (size_t i = 0; i < 100; ++i) index.Add(labels_[i], Row(data_, i));
    ASSERT_OK(index.Save(path_, {.fingerprint = kFingerprint, .watermark = 100}));
  }
  ASSERT_OK_AND_ASSIGN(auto loaded, HnswIndex::Load(path_, kFingerprint, kDim));
  HnswIndex& index = *loaded.first;
  // Loaded at exactly its size: the next Add must grow it.
  for (size_t i = 100; i < 300; ++i) index.Add(labels_[i], Row(data_, i));
  index.Remove(labels_[5]);
  index.Add(labels_[5], Row(data_, 4500));
  EXPECT_EQ(index.size(), 300u);
  for (size_t i : {0, 150, 299}) {
    const std::vector<Neighbor> got = index.Search(Row(data_, i), 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].label, labels_[i]);
  }
  const std::vector<Neighbor> replaced = index.Search(Row(data_, 4500), 1);
  ASSERT_EQ(replaced.size(), 1u);
  EXPECT_EQ(replaced[0].label, labels_[5]);
}

TEST_F(HnswIndexTest, EmptyIndexSavesLoadsAndGrows) {
  // What a first start with no vectors writes, and the next start loads.
  {
    HnswIndex empty(kDim);
    ASSERT_OK(empty.Save(path_, {.fingerprint = kFingerprint, .watermark = 0}));
  }
  ASSERT_OK_AND_ASSIGN(auto loaded, HnswIndex::Load(path_, kFingerprint, kDim));
  HnswIndex& index = *loaded.first;
  EXPECT_EQ(index.size(), 0u);
  EXPECT_TRUE(index.Search(Row(queries_, 0), 10).empty());
  for (size_t i = 0; i < 50; ++i) index.Add(labels_[i], Row(data_, i));
  EXPECT_EQ(index.size(), 50u);
  const std::vector<Neighbor> got = index.Search(Row(data_, 20), 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].label, labels_[20]);
}

TEST_F(HnswIndexTest, SaveReplacesAnEarlierFile) {
  HnswIndex first(kDim);
  first.Add(1, Row(data_, 0));
  ASSERT_OK(first.Save(path_, {.fingerprint = kFingerprint, .watermark = 1}));
  HnswIndex second(kDim);
  for (size_t i = 0; i < 10; ++i) second.Add(labels_[i], Row(data_, i));
  ASSERT_OK(second.Save(path_, {.fingerprint = kFingerprint, .watermark = 10}));
  ASSERT_OK_AND_ASSIGN(auto loaded, HnswIndex::Load(path_, kFingerprint, kDim));
  EXPECT_EQ(loaded.first->size(), 10u);
  EXPECT_EQ(loaded.second.watermark, 10);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".meta.tmp"));
}

// Two saves to one path at once (two processes on one store, both rebuilding at start or both
// saving at shutdown) must never publish one save's graph under the other's meta: that file
// would load without complaint with a watermark that does not describe it. With fixed
// temporary names it happened within a few rounds; Save now writes through names of its own.
// Probabilistic: it stops at the first such pairing.
TEST_F(HnswIndexTest, ConcurrentSavesNeverPairAGraphWithTheOtherSavesMeta) {
  constexpr size_t kSmall = 500;
  HnswIndex low(kDim);   // Labels 1..500, saved with watermark 1.
  HnswIndex high(kDim);  // Labels 100001..100500, saved with watermark 2.
  for (size_t i = 0; i < kSmall; ++i) {
    low.Add(labels_[i], Row(data_, i));
    high.Add(100000 + labels_[i], Row(data_, i));
  }
  int pairings = 0;
  for (int round = 0; round < 200 && pairings == 0; ++round) {
    std::filesystem::remove(path_);
    std::filesystem::remove(path_ + ".meta");
    {
      std::jthread a([&] { (void)low.Save(path_, {.fingerprint = kFingerprint, .watermark = 1}); });
      std::jthread b(
          [&] { (void)high.Save(path_, {.fingerprint = kFingerprint, .watermark = 2}); });
    }
    absl::StatusOr<std::pair<std::unique_ptr<HnswIndex>, IndexMeta>> loaded =
        HnswIndex::Load(path_, kFingerprint, kDim);
    if (!loaded.ok()) continue;  // Refusing a torn pair is fine: the index is rebuilt.
    const std::vector<Neighbor> got = loaded->first->Search(Row(data_, 0), 1);
    ASSERT_EQ(got.size(), 1u);
    const int64_t graph_of = got[0].label > 100000 ? 2 : 1;
    if (graph_of != loaded->second.watermark) {
      ++pairings;
      ADD_FAILURE() << "round " << round << ": the graph saved with watermark " << graph_of
                    << " loaded with watermark " << loaded->second.watermark;
    }
  }
  EXPECT_EQ(pairings, 0);
}

// ---------------------------------------------------------------------------------------------
// Files that must be refused.

class HnswIndexFileTest : public HnswIndexTest {
 protected:
  void SetUp() override {
    HnswIndexTest::SetUp();
    HnswIndex index(kDim);
    for (size_t i = 0; i < 500; ++i) index.Add(labels_[i], Row(data_, i));
    ASSERT_OK(index.Save(path_, {.fingerprint = kFingerprint, .watermark = 500}));
    ASSERT_OK(HnswIndex::Load(path_, kFingerprint, kDim));
  }
};

// The checksum a meta file holds, as the format defines it: 8 bytes at a time (a
// little-endian word, multiply-xor), then the last size % 8 one at a time.
uint64_t FormatChecksum(const std::string& bytes) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ULL;
  return h;
}

// Load reads and checksums the file in one pass, growing the graph to the file's capacity
// only once the checksum holds; a capacity far past the elements held loads too, and saves
// the same bytes.
TEST_F(HnswIndexFileTest, ALargeCapacityLoadsOnceTheChecksumHolds) {
  std::string bytes = ReadAll(path_);
  nlohmann::json meta = nlohmann::json::parse(ReadAll(path_ + ".meta"));
  EXPECT_EQ(meta["checksum"].get<std::string>(), std::to_string(FormatChecksum(bytes)));
  // hnswlib's header: offsetLevel0_, then max_elements_ (the capacity), then the count.
  uint64_t count = 0;
  std::memcpy(&count, bytes.data() + 16, 8);
  ASSERT_EQ(count, 500u);
  const uint64_t capacity = 4 * count + 5000;
  std::memcpy(bytes.data() + 8, &capacity, 8);
  WriteAll(path_, bytes);
  EXPECT_THAT(HnswIndex::Load(path_, kFingerprint, kDim),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("checksum mismatch")));
  meta["checksum"] = std::to_string(FormatChecksum(bytes));
  WriteAll(path_ + ".meta", meta.dump());
  ASSERT_OK_AND_ASSIGN(auto loaded, HnswIndex::Load(path_, kFingerprint, kDim));
  EXPECT_EQ(loaded.first->size(), 500u);
  const std::string again = path_ + ".again";
  ASSERT_OK(loaded.first->Save(again, loaded.second));
  EXPECT_TRUE(ReadAll(again) == bytes) << "the second save differs";
}

TEST_F(HnswIndexFileTest, AnotherFingerprintIsFailedPrecondition) {
  EXPECT_THAT(HnswIndex::Load(path_, "test/1/128/", 128),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr(kFingerprint)));
  EXPECT_THAT(HnswIndex::Load(path_, "builtin/1/64/ngram=0.25", kDim),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
}

TEST_F(HnswIndexFileTest, TruncatedFileIsFailedPrecondition) {
  const std::string bytes = ReadAll(path_);
  ASSERT_GT(bytes.size(), 1000u);
  for (const size_t keep :
       {bytes.size() - 1, bytes.size() / 2, size_t{100}, size_t{7}, size_t{0}}) {
    WriteAll(path_, bytes.substr(0, keep));
    EXPECT_THAT(HnswIndex::Load(path_, kFingerprint, kDim),
                StatusIs(absl::StatusCode::kFailedPrecondition, _))
        << "kept " << keep << " bytes";
  }
}

TEST_F(HnswIndexFileTest, GarbageBytesAreFailedPrecondition) {
  const std::string bytes = ReadAll(path_);
  std::mt19937_64 rng(5);
  // The same length with a few bytes changed, in the header and in the middle.
  for (const size_t at : {size_t{0}, size_t{8}, size_t{16}, bytes.size() / 2, bytes.size() - 1}) {
    std::string changed = bytes;
    changed[at] = static_cast<char>(changed[at] ^ 0x5a);
    WriteAll(path_, changed);
    EXPECT_THAT(HnswIndex::Load(path_, kFingerprint, kDim),
                StatusIs(absl::StatusCode::kFailedPrecondition, _))
        << "byte " << at;
  }
  // Entirely random bytes of the same length.
  std::string random(bytes.size(), '\0');
  for (char& c : random) c = static_cast<char>(rng());
  WriteAll(path_, random);
  EXPECT_THAT(HnswIndex::Load(path_, kFingerprint, kDim),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  // Longer than it was.
  WriteAll(path_, bytes + "trailing");
  EXPECT_THAT(HnswIndex::Load(path_, kFingerprint, kDim),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
}

TEST_F(HnswIndexFileTest, GarbageMetaIsFailedPrecondition) {
  const std::string meta = ReadAll(path_ + ".meta");
  const std::string bad[] = {
      "",
      "not json at all \x01\x02\xff",
      "[1, 2, 3]",
      "{}",
      meta.substr(0, meta.size() / 2),
      R"({"format": 99, "fingerprint": "test/1/64/", "watermark": 0, "bytes": 1, )"
      R"("checksum": "1"})",
  };
  for (const std::string& contents : bad) {
    WriteAll(path_ + ".meta", contents);
    EXPECT_THAT(HnswIndex::Load(path_, kFingerprint, kDim),
                StatusIs(absl::StatusCode::kFailedPrecondition, _))
        << contents;
  }
}

// A meta field of another JSON type is FailedPrecondition, never an exception (at startup
// Load runs on the worker thread, where an exception would std::terminate the process).
TEST_F(HnswIndexFileTest, MetaWithAFieldOfTheWrongTypeIsFailedPrecondition) {
  const nlohmann::json meta = nlohmann::json::parse(ReadAll(path_ + ".meta"));
  ASSERT_TRUE(meta.is_object());
  // The real meta with one field's value replaced by one of another JSON type.
  for (const auto& [field, value] : meta.items()) {
    nlohmann::json changed = meta;
    changed[field] = value.is_string() ? nlohmann::json(7) : nlohmann::json(value.dump());
    WriteAll(path_ + ".meta", changed.dump());
    absl::StatusOr<std::pair<std::unique_ptr<HnswIndex>, IndexMeta>> loaded =
        absl::InternalError("threw");
    EXPECT_NO_THROW(loaded = HnswIndex::Load(path_, kFingerprint, kDim)) << changed.dump();
    EXPECT_THAT(loaded, StatusIs(absl::StatusCode::kFailedPrecondition, _)) << changed.dump();
  }
}

TEST_F(HnswIndexFileTest, MissingFileIsNotFound) {
  std::filesystem::remove(path_);
  std::filesystem::remove(path_ + ".meta");
  EXPECT_THAT(HnswIndex::Load(path_, kFingerprint, kDim), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_THAT(HnswIndex::Load(dir_.File("never-written.hnsw"), kFingerprint, kDim),
              StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_F(HnswIndexFileTest, IndexWithoutItsMetaIsNotLoaded) {
  std::filesystem::remove(path_ + ".meta");
  EXPECT_THAT(HnswIndex::Load(path_, kFingerprint, kDim), StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_F(HnswIndexFileTest, MetaWithoutItsIndexIsNotLoaded) {
  std::filesystem::remove(path_);
  const absl::StatusCode code = HnswIndex::Load(path_, kFingerprint, kDim).status().code();
  EXPECT_TRUE(code == absl::StatusCode::kNotFound || code == absl::StatusCode::kFailedPrecondition)
      << code;
}

}  // namespace
}  // namespace strata::vector
