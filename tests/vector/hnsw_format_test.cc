// HnswIndex writes and reads hnswlib 0.6.2's index file itself (vector/hnsw_index.cc's
// WriteGraph and ReadGraph): here hnswlib's own loadIndex and saveIndex check that the bytes are
// that format, so files saved before and after either change load alike. hnswlib's header
// defines functions outside `inline`, so this test is its own executable, linked with
// --allow-multiple-definition (the copies are the same header's).

#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "hnswlib/hnswlib.h"
#include "testing/random_vectors.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "vector/hnsw_index.h"
#include "vector/int8_element.h"

namespace strata::vector {
namespace {

using ::strata::testing::ReadAll;

constexpr size_t kDim = 32;
constexpr size_t kPoints = 3000;
constexpr char kFingerprint[] = "test/1/32/";

// The space HnswIndex builds its graph in (hnsw_index.cc's Int8CosineSpace).
class Int8Space final : public hnswlib::SpaceInterface<float> {
 public:
  size_t get_data_size() override { return Int8ElementBytes(dimension_); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &Int8Distance; }
  void* get_dist_func_param() override { return &dimension_; }

 private:
  size_t dimension_ = kDim;
};

TEST(HnswFormatTest, HnswlibReadsWhatSaveWritesAndWritesItBackTheSame) {
  std::mt19937_64 rng(20261207);
  const std::vector<float> data = strata::testing::RandomUnitVectors(rng, kPoints, kDim);
  std::vector<int64_t> labels;
  for (size_t i = 0; i < kPoints; ++i) labels.push_back(static_cast<int64_t>(i) + 1);
  HnswIndex index(kDim);
  index.AddParallel(labels, data, 2);
  index.Remove(labels[7]);
  strata::testing::TempDir dir;
  const std::string path = dir.File("memory.db.hnsw");
  ASSERT_OK(index.Save(path, {.fingerprint = kFingerprint, .watermark = 1}));

  Int8Space space;
  hnswlib::HierarchicalNSW<float> graph(&space, path);
  EXPECT_EQ(graph.cur_element_count, kPoints);
  EXPECT_TRUE(graph.isMarkedDeleted(graph.label_lookup_.at(labels[7])));
  const std::string again = dir.File("hnswlib.hnsw");
  graph.saveIndex(again);
  const std::string saved = ReadAll(path);
  ASSERT_GT(saved.size(), kPoints * kDim);
  EXPECT_TRUE(saved == ReadAll(again)) << "hnswlib saves other bytes";
}

}  // namespace
}  // namespace strata::vector
