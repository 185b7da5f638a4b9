#include "embed/bert/gemm.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#if STRATA_BERT_OPENBLAS
#include <cblas.h>
#include <dlfcn.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace strata::embed::bert {
namespace {

#if STRATA_BERT_OPENBLAS
// OpenBLAS's sgemm, from the library opened on first use (dlopen) rather than linked: linked,
// it cost every start of strata ~6 ms of relocations (with libgfortran and libquadmath), and
// the thread pool its constructor starts spun on the other core (sched_yield) while strata
// started, though most CPUs never call it (PackedLinear and the attention kernels). Null
// when the library cannot be opened: Gemm then runs the portable kernel.
decltype(&::cblas_sgemm) OpenBlasSgemm() {
  static const decltype(&::cblas_sgemm) sgemm = []() -> decltype(&::cblas_sgemm) {
    void* lib = nullptr;
    for (const char* name : {STRATA_OPENBLAS_LIBDIR "/libopenblas.so.0", "libopenblas.so.0"}) {
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (lib == nullptr) return nullptr;
    auto set_threads = reinterpret_cast<decltype(&::openblas_set_num_threads)>(
        dlsym(lib, "openblas_set_num_threads"));
    auto found = reinterpret_cast<decltype(&::cblas_sgemm)>(dlsym(lib, "cblas_sgemm"));
    if (set_threads == nullptr || found == nullptr) return nullptr;
    set_threads(1);
    return found;
  }();
  return sgemm;
}
#endif

// Lanes of independent partial sums: the compiler turns each step over them into one vector
// multiply-add (they are independent, so no reassociation is needed).
constexpr int kLanes = 8;
// Rows of B kept hot in cache while every row of A passes over them.
constexpr int kBlockRows = 64;

void ScaleC(int m, int n, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    float* row = c + static_cast<long>(i) * ldc;
    if (beta == 0) {
      std::fill(row, row + n, 0.0f);
    } else if (beta != 1) {
      for (int j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

// `rows` dot products of A's rows a[0..rows) with one row b, each of length k.
template <int kRows>
void Dots(const float* const* a, const float* b, int k, float* out) {
  float acc[kRows][kLanes] = {};
  int p = 0;
  for (; p + kLanes <= k; p += kLanes) {
    for (int r = 0; r < kRows; ++r) {
      for (int l = 0; l < kLanes; ++l) acc[r][l] += a[r][p + l] * b[p + l];
    }
  }
  for (int r = 0; r < kRows; ++r) {
    float sum = 0;
    for (int l = 0; l < kLanes; ++l) sum += acc[r][l];
    for (int q = p; q < k; ++q) sum += a[r][q] * b[q];
    out[r] = sum;
  }
}

// C += alpha * A * B^T, B [n x k].
void PortableTransposed(int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                        int ldb, float* c, int ldc) {
  for (int j0 = 0; j0 < n; j0 += kBlockRows) {
    const int j1 = std::min(n, j0 + kBlockRows);
    int i = 0;
    for (; i + 4 <= m; i += 4) {
      const float* rows[4];
      for (int r = 0; r < 4; ++r) rows[r] = a + static_cast<long>(i + r) * lda;
      for (int j = j0; j < j1; ++j) {
        float dots[4];
        Dots<4>(rows, b + static_cast<long>(j) * ldb, k, dots);
        for (int r = 0; r < 4; ++r) c[static_cast<long>(i + r) * ldc + j] += alpha * dots[r];
      }
    }
    for (; i < m; ++i) {
      const float* row = a + static_cast<long>(i) * lda;
      for (int j = j0; j < j1; ++j) {
        float dot;
        Dots<1>(&row, b + static_cast<long>(j) * ldb, k, &dot);
        c[static_cast<long>(i) * ldc + j] += alpha * dot;
      }
    }
  }
}

// C += alpha * A * B, B [k x n]: rows of C accumulate scaled rows of B.
void PortablePlain(int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                   int ldb, float* c, int ldc) {
  for (int p0 = 0; p0 < k; p0 += kBlockRows) {
    const int p1 = std::min(k, p0 + kBlockRows);
    for (int i = 0; i < m; ++i) {
      float* c_row = c + static_cast<long>(i) * ldc;
      for (int p = p0; p < p1; ++p) {
        const float scale = alpha * a[static_cast<long>(i) * lda + p];
        const float* b_row = b + static_cast<long>(p) * ldb;
        for (int j = 0; j < n; ++j) c_row[j] += scale * b_row[j];
      }
    }
  }
}

void PackedPortable(const float* in, int m, const PackedMatrix& w, float* out) {
  for (int b = 0; b < w.panels; ++b) {
    const float* panel = w.values.data() + static_cast<long>(b) * w.cols * kPanelRows;
    const int width = std::min(kPanelRows, w.rows - b * kPanelRows);
    for (int i = 0; i < m; ++i) {
      const float* row = in + static_cast<long>(i) * w.cols;
      float acc[kPanelRows] = {};
      for (int p = 0; p < w.cols; ++p) {
        for (int l = 0; l < kPanelRows; ++l) acc[l] += row[p] * panel[p * kPanelRows + l];
      }
      std::copy(acc, acc + width, out + static_cast<long>(i) * w.rows + b * kPanelRows);
    }
  }
}

#if defined(__x86_64__)
#define STRATA_AVX512 __attribute__((target("avx512f")))

// Token rows a tile computes: with kTilePanels panels, 24 accumulators beside the 3 weight
// vectors and the broadcast value, within the 32 vector registers.
constexpr int kTileRows = 8;
constexpr int kTilePanels = 3;

// Rows [0, kTileRows) of `rows` (row stride w.cols) times panels [b0, b0 + kPanels); stores
// the first `count` rows at out (row stride w.rows).
template <int kPanels>
STRATA_AVX512 void TilePacked(const float* rows, int count, const PackedMatrix& w, int b0,
                              float* out) {
  __m512 acc[kTileRows][kPanels];
  for (int r = 0; r < kTileRows; ++r) {
    for (int c = 0; c < kPanels; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  const long panel_floats = static_cast<long>(w.cols) * kPanelRows;
  const float* panels = w.values.data() + b0 * panel_floats;
  for (int p = 0; p < w.cols; ++p) {
    __m512 wv[kPanels];
    for (int c = 0; c < kPanels; ++c) {
      wv[c] = _mm512_loadu_ps(panels + c * panel_floats + static_cast<long>(p) * kPanelRows);
    }
    for (int r = 0; r < kTileRows; ++r) {
      const __m512 a = _mm512_set1_ps(rows[static_cast<long>(r) * w.cols + p]);
      for (int c = 0; c < kPanels; ++c) acc[r][c] = _mm512_fmadd_ps(a, wv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < count; ++r) {
    for (int c = 0; c < kPanels; ++c) {
      const int j = (b0 + c) * kPanelRows;
      const int width = std::min(kPanelRows, w.rows - j);
      _mm512_mask_storeu_ps(out + static_cast<long>(r) * w.rows + j,
                            static_cast<__mmask16>((1u << width) - 1), acc[r][c]);
    }
  }
}

// Panels outside, row tiles inside: a tile's panels stay in cache while every row passes. A
// last partial tile of rows is copied into zero-padded scratch.
STRATA_AVX512 void PackedAvx512(const float* in, int m, const PackedMatrix& w, float* out) {
  const int full = m / kTileRows * kTileRows;
  std::vector<float> tail;
  if (full < m) {
    tail.assign(static_cast<size_t>(kTileRows) * w.cols, 0.0f);
    std::memcpy(tail.data(), in + static_cast<long>(full) * w.cols,
                sizeof(float) * static_cast<size_t>(m - full) * w.cols);
  }
  auto tiles = [&](auto panels_constant, int b) {
    constexpr int kPanels = decltype(panels_constant)::value;
    for (int i = 0; i < full; i += kTileRows) {
      TilePacked<kPanels>(in + static_cast<long>(i) * w.cols, kTileRows, w, b,
                          out + static_cast<long>(i) * w.rows);
    }
    if (full < m) {
      TilePacked<kPanels>(tail.data(), m - full, w, b, out + static_cast<long>(full) * w.rows);
    }
  };
  int b = 0;
  for (; b + kTilePanels <= w.panels; b += kTilePanels) {
    tiles(std::integral_constant<int, kTilePanels>(), b);
  }
  for (; b < w.panels; ++b) tiles(std::integral_constant<int, 1>(), b);
}

// Attention products for one head of one text, AVX-512 (AttentionKernelAvailable).

// Rows [0, kRows) of scores = scale * q * kt, columns [16 * c0, 16 * (c0 + kCols)): kt is
// K transposed, [head_size x stride], zero-padded to a multiple of 16 columns.
template <int kRows, int kCols>
STRATA_AVX512 void TileScores(const float* q, int ld, const float* kt, int kt_stride, int head_size,
                              float scale, int c0, int length, float* scores, int ld_scores) {
  __m512 acc[kRows][kCols];
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (int d = 0; d < head_size; ++d) {
    __m512 kv[kCols];
    for (int c = 0; c < kCols; ++c) {
      kv[c] = _mm512_loadu_ps(kt + static_cast<long>(d) * kt_stride + (c0 + c) * 16);
    }
    for (int r = 0; r < kRows; ++r) {
      const __m512 a = _mm512_set1_ps(q[static_cast<long>(r) * ld + d]);
      for (int c = 0; c < kCols; ++c) acc[r][c] = _mm512_fmadd_ps(a, kv[c], acc[r][c]);
    }
  }
  const __m512 s = _mm512_set1_ps(scale);
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) {
      const int j = (c0 + c) * 16;
      const int width = std::min(16, length - j);
      _mm512_mask_storeu_ps(scores + static_cast<long>(r) * ld_scores + j,
                            static_cast<__mmask16>((1u << width) - 1), _mm512_mul_ps(acc[r][c], s));
    }
  }
}

template <int kRows>
STRATA_AVX512 void RowScores(const float* q, int ld, const float* kt, int kt_stride, int head_size,
                             float scale, int length, float* scores, int ld_scores) {
  const int blocks = kt_stride / 16;
  int c = 0;
  for (; c + 2 <= blocks; c += 2) {
    TileScores<kRows, 2>(q, ld, kt, kt_stride, head_size, scale, c, length, scores, ld_scores);
  }
  for (; c < blocks; ++c) {
    TileScores<kRows, 1>(q, ld, kt, kt_stride, head_size, scale, c, length, scores, ld_scores);
  }
}

// Rows [0, kRows) of context = p * v, kVectors * 16 = head_size floats a row.
template <int kRows, int kVectors>
STRATA_AVX512 void RowContext(const float* p, int ld_p, const float* v, int ld, int length,
                              float* context, int ldc) {
  __m512 acc[kRows][kVectors];
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kVectors; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (int j = 0; j < length; ++j) {
    __m512 vv[kVectors];
    for (int c = 0; c < kVectors; ++c) {
      vv[c] = _mm512_loadu_ps(v + static_cast<long>(j) * ld + 16 * c);
    }
    for (int r = 0; r < kRows; ++r) {
      const __m512 a = _mm512_set1_ps(p[static_cast<long>(r) * ld_p + j]);
      for (int c = 0; c < kVectors; ++c) acc[r][c] = _mm512_fmadd_ps(a, vv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kVectors; ++c) {
      _mm512_storeu_ps(context + static_cast<long>(r) * ldc + 16 * c, acc[r][c]);
    }
  }
}

// Calls body(std::integral_constant<int, kRows>, first row) over [0, length): tiles of
// kAttentionRows rows, then the rest one at a time.
constexpr int kAttentionRows = 8;
template <typename Body>
void ByRowTiles(int length, Body body) {
  int i = 0;
  for (; i + kAttentionRows <= length; i += kAttentionRows) {
    body(std::integral_constant<int, kAttentionRows>(), i);
  }
  for (; i < length; ++i) body(std::integral_constant<int, 1>(), i);
}
#endif

}  // namespace

PackedMatrix PackRows(const FloatTensor& weight) {
  PackedMatrix packed{.rows = static_cast<int>(weight.shape()[0]),
                      .cols = static_cast<int>(weight.shape()[1])};
  packed.panels = (packed.rows + kPanelRows - 1) / kPanelRows;
  packed.values.assign(static_cast<size_t>(packed.panels) * packed.cols * kPanelRows, 0.0f);
  for (int r = 0; r < packed.rows; ++r) {
    for (int c = 0; c < packed.cols; ++c) {
      packed.values[(static_cast<long>(r / kPanelRows) * packed.cols + c) * kPanelRows +
                    r % kPanelRows] = weight.data()[static_cast<long>(r) * packed.cols + c];
    }
  }
  return packed;
}

bool PackedKernelAvailable() {
#if defined(__x86_64__)
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
#else
  return false;
#endif
}

void PackedLinear(const float* in, int m, const PackedMatrix& weight, float* out) {
#if defined(__x86_64__)
  if (PackedKernelAvailable()) {
    PackedAvx512(in, m, weight, out);
    return;
  }
#endif
  PackedPortable(in, m, weight, out);
}

bool AttentionKernelAvailable(int head_size) {
  return PackedKernelAvailable() && (head_size == 32 || head_size == 64);
}

void AttentionScores(const float* q, const float* k, int ld, int length, int head_size, float scale,
                     float* scores, int ld_scores, std::vector<float>& kt) {
#if defined(__x86_64__)
  if (AttentionKernelAvailable(head_size)) {
    const int kt_stride = (length + 15) / 16 * 16;
    kt.assign(static_cast<size_t>(head_size) * kt_stride, 0.0f);
    for (int j = 0; j < length; ++j) {
      for (int d = 0; d < head_size; ++d) {
        kt[static_cast<size_t>(d) * kt_stride + j] = k[static_cast<long>(j) * ld + d];
      }
    }
    ByRowTiles(length, [&](auto rows, int i) {
      RowScores<decltype(rows)::value>(q + static_cast<long>(i) * ld, ld, kt.data(), kt_stride,
                                       head_size, scale, length,
                                       scores + static_cast<long>(i) * ld_scores, ld_scores);
    });
    return;
  }
#endif
  (void)kt;
  Gemm(GemmBackend::kBlas, /*transpose_b=*/true, length, length, head_size, scale, q, ld, k, ld,
       0.0f, scores, ld_scores);
}

void AttentionContext(const float* p, int ld_p, const float* v, int ld, int length, int head_size,
                      float* context, int ldc) {
#if defined(__x86_64__)
  if (AttentionKernelAvailable(head_size)) {
    ByRowTiles(length, [&](auto rows, int i) {
      constexpr int kRows = decltype(rows)::value;
      const float* p_rows = p + static_cast<long>(i) * ld_p;
      float* out = context + static_cast<long>(i) * ldc;
      if (head_size == 32) {
        RowContext<kRows, 2>(p_rows, ld_p, v, ld, length, out, ldc);
      } else {
        RowContext<kRows, 4>(p_rows, ld_p, v, ld, length, out, ldc);
      }
    });
    return;
  }
#endif
  Gemm(GemmBackend::kBlas, /*transpose_b=*/false, length, head_size, length, 1.0f, p, ld_p, v, ld,
       0.0f, context, ldc);
}

bool BlasAvailable() {
#if STRATA_BERT_OPENBLAS
  return OpenBlasSgemm() != nullptr;
#else
  return false;
#endif
}

GemmBackend DefaultGemmBackend() {
  if (PackedKernelAvailable()) return GemmBackend::kPacked;
  return BlasAvailable() ? GemmBackend::kBlas : GemmBackend::kPortable;
}

void Gemm(GemmBackend backend, bool transpose_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc) {
#if STRATA_BERT_OPENBLAS
  if (const auto sgemm = backend == GemmBackend::kPortable ? nullptr : OpenBlasSgemm()) {
    sgemm(CblasRowMajor, CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
          lda, b, ldb, beta, c, ldc);
    return;
  }
#else
  (void)backend;
#endif
  ScaleC(m, n, beta, c, ldc);
  if (transpose_b) {
    PortableTransposed(m, n, k, alpha, a, lda, b, ldb, c, ldc);
  } else {
    PortablePlain(m, n, k, alpha, a, lda, b, ldb, c, ldc);
  }
}

}  // namespace strata::embed::bert
