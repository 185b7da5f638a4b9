#pragma once
// Near-duplicate signatures: MinHash over a body's words, banded for LSH, and the exact
// character-trigram Jaccard that confirms a candidate.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace strata::dedup {

// 16 bands of 4 MinHash rows. Two bodies whose word sets have Jaccard similarity s share at
// least one band key with probability 1 - (1 - s^4)^16: 0.96 at s = 0.65, 0.9998 at s = 0.8.
// Bodies near the trigram threshold (0.70) mostly have word similarity 0.65 and up. Unrelated
// bodies (s ~ 0.03) share a band once in ~1.2 million comparisons.
inline constexpr int kBands = 16;
inline constexpr int kRowsPerBand = 4;
inline constexpr int kHashes = kBands * kRowsPerBand;
// Changes whenever the keys a body produces change; stored signatures of another scheme are
// rebuilt.
inline constexpr char kScheme[] = "minhash-values-16x4-v2";

// The scope a body is deduplicated in: its category and workspace.
uint64_t ScopeHash(std::string_view category, std::string_view workspace);

// The band keys of `text` (a body's scalar values, text::ParsedBody::values) within `scope`,
// plus (last) the exact-content key derived from `normal_hash`. Deterministic across runs and
// platforms: keys are stored.
std::vector<int64_t> BandKeys(std::string_view text, uint64_t normal_hash, uint64_t scope);

// The sorted, distinct character trigrams of `text` after lowercasing ASCII and collapsing
// whitespace, each packed into 24 bits.
std::vector<uint32_t> Trigrams(std::string_view text);

// |a ∩ b| / |a ∪ b| of two sorted distinct sets; 1 when both are empty.
double Jaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

}  // namespace strata::dedup
