#pragma once
// Int8 matrix products for the encoder's Linear layers: weights quantized once per output row
// (symmetric, scale = max |w| / 127), activations per token row on the fly, products summed in
// int32 and scaled back to fp32. An AVX2 kernel where the CPU has it (checked at run time),
// else plain C++; there is no AVX-512 VNNI kernel yet (no such CPU here to test one).

#include <cstdint>
#include <vector>

#include "embed/bert/safetensors.h"

namespace strata::embed::bert {

// A [rows x cols] weight matrix as int8, each row padded with zeros to a multiple of 32.
// Thread safety: immutable after QuantizeRows.
struct Int8Matrix {
  int rows = 0;
  int cols = 0;
  int stride = 0;  // cols rounded up to 32
  std::vector<int8_t> values;
  std::vector<float> scales;  // One per row: w[r][c] ~ values[r * stride + c] * scales[r].
};

// `weight` ([rows x cols], as torch.nn.Linear keeps it) quantized row by row.
Int8Matrix QuantizeRows(const FloatTensor& weight);

// Whether Int8Linear uses the AVX2 kernel on this CPU.
bool Int8UsesAvx2();

// out[m x weight.rows] = in[m x weight.cols] * weight^T, with `in` quantized per row.
// Thread safety: may run on several threads at once (scratch is per call).
void Int8Linear(const float* in, int m, const Int8Matrix& weight, float* out);

}  // namespace strata::embed::bert
