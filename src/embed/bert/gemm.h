#pragma once
// Single-precision matrix products for the encoder: OpenBLAS on one thread when the build
// found it, else (or when asked) a plain blocked C++ kernel the compiler vectorizes; and for
// the Linear layers, weights packed once at load for an AVX-512 kernel (no per-call repack).

#include <vector>

#include "embed/bert/safetensors.h"

namespace strata::embed::bert {

// kPacked: the encoder's Linear layers through PackedLinear, its other products as kBlas.
enum class GemmBackend { kBlas, kPortable, kPacked };

// Whether this build links OpenBLAS (found at configure time).
bool BlasCompiledIn();
// kPacked where PackedLinear has its AVX-512 kernel, else kBlas when compiled in, else
// kPortable.
GemmBackend DefaultGemmBackend();

// Row-major C[m x n] = alpha * A[m x k] * op(B) + beta * C, where op(B) is B [k x n], or
// B^T for a B of [n x k] when `transpose_b` (a torch Linear weight). lda/ldb/ldc are row
// strides in floats. kBlas (and kPacked) fall back to kPortable when OpenBLAS is not
// compiled in.
// OpenBLAS is set to one thread on first use: on a busy machine more were measured far
// slower. Thread safety: may be called from several threads at once.
void Gemm(GemmBackend backend, bool transpose_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc);

// A [rows x cols] Linear weight (as torch keeps it) packed in panels of 16 rows, each stored
// column by column: [rows / 16][cols][16], rows rounded up, the padding zero. One column of a
// panel is the 16 floats one AVX-512 multiply-add takes. Thread safety: immutable after PackRows.
struct PackedMatrix {
  int rows = 0;
  int cols = 0;
  int panels = 0;
  std::vector<float> values;
};

inline constexpr int kPanelRows = 16;

PackedMatrix PackRows(const FloatTensor& weight);

// Whether PackedLinear has its AVX-512 kernel on this CPU (else it runs plain C++).
bool PackedKernelAvailable();

// out[m x weight.rows] (row stride weight.rows) = in[m x weight.cols] (row stride
// weight.cols) * weight^T. Thread safety: may run on several threads at once.
void PackedLinear(const float* in, int m, const PackedMatrix& weight, float* out);

}  // namespace strata::embed::bert
