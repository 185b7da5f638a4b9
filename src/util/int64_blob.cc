#include "util/int64_blob.h"

namespace strata {

std::string EncodeInt64s(std::span<const int64_t> values) {
  std::string out(values.size() * 8, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t v = static_cast<uint64_t>(values[i]);
    for (int b = 0; b < 8; ++b) out[i * 8 + b] = static_cast<char>(v >> (8 * b));
  }
  return out;
}

std::optional<std::vector<int64_t>> DecodeInt64s(std::string_view blob) {
  if (blob.size() % 8 != 0) return std::nullopt;
  std::vector<int64_t> values(blob.size() / 8);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | static_cast<unsigned char>(blob[i * 8 + b]);
    values[i] = static_cast<int64_t>(v);
  }
  return values;
}

}  // namespace strata
