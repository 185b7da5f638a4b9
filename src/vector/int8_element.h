#pragma once
// The vector index's element: a vector quantized to one signed byte per dimension, after one
// float that scales those bytes to unit length. An element is a quarter of a float32 vector's
// size (384 dimensions: 388 bytes against 1,536), so a graph search walks a quarter of the
// memory; at a million vectors, memory traffic is what an insert and a search wait for.
// Similarity is the inner product of two scaled elements: cosine.

#include <cstddef>
#include <cstdint>
#include <span>

namespace strata::vector {

// Bytes of one element of `dimension`.
constexpr size_t Int8ElementBytes(size_t dimension) { return sizeof(float) + dimension; }

// Rounds `v` to signed bytes at its own scale: each component times 127 / max |component|,
// to the nearest integer (all 0 for the zero vector). Returns max |component|. The stored
// vectors (vector/codec.h) and the index's elements are these bytes.
float RoundToBytes(std::span<const float> v, int8_t* out);

// Writes the element of `v` (`dimension` = v.size()) into `out`, Int8ElementBytes bytes.
// Only the direction of `v` counts; the zero vector gets scale 0 (similarity 0 to anything).
void QuantizeInt8(std::span<const float> v, std::span<std::byte> out);

// 1 - the cosine similarity of two elements, `dimension` pointing to their size_t dimension:
// hnswlib's distance-function signature.
float Int8Distance(const void* a, const void* b, const void* dimension);

// The inner product of `v` with the unit vector an element stands for: the cosine, when `v`
// is a unit vector, that an exact scan of the stored vectors computes.
float DotElement(std::span<const float> v, const std::byte* element);

// The exact inner product of n signed bytes, each in [-127, 127] (what RoundToBytes gives).
int32_t DotBytes(const int8_t* a, const int8_t* b, size_t n);

}  // namespace strata::vector
