#pragma once
// Non-cryptographic hashing for content fingerprints.

#include <cstdint>
#include <string_view>

namespace strata {

// 64-bit FNV-1a of `bytes`. Stable across platforms and releases: values are stored on disk.
uint64_t Fnv1a64(std::string_view bytes);

}  // namespace strata
