#pragma once
// Reductions over a row of floats that vectorize: without -ffast-math the compiler keeps one
// running sum scalar (reassociating it could change the result), so sums run in kLanes
// independent partial sums. The order of a sum is fixed (not left to right), so a result is
// the same on every call.

#include <algorithm>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace strata::embed::bert {

inline constexpr int kLanes = 16;

// The sum of f(x[i]) over i in [0, n).
template <typename F>
inline float SumOf(const float* x, int n, F f) {
  float lanes[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += f(x[i + l]);
  }
  float sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];
  for (; i < n; ++i) sum += f(x[i]);
  return sum;
}

inline float SumOf(const float* x, int n) {
  return SumOf(x, n, [](float v) { return v; });
}

struct Range {
  float low = 0;
  float high = 0;
};

// The smallest and the largest of x[0, n). REQUIRES: n >= 1, no NaN. Written with AVX2
// intrinsics where the build targets it: the compiler vectorizes no min or max reduction
// without -ffinite-math-only (it keeps NaN's order-dependent result), even in lanes.
inline Range RangeOf(const float* x, int n) {
  Range range{.low = x[0], .high = x[0]};
  int i = 0;
#if defined(__AVX2__)
  if (n >= 8) {
    __m256 low = _mm256_loadu_ps(x);
    __m256 high = low;
    for (i = 8; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      low = _mm256_min_ps(low, v);
      high = _mm256_max_ps(high, v);
    }
    float lows[8], highs[8];
    _mm256_storeu_ps(lows, low);
    _mm256_storeu_ps(highs, high);
    range = {.low = *std::min_element(lows, lows + 8), .high = *std::max_element(highs, highs + 8)};
  }
#endif
  for (; i < n; ++i) {
    range.low = std::min(range.low, x[i]);
    range.high = std::max(range.high, x[i]);
  }
  return range;
}

}  // namespace strata::embed::bert
