#pragma once
// Int8 matrix products for the encoder's Linear layers. Weights are quantized once, at load,
// per output row (symmetric s8, scale = max |w| / 127) and packed for the kernel; activations
// are quantized per token row on every call (asymmetric u8 with a zero point, so a row whose
// values are mostly on one side of zero, as GELU's are, keeps all 8 bits). Products are summed
// in int32 and the zero point is taken out with each weight row's precomputed sum:
//   out[i][j] = float(sum_k xq[i][k] * wq[j][k] - zero[i] * sum_k wq[j][k]) * (sx[i] * sw[j]).
// Kernels (Int8Kernel): AVX-512 VNNI, AVX-VNNI, AVX2 and plain C++, the best this CPU has
// chosen at run time; all compute that formula exactly alike.

#include <cstdint>
#include <vector>

#include "embed/bert/safetensors.h"

namespace strata::embed::bert {

// Output rows a packed block holds (one 512-bit vector of int32 sums) and input columns
// a group holds (the four bytes vpdpbusd sums into one lane).
inline constexpr int kInt8BlockRows = 16;
inline constexpr int kInt8GroupCols = 4;

// A [rows x cols] weight matrix as s8, packed as [rows / 16][cols / 4][16][4] (both rounded
// up, the padding zero): a group of one block is the 64 bytes one vpdpbusd reads.
// Thread safety: immutable after QuantizeRows.
struct Int8Matrix {
  int rows = 0;
  int cols = 0;
  int blocks = 0;  // rows / 16, rounded up
  int groups = 0;  // cols / 4, rounded up
  std::vector<int8_t> packed;
  std::vector<float> scales;  // blocks * 16: w[r][c] ~ at(r, c) * scales[r]; padding 0.
  std::vector<int32_t> sums;  // blocks * 16: the sum of row r's s8 values.

  int8_t at(int row, int col) const;
};

// `weight` ([rows x cols], as torch.nn.Linear keeps it) quantized row by row.
Int8Matrix QuantizeRows(const FloatTensor& weight);

// Rows of activations as u8: x[r][c] ~ (values[r * stride + c] - zeros[r]) * scales[r]. The
// range of each row is widened to hold 0, so zeros[r] is in [0, 255]. stride is cols rounded
// up to 4; rows are padded to `row_multiple` (padding holds the zero point).
struct Int8Activations {
  int rows = 0;
  int cols = 0;
  int stride = 0;
  std::vector<uint8_t> values;
  std::vector<float> scales;
  std::vector<int32_t> zeros;
};

// x[rows x cols] into `q` (its memory reused).
void QuantizeActivations(const float* x, int rows, int cols, int row_multiple, Int8Activations& q);

// kAvx512Vnni: vpdpbusd on 512 bits (AVX-512 BW and VNNI); kAvxVnni: its 256-bit VEX form
// (AVX-VNNI, where the compiler supports it); kAvx2: u8 and s8 widened to s16 and vpmaddwd
// (exact: vpmaddubsw would saturate). Every kernel computes the same integers.
enum class Int8Kernel { kPortable, kAvx2, kAvxVnni, kAvx512Vnni };

// Whether this build and CPU can run `kernel`.
bool Int8KernelAvailable(Int8Kernel kernel);
// The fastest available kernel, in the order kAvx512Vnni, kAvxVnni, kAvx2, kPortable.
Int8Kernel BestInt8Kernel();

// out[m x weight.rows] (row stride weight.rows) = in[m x weight.cols] * weight^T, with `in`
// quantized per row. A kernel the CPU lacks runs as kPortable.
// Thread safety: may run on several threads at once (scratch is per call).
void Int8Linear(const float* in, int m, const Int8Matrix& weight, float* out,
                Int8Kernel kernel = BestInt8Kernel());

}  // namespace strata::embed::bert
