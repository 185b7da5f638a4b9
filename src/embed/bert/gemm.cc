#include "embed/bert/gemm.h"

#include <algorithm>

#if STRATA_BERT_OPENBLAS
#include <cblas.h>
#endif

namespace strata::embed::bert {
namespace {

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

}  // namespace

bool BlasCompiledIn() { return STRATA_BERT_OPENBLAS != 0; }

GemmBackend DefaultGemmBackend() {
  return BlasCompiledIn() ? GemmBackend::kBlas : GemmBackend::kPortable;
}

void Gemm(GemmBackend backend, bool transpose_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc) {
#if STRATA_BERT_OPENBLAS
  if (backend == GemmBackend::kBlas) {
    static const bool one_thread = [] {
      openblas_set_num_threads(1);
      return true;
    }();
    (void)one_thread;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, a, lda, b, ldb, beta, c, ldc);
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
