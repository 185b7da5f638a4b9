#pragma once
// A list of 64-bit integers as a blob: 8 bytes each, little-endian, in order (dedup_keys.keys,
// embeddings.links).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

std::string EncodeInt64s(std::span<const int64_t> values);
// Nothing when the blob's size is not a multiple of 8.
std::optional<std::vector<int64_t>> DecodeInt64s(std::string_view blob);

}  // namespace strata
