#pragma once
// Near-duplicate signatures: MinHash over what a body says, banded for LSH, and the exact
// character-trigram Jaccard that scores a candidate.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "dedup/content.h"

namespace strata::dedup {

// 8 bands of 4 MinHash rows over a body's shingles: ordered pairs of adjacent content terms
// ("prefer go", "go new"). Two bodies whose shingle sets have Jaccard similarity s share a
// band with probability 1 - (1 - s^4)^8: 0.89 at s = 0.7, 0.985 at 0.8, 0.9997 at 0.9; one
// word changed in 40 leaves s near 0.9, and filler words are not terms. Pairs, unlike single
// words, separate bodies drawn from a small shared vocabulary: two random 80-word bodies over
// 60 words share most of their words but few of their ~3,600 possible pairs (s ~ 0.01), a
// band about once in 10^7 comparisons. Every band key of every current memory is an entry
// of an in-memory map (dedup/band_map.h, 8 bytes each), so there are no more bands than
// recall needs.
inline constexpr int kBands = 8;
inline constexpr int kRowsPerBand = 4;
// A short body (at most kShortUnits units) has too few pairs to band: it also gets 8 bands
// of 4 rows over its band units (ContentUnits::band_units), so that `similar` still finds
// its near twins.
inline constexpr int kShortBands = 8;
inline constexpr size_t kShortUnits = 24;
// Changes whenever the keys a body produces change; stored signatures of another scheme are
// rebuilt. v4: words are text::Words of the keyword tokenizer (CJK bigrams, case folded in
// every script); the keys of ASCII bodies are v3's.
inline constexpr char kScheme[] = "minhash-pairs-8x4-values-8x4-v4";

// The scope a body is deduplicated in: its category and workspace.
uint64_t ScopeHash(std::string_view category, std::string_view workspace);

// The band keys of a body with `units` (Analyze) within `scope`; a body without terms or
// units has one key instead, derived from `normal_hash` (exact copies still meet).
// Deterministic across runs and platforms: keys are stored.
std::vector<int64_t> BandKeys(const ContentUnits& units, uint64_t normal_hash, uint64_t scope);

// The sorted, distinct character trigrams of `text` after lowercasing ASCII and collapsing
// whitespace, each packed into 24 bits.
std::vector<uint32_t> Trigrams(std::string_view text);

// |a ∩ b| / |a ∪ b| of two sorted distinct sets; 1 when both are empty.
double Jaccard(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

}  // namespace strata::dedup
