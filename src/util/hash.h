#pragma once
// Non-cryptographic hashing for content fingerprints.

#include <cstdint>
#include <string_view>

namespace strata {

inline constexpr uint64_t kFnv1a64Basis = 14695981039346656037ull;

// 64-bit FNV-1a of `bytes`. Stable across platforms and releases: values are stored on disk.
// FNV-1a streams: Fnv1a64(b, Fnv1a64(a)) is the hash of a followed by b.
uint64_t Fnv1a64(std::string_view bytes, uint64_t state = kFnv1a64Basis);

// splitmix64's finalizer: a fast bijective mix of 64 bits. Stable: mixed values are stored.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace strata
