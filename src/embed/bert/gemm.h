#pragma once
// Single-precision matrix products for the encoder: OpenBLAS on one thread when the build
// found it, else (or when asked) a plain blocked C++ kernel the compiler vectorizes.

namespace strata::embed::bert {

enum class GemmBackend { kBlas, kPortable };

// Whether this build links OpenBLAS (found at configure time).
bool BlasCompiledIn();
// kBlas when compiled in, else kPortable.
GemmBackend DefaultGemmBackend();

// Row-major C[m x n] = alpha * A[m x k] * op(B) + beta * C, where op(B) is B [k x n], or
// B^T for a B of [n x k] when `transpose_b` (a torch Linear weight). lda/ldb/ldc are row
// strides in floats. kBlas falls back to kPortable when OpenBLAS is not compiled in.
// OpenBLAS is set to one thread on first use: on a busy machine more were measured far
// slower. Thread safety: may be called from several threads at once.
void Gemm(GemmBackend backend, bool transpose_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc);

}  // namespace strata::embed::bert
