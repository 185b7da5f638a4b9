// vector/int8_element.h: the index's elements. The byte dot product is exact at every
// length (the SIMD body and the scalar tail), an element's distance to itself is 0, and the
// distance of two elements is 1 - the cosine of the vectors they came from, to within 0.01;
// a stored vector (vector/codec.h) becomes the same bytes again.

#include "vector/int8_element.h"
#include "testing/random_vectors.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "vector/codec.h"

namespace strata::vector {
namespace {

using ::strata::testing::RandomUnit;

std::vector<std::byte> ElementOf(const std::vector<float>& v) {
  std::vector<std::byte> element(Int8ElementBytes(v.size()));
  QuantizeInt8(v, element);
  return element;
}

float Distance(const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  const size_t dimension = a.size() - sizeof(float);
  return Int8Distance(a.data(), b.data(), &dimension);
}

TEST(Int8Element, ElementIsOneBytePerDimensionPlusAScale) {
  EXPECT_EQ(Int8ElementBytes(384), 388u);
  EXPECT_EQ(Int8ElementBytes(17), 21u);
}

TEST(Int8Element, DotBytesIsExactAtEveryLength) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> byte(-127, 127);
  for (const size_t n : {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 383, 384, 385, 1024}) {
    std::vector<int8_t> a(n), b(n);
    int32_t want = 0;
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<int8_t>(byte(rng));
      b[i] = static_cast<int8_t>(byte(rng));
      want += int32_t{a[i]} * b[i];
    }
    EXPECT_EQ(DotBytes(a.data(), b.data(), n), want) << n;
  }
  // The extremes, all lanes at once.
  const std::vector<int8_t> high(384, 127), low(384, -127);
  EXPECT_EQ(DotBytes(high.data(), low.data(), 384), -384 * 127 * 127);
}

TEST(Int8Element, DistanceIsOneMinusCosineWithinOneHundredth) {
  std::mt19937_64 rng(20261130);
  for (const size_t dim : {64, 384, 1024}) {
    for (int trial = 0; trial < 100; ++trial) {
      const std::vector<float> a = RandomUnit(rng, dim);
      std::vector<float> near = a;  // A neighbour: a plus a little noise, renormalized.
      const std::vector<float> noise = RandomUnit(rng, dim);
      double norm = 0;
      for (size_t i = 0; i < dim; ++i) {
        near[i] += 0.5f * noise[i];
        norm += double{near[i]} * near[i];
      }
      for (float& x : near) x = static_cast<float>(x / std::sqrt(norm));
      const std::vector<float> far = RandomUnit(rng, dim);
      const auto ea = ElementOf(a);
      EXPECT_NEAR(Distance(ea, ea), 0.0f, 1e-5) << dim;
      EXPECT_NEAR(Distance(ea, ElementOf(near)), 1.0f - Dot(a, near), 0.01) << dim;
      EXPECT_NEAR(Distance(ea, ElementOf(far)), 1.0f - Dot(a, far), 0.01) << dim;
    }
  }
}

TEST(Int8Element, ScaleDoesNotMatterOnlyDirection) {
  std::mt19937_64 rng(3);
  const std::vector<float> a = RandomUnit(rng, 384);
  std::vector<float> twice = a;
  for (float& x : twice) x *= 2.0f;
  EXPECT_EQ(ElementOf(a), ElementOf(twice));
}

TEST(Int8Element, AStoredVectorGivesTheSameBytesAgain) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    const std::vector<float> v = RandomUnit(rng, 384);
    const std::string blob = Encode(v);
    std::vector<float> decoded(384);
    ASSERT_TRUE(Decode(blob, decoded));
    const auto element = ElementOf(decoded);
    // Both round with RoundToBytes; only their float scales differ.
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(element.data()) + 4, 384), blob.substr(4));
  }
}

TEST(Int8Element, DotElementIsTheCosineWithTheStoredVector) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 50; ++trial) {
    const std::vector<float> query = RandomUnit(rng, 384);
    std::vector<float> stored(384);
    ASSERT_TRUE(Decode(Encode(RandomUnit(rng, 384)), stored));
    EXPECT_NEAR(DotElement(query, ElementOf(stored).data()), Dot(query, stored), 1e-5);
    EXPECT_NEAR(DotElement(stored, ElementOf(stored).data()), 1.0f, 1e-5);
  }
}

TEST(Int8Element, ZeroVectorIsAtDistanceOneFromEverything) {
  std::mt19937_64 rng(5);
  const auto zero = ElementOf(std::vector<float>(64, 0.0f));
  EXPECT_FLOAT_EQ(Distance(zero, ElementOf(RandomUnit(rng, 64))), 1.0f);
  EXPECT_FLOAT_EQ(Distance(zero, zero), 1.0f);
}

}  // namespace
}  // namespace strata::vector
