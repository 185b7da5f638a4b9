#include "dedup/signature.h"

#include <algorithm>
#include <limits>
#include <string>

#include "util/hash.h"

namespace strata::dedup {
namespace {

// splitmix64's finalizer: a fast bijective mix of 64 bits.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

// Hashes of the distinct words of `text` (ASCII-lowercased runs of letters, digits and
// non-ASCII bytes).
std::vector<uint64_t> WordHashes(std::string_view text) {
  std::vector<uint64_t> words;
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    const unsigned char c = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if (IsWordByte(c)) {
      word.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a')
                                          : static_cast<char>(c));
    } else if (!word.empty()) {
      words.push_back(Mix(Fnv1a64(word)));
      word.clear();
    }
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

}  // namespace

uint64_t ScopeHash(std::string_view category, std::string_view workspace) {
  return Mix(Fnv1a64(category) * 31 + Fnv1a64(workspace));
}

std::vector<int64_t> BandKeys(std::string_view text, uint64_t normal_hash, uint64_t scope) {
  std::vector<int64_t> keys;
  keys.reserve(kBands + 1);
  const std::vector<uint64_t> words = WordHashes(text);
  if (!words.empty()) {
    std::array<uint64_t, kHashes> minimum;
    minimum.fill(std::numeric_limits<uint64_t>::max());
    for (uint64_t w : words) {
      for (int i = 0; i < kHashes; ++i) {
        // Hash function i: the mix of the word hash salted with i.
        minimum[i] = std::min(minimum[i], Mix(w ^ (0x9e3779b97f4a7c15ull * (i + 1))));
      }
    }
    for (int band = 0; band < kBands; ++band) {
      uint64_t key = Mix(scope ^ (static_cast<uint64_t>(band) + 1) * 0xd6e8feb86659fd93ull);
      for (int row = 0; row < kRowsPerBand; ++row) {
        key = Mix(key ^ minimum[band * kRowsPerBand + row]);
      }
      keys.push_back(static_cast<int64_t>(key));
    }
  }
  keys.push_back(static_cast<int64_t>(Mix(scope ^ Mix(normal_hash ^ 0x5bd1e995ull))));
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
