#include "vector/codec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "vector/int8_element.h"

namespace strata::vector {

std::string Encode(std::span<const float> v) {
  std::string blob(sizeof(float) + v.size(), '\0');
  const float max_abs = RoundToBytes(v, reinterpret_cast<int8_t*>(blob.data() + sizeof(float)));
  const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
  std::memcpy(blob.data(), &scale, sizeof(float));
  return blob;
}

bool Decode(std::string_view blob, std::span<float> out) {
  if (blob.size() != sizeof(float) + out.size()) return false;
  float scale = 0;
  std::memcpy(&scale, blob.data(), sizeof(float));
  const auto* q = reinterpret_cast<const int8_t*>(blob.data() + sizeof(float));
  double norm = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(q[i]) * scale;
    norm += double{out[i]} * out[i];
  }
  // Quantization moves the norm slightly; the index compares unit vectors.
  if (norm > 0) {
    const float k = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : out) x *= k;
  }
  return true;
}

float Dot(std::span<const float> a, std::span<const float> b) {
  float sum = 0;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace strata::vector
