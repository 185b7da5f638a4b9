#pragma once
// Reading FTS5's own records: its totals ("averages", fts_data id 1: the row count, then each
// column's token count) and each row's size (fts_docsize.sz: each column's token count) are
// sequences of SQLite varints.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::text {

// The SQLite varint at bytes[pos] (big-endian 7-bit groups, high bit set on all but the last;
// a 9th byte counts whole); advances pos past it. A truncated varint reads as far as it goes.
inline uint64_t ReadVarint(std::string_view bytes, size_t& pos) {
  uint64_t v = 0;
  for (int i = 0; pos < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[pos++]);
    if (i == 8) return v << 8 | b;
    v = v << 7 | (b & 0x7f);
    if (!(b & 0x80)) break;
  }
  return v;
}

}  // namespace strata::text
