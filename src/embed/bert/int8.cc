#include "embed/bert/int8.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "embed/bert/lanes.h"

namespace strata::embed::bert {
namespace {

constexpr int kGroupBytes = kInt8BlockRows * kInt8GroupCols;
// Token rows one AVX-512 tile computes; with kTileBlocks blocks that is 18 accumulators,
// beside the 3 weight vectors and the broadcast row bytes, within the 32 vector registers.
constexpr int kTileRows = 6;
constexpr int kTileBlocks = 3;

int RoundUp(int n, int multiple) { return (n + multiple - 1) / multiple * multiple; }

// out[i][j] for the int32 sum `dot` of row i's u8 values with row j's s8 values.
inline float Dequantize(int32_t dot, const Int8Activations& x, int i, const Int8Matrix& w, int j) {
  return static_cast<float>(dot - x.zeros[i] * w.sums[j]) * (x.scales[i] * w.scales[j]);
}

void KernelPortable(const Int8Activations& x, int m, const Int8Matrix& w, float* out) {
  for (int b = 0; b < w.blocks; ++b) {
    const int8_t* block = w.packed.data() + static_cast<long>(b) * w.groups * kGroupBytes;
    const int width = std::min(kInt8BlockRows, w.rows - b * kInt8BlockRows);
    for (int i = 0; i < m; ++i) {
      const uint8_t* row = x.values.data() + static_cast<long>(i) * x.stride;
      int32_t acc[kInt8BlockRows] = {};
      for (int g = 0; g < w.groups; ++g) {
        const int8_t* group = block + static_cast<long>(g) * kGroupBytes;
        for (int l = 0; l < kInt8BlockRows; ++l) {
          for (int t = 0; t < kInt8GroupCols; ++t) {
            acc[l] += int32_t{row[g * kInt8GroupCols + t]} * group[l * kInt8GroupCols + t];
          }
        }
      }
      float* o = out + static_cast<long>(i) * w.rows + b * kInt8BlockRows;
      for (int l = 0; l < width; ++l) o[l] = Dequantize(acc[l], x, i, w, b * kInt8BlockRows + l);
    }
  }
}

#if defined(__x86_64__)
#define STRATA_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

// The four bytes of the tile's row r in group g, as one int32 (to broadcast).
inline int32_t FourBytes(const uint8_t* rows, int stride, int r, int g) {
  int32_t four;
  std::memcpy(&four, rows + static_cast<long>(r) * stride + g * kInt8GroupCols, 4);
  return four;
}

// acc + the four-byte dot products of x's u8 and w's s8, lane by lane (vpdpbusd). In inline
// assembly because GCC 12 compiles the intrinsic in TileVnni's loop with a register copy
// around every instruction and the accumulators spilled to the stack (half the kernel's time);
// asm with the accumulator as an in-out operand keeps all 18 in registers.
STRATA_VNNI inline __m512i Dpbusd(__m512i acc, __m512i x, __m512i w) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
  return acc;
}

// Rows [i0, i0 + kTileRows) of x times blocks [b0, b0 + kBlocks) of w. x has at least i0 +
// kTileRows rows (padded); only rows below m are stored.
template <int kBlocks>
STRATA_VNNI void TileVnni(const Int8Activations& x, int i0, int m, const Int8Matrix& w, int b0,
                          float* out) {
  __m512i acc[kTileRows][kBlocks];
  for (int r = 0; r < kTileRows; ++r) {
    for (int c = 0; c < kBlocks; ++c) acc[r][c] = _mm512_setzero_si512();
  }
  const long block_bytes = static_cast<long>(w.groups) * kGroupBytes;
  const int8_t* weights = w.packed.data() + b0 * block_bytes;
  const uint8_t* rows = x.values.data() + static_cast<long>(i0) * x.stride;
  for (int g = 0; g < w.groups; ++g) {
    __m512i wv[kBlocks];
    for (int c = 0; c < kBlocks; ++c) {
      wv[c] = _mm512_loadu_si512(weights + c * block_bytes + static_cast<long>(g) * kGroupBytes);
    }
    for (int r = 0; r < kTileRows; ++r) {
      const __m512i xv = _mm512_set1_epi32(FourBytes(rows, x.stride, r, g));
      for (int c = 0; c < kBlocks; ++c) acc[r][c] = Dpbusd(acc[r][c], xv, wv[c]);
    }
  }
  for (int r = 0; r < kTileRows && i0 + r < m; ++r) {
    const int i = i0 + r;
    const __m512i zero = _mm512_set1_epi32(x.zeros[i]);
    const __m512 row_scale = _mm512_set1_ps(x.scales[i]);
    for (int c = 0; c < kBlocks; ++c) {
      const int j = (b0 + c) * kInt8BlockRows;
      const __m512i sums = _mm512_loadu_si512(w.sums.data() + j);
      const __m512 scales = _mm512_mul_ps(row_scale, _mm512_loadu_ps(w.scales.data() + j));
      const __m512i dot = _mm512_sub_epi32(acc[r][c], _mm512_mullo_epi32(zero, sums));
      // maskz with every lane set: the unmasked form trips GCC 12's maybe-uninitialized.
      const __m512 value = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(0xffff, dot), scales);
      const int width = std::min(kInt8BlockRows, w.rows - j);
      _mm512_mask_storeu_ps(out + static_cast<long>(i) * w.rows + j,
                            static_cast<__mmask16>((1u << width) - 1), value);
    }
  }
}

// Weight tiles outside, token rows inside: a tile's weights (kTileBlocks * 16 rows) stay in
// cache while every token row passes over them.
STRATA_VNNI void KernelVnni(const Int8Activations& x, int m, const Int8Matrix& w, float* out) {
  int b = 0;
  for (; b + kTileBlocks <= w.blocks; b += kTileBlocks) {
    for (int i = 0; i < m; i += kTileRows) TileVnni<kTileBlocks>(x, i, m, w, b, out);
  }
  for (; b < w.blocks; ++b) {
    for (int i = 0; i < m; i += kTileRows) TileVnni<1>(x, i, m, w, b, out);
  }
}

// The 256-bit kernels: AVX-VNNI (vpdpbusd, VEX-encoded) and AVX2 alone. Both take the
// AVX-512 kernel's packing; a tile is kTileRows token rows by one block of 16 outputs, as
// two halves of 8 (16 vector registers: 12 accumulators, 2 weight vectors, 1 broadcast).
#define STRATA_AVX2 __attribute__((target("avx2")))

// Stores rows j..j+7 of token row i (fewer at the matrix's end), dequantized as Dequantize
// does, in the same order of operations, so the result is the same float.
STRATA_AVX2 void StoreDequantized(__m256i dot, const Int8Activations& x, int i, const Int8Matrix& w,
                                  int j, float* out) {
  const __m256i sums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.sums.data() + j));
  const __m256 scales =
      _mm256_mul_ps(_mm256_set1_ps(x.scales[i]), _mm256_loadu_ps(w.scales.data() + j));
  const __m256i centered =
      _mm256_sub_epi32(dot, _mm256_mullo_epi32(_mm256_set1_epi32(x.zeros[i]), sums));
  const __m256 value = _mm256_mul_ps(_mm256_cvtepi32_ps(centered), scales);
  const int width = std::clamp(w.rows - j, 0, 8);
  if (width == 8) {
    _mm256_storeu_ps(out + static_cast<long>(i) * w.rows + j, value);
    return;
  }
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(width), lanes);
  _mm256_maskstore_ps(out + static_cast<long>(i) * w.rows + j, mask, value);
}

#if STRATA_BERT_AVXVNNI
#define STRATA_AVXVNNI __attribute__((target("avx2,avxvnni")))

// acc + vpdpbusd(x, w) in its VEX form, in assembly for the reason Dpbusd is; "x" keeps the
// operands in ymm0-15, all VEX can encode.
STRATA_AVXVNNI inline __m256i DpbusdVex(__m256i acc, __m256i x, __m256i w) {
  asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(x), "x"(w));
  return acc;
}

// Rows [i0, i0 + kTileRows) of x times block b of w.
STRATA_AVXVNNI void TileAvxVnni(const Int8Activations& x, int i0, int m, const Int8Matrix& w, int b,
                                float* out) {
  __m256i acc[kTileRows][2];
  for (auto& row : acc) row[0] = row[1] = _mm256_setzero_si256();
  const int8_t* block = w.packed.data() + static_cast<long>(b) * w.groups * kGroupBytes;
  const uint8_t* rows = x.values.data() + static_cast<long>(i0) * x.stride;
  for (int g = 0; g < w.groups; ++g) {
    const int8_t* group = block + static_cast<long>(g) * kGroupBytes;
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + 32));
    for (int r = 0; r < kTileRows; ++r) {
      const __m256i xv = _mm256_set1_epi32(FourBytes(rows, x.stride, r, g));
      acc[r][0] = DpbusdVex(acc[r][0], xv, low);
      acc[r][1] = DpbusdVex(acc[r][1], xv, high);
    }
  }
  for (int r = 0; r < kTileRows && i0 + r < m; ++r) {
    for (int h = 0; h < 2; ++h) {
      StoreDequantized(acc[r][h], x, i0 + r, w, b * kInt8BlockRows + h * 8, out);
    }
  }
}

STRATA_AVXVNNI void KernelAvxVnni(const Int8Activations& x, int m, const Int8Matrix& w,
                                  float* out) {
  for (int b = 0; b < w.blocks; ++b) {
    for (int i = 0; i < m; i += kTileRows) TileAvxVnni(x, i, m, w, b, out);
  }
}
#endif

// AVX2 has no u8 x s8 sum without saturation (vpmaddubsw saturates the sum of two products to
// 16 bits, and 2 * 255 * 127 exceeds it), so both sides are widened to s16 and multiplied by
// vpmaddwd, whose sums of two products are exact in 32 bits. A 32-bit lane holds half of a
// group (two columns of one output row); the halves are added at the end. `wide` is x's
// values as s16 (same layout).
STRATA_AVX2 void TileAvx2(const Int8Activations& x, const int16_t* wide, int i0, int m,
                          const Int8Matrix& w, int b, float* out) {
  for (int h = 0; h < 2; ++h) {
    // acc[r][0]: outputs 8h..8h+3 of the block, two lanes each; acc[r][1]: 8h+4..8h+7.
    __m256i acc[kTileRows][2];
    for (auto& row : acc) row[0] = row[1] = _mm256_setzero_si256();
    const int8_t* block = w.packed.data() + static_cast<long>(b) * w.groups * kGroupBytes;
    const int16_t* rows = wide + static_cast<long>(i0) * x.stride;
    for (int g = 0; g < w.groups; ++g) {
      const int8_t* half = block + static_cast<long>(g) * kGroupBytes + h * 32;
      const __m256i w0 =
          _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(half)));
      const __m256i w1 =
          _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(half + 16)));
      for (int r = 0; r < kTileRows; ++r) {
        int64_t four;
        std::memcpy(&four, rows + static_cast<long>(r) * x.stride + g * kInt8GroupCols, 8);
        const __m256i xv = _mm256_set1_epi64x(four);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(xv, w0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(xv, w1));
      }
    }
    for (int r = 0; r < kTileRows && i0 + r < m; ++r) {
      // Pairs of lanes summed: [o0 o1 o4 o5 | o2 o3 o6 o7], then the middle 64-bit halves
      // swapped into o0..o7.
      const __m256i pairs = _mm256_hadd_epi32(acc[r][0], acc[r][1]);
      const __m256i dot = _mm256_permute4x64_epi64(pairs, 0xD8);
      StoreDequantized(dot, x, i0 + r, w, b * kInt8BlockRows + h * 8, out);
    }
  }
}

STRATA_AVX2 void KernelAvx2(const Int8Activations& x, int m, const Int8Matrix& w, float* out) {
  thread_local std::vector<int16_t> wide;
  wide.assign(x.values.begin(), x.values.end());
  for (int b = 0; b < w.blocks; ++b) {
    for (int i = 0; i < m; i += kTileRows) TileAvx2(x, wide.data(), i, m, w, b, out);
  }
}
#endif

}  // namespace

int8_t Int8Matrix::at(int row, int col) const {
  const int b = row / kInt8BlockRows;
  const int g = col / kInt8GroupCols;
  return packed[(static_cast<long>(b) * groups + g) * kGroupBytes +
                row % kInt8BlockRows * kInt8GroupCols + col % kInt8GroupCols];
}

Int8Matrix QuantizeRows(const FloatTensor& weight) {
  Int8Matrix q{.rows = static_cast<int>(weight.shape()[0]),
               .cols = static_cast<int>(weight.shape()[1])};
  q.blocks = RoundUp(q.rows, kInt8BlockRows) / kInt8BlockRows;
  q.groups = RoundUp(q.cols, kInt8GroupCols) / kInt8GroupCols;
  const int padded_rows = q.blocks * kInt8BlockRows;
  q.packed.assign(static_cast<size_t>(padded_rows) * q.groups * kInt8GroupCols, 0);
  q.scales.assign(padded_rows, 0.0f);
  q.sums.assign(padded_rows, 0);
  for (int r = 0; r < q.rows; ++r) {
    const float* row = weight.data() + static_cast<long>(r) * q.cols;
    float top = 0;
    for (int c = 0; c < q.cols; ++c) top = std::max(top, std::abs(row[c]));
    const float scale = top > 0 ? top / 127 : 1.0f;
    const float inverse = 1.0f / scale;
    for (int c = 0; c < q.cols; ++c) {
      const auto v = static_cast<int8_t>(std::clamp(std::lrintf(row[c] * inverse), -127L, 127L));
      q.packed[(static_cast<long>(r / kInt8BlockRows) * q.groups + c / kInt8GroupCols) *
                   kGroupBytes +
               r % kInt8BlockRows * kInt8GroupCols + c % kInt8GroupCols] = v;
      q.sums[r] += v;
    }
    q.scales[r] = scale;
  }
  return q;
}

void QuantizeActivations(const float* x, int rows, int cols, int row_multiple, Int8Activations& q) {
  q.rows = rows;
  q.cols = cols;
  q.stride = RoundUp(cols, kInt8GroupCols);
  const int padded_rows = RoundUp(rows, row_multiple);
  q.values.resize(static_cast<size_t>(padded_rows) * q.stride);
  q.scales.assign(padded_rows, 1.0f);
  q.zeros.assign(padded_rows, 0);
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<long>(r) * cols;
    const Range range = RangeOf(row, cols);
    const float low = std::min(0.0f, range.low);
    const float high = std::max(0.0f, range.high);
    const float scale = high > low ? (high - low) / 255 : 1.0f;
    const float inverse = 1.0f / scale;
    const auto zero = static_cast<float>(std::clamp(std::lrintf(-low * inverse), 0L, 255L));
    uint8_t* out = q.values.data() + static_cast<long>(r) * q.stride;
    // Rounding half up, by truncation of a non-negative value: no call, so it vectorizes.
    for (int c = 0; c < cols; ++c) {
      out[c] = static_cast<uint8_t>(std::clamp(row[c] * inverse + zero, 0.0f, 255.0f) + 0.5f);
    }
    std::fill(out + cols, out + q.stride, static_cast<uint8_t>(zero));
    q.scales[r] = scale;
    q.zeros[r] = static_cast<int32_t>(zero);
  }
  for (int r = rows; r < padded_rows; ++r) {
    std::fill_n(q.values.data() + static_cast<long>(r) * q.stride, q.stride, uint8_t{0});
  }
}

bool Int8KernelAvailable(Int8Kernel kernel) {
#if defined(__x86_64__)
  switch (kernel) {
    case Int8Kernel::kPortable:
      return true;
    case Int8Kernel::kAvx2:
      return __builtin_cpu_supports("avx2");
    case Int8Kernel::kAvxVnni:
#if STRATA_BERT_AVXVNNI  // Else the compiler may not know the feature's name (clang 14).
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni");
#else
      return false;
#endif
    case Int8Kernel::kAvx512Vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vnni");
  }
  return false;
#else
  return kernel == Int8Kernel::kPortable;
#endif
}

Int8Kernel BestInt8Kernel() {
  static const Int8Kernel best = [] {
    for (Int8Kernel kernel : {Int8Kernel::kAvx512Vnni, Int8Kernel::kAvxVnni, Int8Kernel::kAvx2}) {
      if (Int8KernelAvailable(kernel)) return kernel;
    }
    return Int8Kernel::kPortable;
  }();
  return best;
}

void Int8Linear(const float* in, int m, const Int8Matrix& weight, float* out, Int8Kernel kernel) {
  if (!Int8KernelAvailable(kernel)) kernel = Int8Kernel::kPortable;
  // Kept between calls, as the encoder's activations are (encoder.cc).
  thread_local Int8Activations x;
  QuantizeActivations(in, m, weight.cols, kTileRows, x);
  switch (kernel) {
#if defined(__x86_64__)
    case Int8Kernel::kAvx512Vnni:
      KernelVnni(x, m, weight, out);
      return;
#if STRATA_BERT_AVXVNNI
    case Int8Kernel::kAvxVnni:
      KernelAvxVnni(x, m, weight, out);
      return;
#endif
    case Int8Kernel::kAvx2:
      KernelAvx2(x, m, weight, out);
      return;
#endif
    default:
      KernelPortable(x, m, weight, out);
  }
}

}  // namespace strata::embed::bert
