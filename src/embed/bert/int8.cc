#include "embed/bert/int8.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace strata::embed::bert {
namespace {

constexpr int kAlign = 32;
// Weight rows kept hot in cache while every token row passes over them.
constexpr int kBlockRows = 64;

int Padded(int cols) { return (cols + kAlign - 1) / kAlign * kAlign; }

// Each row of x[rows x cols] to int8 in q[rows x stride] (zero-padded), scale in scales.
void QuantizeActivations(const float* x, int rows, int cols, int stride, int8_t* q, float* scales) {
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<long>(r) * cols;
    float top = 0;
    for (int c = 0; c < cols; ++c) top = std::max(top, std::abs(row[c]));
    const float scale = top > 0 ? top / 127 : 1.0f;
    const float inverse = 1.0f / scale;
    int8_t* out = q + static_cast<long>(r) * stride;
    for (int c = 0; c < cols; ++c) {
      out[c] = static_cast<int8_t>(std::lrintf(row[c] * inverse));
    }
    std::fill(out + cols, out + stride, int8_t{0});
    scales[r] = scale;
  }
}

int32_t DotPlain(const int8_t* a, const int8_t* b, int n) {
  int32_t sum = 0;
  for (int i = 0; i < n; ++i) sum += int32_t{a[i]} * b[i];
  return sum;
}

void KernelPlain(const int8_t* xq, const float* x_scales, int m, const Int8Matrix& w, float* out) {
  for (int i = 0; i < m; ++i) {
    const int8_t* row = xq + static_cast<long>(i) * w.stride;
    for (int j = 0; j < w.rows; ++j) {
      const int32_t dot =
          DotPlain(row, w.values.data() + static_cast<long>(j) * w.stride, w.stride);
      out[static_cast<long>(i) * w.rows + j] = static_cast<float>(dot) * x_scales[i] * w.scales[j];
    }
  }
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) inline int32_t HorizontalSum(__m256i v) {
  const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i t = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  return _mm_cvtsi128_si32(_mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1)));
}

// 32 products of int8 pairs summed into 8 int32 lanes of acc. maddubs multiplies unsigned by
// signed bytes, so x's signs move onto w (|x| * sign(x) w); its int16 pair sums stay below
// 2 * 127 * 127 and do not saturate.
__attribute__((target("avx2"))) inline __m256i DotStep(__m256i acc, __m256i x, __m256i w,
                                                       __m256i ones) {
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(w, x));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
}

__attribute__((target("avx2"))) void KernelAvx2(const int8_t* xq, const float* x_scales, int m,
                                                const Int8Matrix& w, float* out) {
  const __m256i ones = _mm256_set1_epi16(1);
  const int stride = w.stride;
  for (int j0 = 0; j0 < w.rows; j0 += kBlockRows) {
    const int j1 = std::min(w.rows, j0 + kBlockRows);
    int i = 0;
    for (; i + 4 <= m; i += 4) {
      const int8_t* x0 = xq + static_cast<long>(i) * stride;
      for (int j = j0; j < j1; ++j) {
        const int8_t* wr = w.values.data() + static_cast<long>(j) * stride;
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        for (int p = 0; p < stride; p += kAlign) {
          const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wr + p));
          const int8_t* xp = x0 + p;
          a0 = DotStep(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp)), wv, ones);
          a1 = DotStep(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + stride)), wv,
                       ones);
          a2 = DotStep(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + 2 * stride)),
                       wv, ones);
          a3 = DotStep(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xp + 3 * stride)),
                       wv, ones);
        }
        const float ws = w.scales[j];
        float* o = out + static_cast<long>(i) * w.rows + j;
        o[0] = static_cast<float>(HorizontalSum(a0)) * x_scales[i] * ws;
        o[w.rows] = static_cast<float>(HorizontalSum(a1)) * x_scales[i + 1] * ws;
        o[2L * w.rows] = static_cast<float>(HorizontalSum(a2)) * x_scales[i + 2] * ws;
        o[3L * w.rows] = static_cast<float>(HorizontalSum(a3)) * x_scales[i + 3] * ws;
      }
    }
    for (; i < m; ++i) {
      const int8_t* x0 = xq + static_cast<long>(i) * stride;
      for (int j = j0; j < j1; ++j) {
        const int8_t* wr = w.values.data() + static_cast<long>(j) * stride;
        __m256i a0 = _mm256_setzero_si256();
        for (int p = 0; p < stride; p += kAlign) {
          a0 = DotStep(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x0 + p)),
                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wr + p)), ones);
        }
        out[static_cast<long>(i) * w.rows + j] =
            static_cast<float>(HorizontalSum(a0)) * x_scales[i] * w.scales[j];
      }
    }
  }
}
#endif

}  // namespace

Int8Matrix QuantizeRows(const FloatTensor& weight) {
  Int8Matrix q{.rows = static_cast<int>(weight.shape()[0]),
               .cols = static_cast<int>(weight.shape()[1])};
  q.stride = Padded(q.cols);
  q.values.resize(static_cast<size_t>(q.rows) * q.stride);
  q.scales.resize(q.rows);
  QuantizeActivations(weight.data(), q.rows, q.cols, q.stride, q.values.data(), q.scales.data());
  return q;
}

bool Int8UsesAvx2() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

void Int8Linear(const float* in, int m, const Int8Matrix& weight, float* out) {
  std::vector<int8_t> xq(static_cast<size_t>(m) * weight.stride);
  std::vector<float> x_scales(m);
  QuantizeActivations(in, m, weight.cols, weight.stride, xq.data(), x_scales.data());
#if defined(__x86_64__)
  if (Int8UsesAvx2()) {
    KernelAvx2(xq.data(), x_scales.data(), m, weight, out);
    return;
  }
#endif
  KernelPlain(xq.data(), x_scales.data(), m, weight, out);
}

}  // namespace strata::embed::bert
