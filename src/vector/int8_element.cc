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
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  // 64 bytes at a time: dpbusd multiplies unsigned by signed bytes and adds groups of four
  // into 32-bit lanes, so |a| times b with a's sign moved onto b (exact for bytes in
  // [-127, 127]).
  {
    const __m512i zero = _mm512_setzero_si512();
    __m512i acc = _mm512_setzero_si512();
    for (; i + 64 <= n; i += 64) {
      const __m512i va = _mm512_loadu_si512(a + i);
      const __m512i vb = _mm512_loadu_si512(b + i);
      const __m512i signed_b = _mm512_mask_sub_epi8(vb, _mm512_movepi8_mask(va), zero, vb);
      acc = _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(va), signed_b);
    }
    alignas(64) int32_t lanes[16];  // Not _mm512_reduce_add_epi32: GCC 12 warns inside it.
    _mm512_store_si512(lanes, acc);
    for (int32_t lane : lanes) sum += lane;
  }
#endif
#if defined(__AVX2__)
  // 32 bytes at a time: maddubs multiplies unsigned by signed bytes and adds pairs into 16-bit
  // lanes, so |a| times b with a's sign moved onto b; with bytes in [-127, 127] a pair sums to
  // at most 2 x 127 x 127 (no saturation). madd by ones widens to 32-bit lanes (no overflow
  // below 65,000 dimensions).
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc = _mm256_setzero_si256();
  for (; i + 32 <= n; i += 32) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
    const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(va), _mm256_sign_epi8(vb, va));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
  }
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  sum += _mm_cvtsi128_si32(s);
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
