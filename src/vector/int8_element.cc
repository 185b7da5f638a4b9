#include "vector/int8_element.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace strata::vector {

float RoundToBytes(std::span<const float> v, int8_t* out) {
  float max_abs = 0;
  for (float x : v) max_abs = std::max(max_abs, std::fabs(x));
  const float to_byte = max_abs > 0 ? 127.0f / max_abs : 0.0f;
  for (size_t i = 0; i < v.size(); ++i) {
    out[i] = static_cast<int8_t>(std::clamp(std::lround(v[i] * to_byte), -127L, 127L));
  }
  return max_abs;
}

void QuantizeInt8(std::span<const float> v, std::span<std::byte> out) {
  auto* q = reinterpret_cast<int8_t*>(out.data() + sizeof(float));
  RoundToBytes(v, q);
  int64_t norm2 = 0;
  for (size_t i = 0; i < v.size(); ++i) norm2 += int64_t{q[i]} * q[i];
  const float scale = norm2 > 0 ? static_cast<float>(1.0 / std::sqrt(double(norm2))) : 0.0f;
  std::memcpy(out.data(), &scale, sizeof(float));
}

int32_t DotBytes(const int8_t* a, const int8_t* b, size_t n) {
  int32_t sum = 0;
  size_t i = 0;
#if defined(__AVX2__)
  // 16 bytes at a time, widened to 16-bit lanes; madd multiplies and adds pairs into 32-bit
  // lanes (each at most 2 x 127 x 127 a step: no overflow below 65,000 dimensions).
  __m256i acc = _mm256_setzero_si256();
  for (; i + 16 <= n; i += 16) {
    const __m256i va =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256i vb =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(va, vb));
  }
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  sum = _mm_cvtsi128_si32(s);
#endif
  for (; i < n; ++i) sum += int32_t{a[i]} * b[i];
  return sum;
}

float DotElement(std::span<const float> v, const std::byte* element) {
  float scale;
  std::memcpy(&scale, element, sizeof(float));
  const auto* q = reinterpret_cast<const int8_t*>(element + sizeof(float));
  float sum = 0;
  for (size_t i = 0; i < v.size(); ++i) sum += v[i] * static_cast<float>(q[i]);
  return sum * scale;
}

float Int8Distance(const void* a, const void* b, const void* dimension) {
  const size_t n = *static_cast<const size_t*>(dimension);
  float scale_a, scale_b;
  std::memcpy(&scale_a, a, sizeof(float));
  std::memcpy(&scale_b, b, sizeof(float));
  const int32_t dot = DotBytes(static_cast<const int8_t*>(a) + sizeof(float),
                               static_cast<const int8_t*>(b) + sizeof(float), n);
  return 1.0f - scale_a * scale_b * static_cast<float>(dot);
}

}  // namespace strata::vector
