#pragma once
// Stored vectors: a unit vector quantized to one signed byte per dimension with one float
// scale, a quarter of float32's size (384 dims: 388 bytes). Cosine similarity computed from
// the decoded vector differs from the original's by well under 0.01.

#include <span>
#include <string>
#include <string_view>

namespace strata::vector {

// The blob for `v`.
std::string Encode(std::span<const float> v);
// Fills `out` (the dimension) from `blob`, renormalized to unit length. False when the blob is not
// of that dimension.
bool Decode(std::string_view blob, std::span<float> out);

// Inner product (cosine similarity for unit vectors).
float Dot(std::span<const float> a, std::span<const float> b);

}  // namespace strata::vector
