#pragma once
// Single-precision matrix products for the encoder: OpenBLAS on one thread when the build
// found its headers and the library opens, else (or when asked) a plain blocked C++ kernel the
// compiler vectorizes; and for the Linear layers, weights packed once at load for an AVX-512
// kernel (no per-call repack).

#include <vector>

#include "embed/bert/safetensors.h"

namespace strata::embed::bert {

// kPacked: the encoder's Linear layers through PackedLinear, attention through
// AttentionScores and AttentionContext.
enum class GemmBackend { kBlas, kPortable, kPacked };

// Whether OpenBLAS serves kBlas: the build found its headers, and its library (opened on the
// first call, not linked) could be opened.
bool BlasAvailable();
// kPacked where PackedLinear has its AVX-512 kernel, else kBlas when available, else
// kPortable.
GemmBackend DefaultGemmBackend();

// Row-major C[m x n] = alpha * A[m x k] * op(B) + beta * C, where op(B) is B [k x n], or
// B^T for a B of [n x k] when `transpose_b` (a torch Linear weight). lda/ldb/ldc are row
// strides in floats. kBlas (and kPacked) fall back to kPortable when OpenBLAS is not
// available (BlasAvailable).
// OpenBLAS is set to one thread when opened: on a busy machine more were measured far
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

// Attention for one head of one text of `length` tokens, whose query, key and value rows
// (head_size floats each) sit at row stride `ld`. With AVX-512 and a head size of 32 or 64
// (AttentionKernelAvailable), kernels of our own: OpenBLAS's calls cost more than the
// products at these sizes (17% of a drain's CPU). Else through Gemm (kBlas).
bool AttentionKernelAvailable(int head_size);
// scores[length x length] (row stride ld_scores) = scale * Q * K^T. `kt`: scratch.
void AttentionScores(const float* q, const float* k, int ld, int length, int head_size, float scale,
                     float* scores, int ld_scores, std::vector<float>& kt);
// context[length x head_size] (row stride ldc) = P[length x length] (row stride ld_p) * V.
void AttentionContext(const float* p, int ld_p, const float* v, int ld, int length, int head_size,
                      float* context, int ldc);

}  // namespace strata::embed::bert
