// vector::Encode / Decode / Dot: the stored form of a unit vector keeps its cosine similarity
// to within 0.01, decodes to unit length, and a blob of another dimension is refused.

#include "vector/codec.h"
#include "testing/random_vectors.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace strata::vector {
namespace {

using ::strata::testing::RandomUnit;

double Norm(const std::vector<float>& v) { return std::sqrt(double{Dot(v, v)}); }

TEST(Codec, BlobIsOneBytePerDimensionPlusAScale) {
  std::mt19937_64 rng(1);
  EXPECT_EQ(Encode(RandomUnit(rng, 384)).size(), 388u);
  EXPECT_EQ(Encode(RandomUnit(rng, 64)).size(), 68u);
}

TEST(Codec, RoundTripKeepsCosineWithinOneHundredth) {
  std::mt19937_64 rng(20260301);
  for (const int dim : {64, 128, 384, 1024}) {
    for (int trial = 0; trial < 200; ++trial) {
      const std::vector<float> a = RandomUnit(rng, dim);
      const std::vector<float> b = RandomUnit(rng, dim);
      std::vector<float> da(dim), db(dim);
      ASSERT_TRUE(Decode(Encode(a), da));
      ASSERT_TRUE(Decode(Encode(b), db));
      // Against itself, against another random vector, and against a near neighbour.
      EXPECT_NEAR(Dot(da, a), 1.0, 0.01) << dim;
      EXPECT_NEAR(Dot(da, db), Dot(a, b), 0.01) << dim;
      EXPECT_NEAR(Dot(da, b), Dot(a, b), 0.01) << dim;
      EXPECT_NEAR(Norm(da), 1.0, 1e-5) << dim;
    }
  }
}

TEST(Codec, RoundTripKeepsCosineOfCloseVectors) {
  std::mt19937_64 rng(7);
  constexpr int kDim = 384;
  std::normal_distribution<float> noise(0, 0.05f);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<float> a = RandomUnit(rng, kDim);
    std::vector<float> b = a;
    double norm = 0;
    for (float& x : b) {
      x += noise(rng) / std::sqrt(float{kDim});
      norm += double{x} * x;
    }
    for (float& x : b) x = static_cast<float>(x / std::sqrt(norm));
    std::vector<float> da(kDim), db(kDim);
    ASSERT_TRUE(Decode(Encode(a), da));
    ASSERT_TRUE(Decode(Encode(b), db));
    EXPECT_NEAR(Dot(da, db), Dot(a, b), 0.01);
  }
}

TEST(Codec, SparseVectorWithOneLargeComponentSurvives) {
  // The scale comes from the largest component: the others must not all round to zero.
  std::vector<float> v(64, 0.0f);
  v[3] = 0.8f;
  v[10] = 0.6f;
  std::vector<float> out(64);
  ASSERT_TRUE(Decode(Encode(v), out));
  EXPECT_NEAR(out[3], 0.8f, 0.01);
  EXPECT_NEAR(out[10], 0.6f, 0.01);
  EXPECT_NEAR(Dot(out, v), 1.0, 0.01);
}

TEST(Codec, ZeroVectorDecodesToZero) {
  const std::vector<float> zero(128, 0.0f);
  std::vector<float> out(128, 1.0f);
  ASSERT_TRUE(Decode(Encode(zero), out));
  for (float x : out) ASSERT_EQ(x, 0.0f);
}

TEST(Codec, WrongSizeBlobIsRefused) {
  std::mt19937_64 rng(3);
  const std::string blob = Encode(RandomUnit(rng, 128));
  std::vector<float> out(384);
  EXPECT_FALSE(Decode(blob, out));
  std::vector<float> smaller(64);
  EXPECT_FALSE(Decode(blob, smaller));
  std::vector<float> right(128);
  EXPECT_TRUE(Decode(blob, right));
  EXPECT_FALSE(Decode(blob.substr(0, blob.size() - 1), right));
  EXPECT_FALSE(Decode(blob + "x", right));
  EXPECT_FALSE(Decode("", right));
  EXPECT_FALSE(Decode("abc", right));  // Shorter than the scale itself.
}

TEST(Codec, DotIsTheInnerProduct) {
  const std::vector<float> a = {1, 2, 3};
  const std::vector<float> b = {4, -5, 6};
  EXPECT_FLOAT_EQ(Dot(a, b), 12.0f);
}

}  // namespace
}  // namespace strata::vector
