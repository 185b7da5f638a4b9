#include "dedup/signature.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "util/hash.h"

namespace strata::dedup {
namespace {

constexpr int kMaxRows = std::max(kBands, kShortBands) * kRowsPerBand;

// The MinHash signature of `items`: for each of kMaxRows hash functions, the least hash of
// an item. Hash function i is the mix of the item salted with i. This loop is most of the
// cost of a signature (32 mixes an item), so where GCC can, it is also compiled for AVX-512
// (8 rows at once; vpmullq, vpminuq) and picked at run time; integer arithmetic gives every
// version the same values.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "default")))
#endif
void Minima(const uint64_t* items, size_t count, uint64_t* minimum) {
  for (int i = 0; i < kMaxRows; ++i) minimum[i] = std::numeric_limits<uint64_t>::max();
  for (size_t k = 0; k < count; ++k) {
    const uint64_t item = items[k];
    for (int i = 0; i < kMaxRows; ++i) {
      minimum[i] = std::min(minimum[i], Mix64(item ^ (0x9e3779b97f4a7c15ull * (i + 1))));
    }
  }
}

// Appends `bands` band keys of the MinHash signature of `items` (distinct hashes), each band
// of kRowsPerBand rows. `salt` keeps the keys of different signatures of one body apart.
void AppendBands(const std::vector<uint64_t>& items, int bands, uint64_t scope, uint64_t salt,
                 std::vector<int64_t>& keys) {
  if (items.empty()) return;
  std::array<uint64_t, kMaxRows> minimum;
  Minima(items.data(), items.size(), minimum.data());
  for (int band = 0; band < bands; ++band) {
    uint64_t key = Mix64(scope ^ salt ^ (static_cast<uint64_t>(band) + 1) * 0xd6e8feb86659fd93ull);
    for (int row = 0; row < kRowsPerBand; ++row) {
      key = Mix64(key ^ minimum[band * kRowsPerBand + row]);
    }
    keys.push_back(static_cast<int64_t>(key));
  }
}

// The distinct ordered pairs of adjacent terms.
std::vector<uint64_t> Shingles(const std::vector<uint64_t>& terms) {
  std::vector<uint64_t> pairs;
  if (terms.size() < 2) return pairs;
  pairs.reserve(terms.size() - 1);
  for (size_t i = 0; i + 1 < terms.size(); ++i) {
    pairs.push_back(Mix64(terms[i] ^ Mix64(terms[i + 1] + 0x2545f4914f6cdd1dull)));
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

}  // namespace

uint64_t ScopeHash(std::string_view category, std::string_view workspace) {
  return Mix64(Fnv1a64(category) * 31 + Fnv1a64(workspace));
}

std::vector<int64_t> BandKeys(const ContentUnits& units, uint64_t normal_hash, uint64_t scope) {
  std::vector<int64_t> keys;
  keys.reserve(kBands + kShortBands);
  AppendBands(Shingles(units.terms), kBands, scope, 0, keys);
  if (units.units.size() <= kShortUnits) {
    AppendBands(units.band_units, kShortBands, scope, 0x8cb92ba72f3d8dd7ull, keys);
  }
  // Identical bodies share every band; only a body with nothing to band needs its content.
  if (keys.empty()) {
    keys.push_back(static_cast<int64_t>(Mix64(scope ^ Mix64(normal_hash ^ 0x5bd1e995ull))));
  }
  return keys;
}

std::vector<uint32_t> Trigrams(std::string_view text) {
  std::string normal;
  normal.reserve(text.size());
  bool space = true;  // Drops leading whitespace.
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (!space) normal.push_back(' ');
      space = true;
    } else {
      normal.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : ch);
      space = false;
    }
  }
  if (!normal.empty() && normal.back() == ' ') normal.pop_back();
  std::vector<uint32_t> out;
  if (normal.size() < 3) {
    if (!normal.empty()) {
      uint32_t packed = 0;
      for (char c : normal) packed = packed << 8 | static_cast<unsigned char>(c);
      out.push_back(packed);
    }
    return out;
  }
  out.reserve(normal.size() - 2);
  for (size_t i = 0; i + 2 < normal.size(); ++i) {
    out.push_back(static_cast<uint32_t>(static_cast<unsigned char>(normal[i])) << 16 |
                  static_cast<uint32_t>(static_cast<unsigned char>(normal[i + 1])) << 8 |
                  static_cast<unsigned char>(normal[i + 2]));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double Jaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

}  // namespace strata::dedup
