#pragma once
// The 32-bit feature ids of the lexicon table, shared by lexicon_gen (which writes them) and the
// built-in embedder (which hashes them into vectors). Changing any of these changes vectors:
// bump the built-in embedder's version with it.

#include <cstdint>
#include <string_view>

#include "util/hash.h"

namespace strata::embed {

// The top two bits say what an id names:
//   0b00  a WordNet synset: (part of speech << 28) | its byte offset in data.<pos> (< 2^28)
//   0b01  a term: (TermRelation << 28) | a 28-bit hash of a word's Snowball stem
//   0b1x  a gloss word: 1 << 31 | a 31-bit hash of its Snowball stem
inline constexpr uint32_t kGlossIdBit = 0x80000000u;
inline constexpr uint32_t kTermIdBits = 0x40000000u;
inline constexpr uint32_t kTermRelationMask = 0x30000000u;
inline constexpr uint32_t kTermHashMask = 0x0fffffffu;

// How a thesaurus term relates to the word whose feature it is. A word's own stem is kSame.
enum class TermRelation : uint32_t {
  kSame = 0,     // The word itself, or a synonym (a word of the same sense).
  kSimilar = 1,  // A similar term (WordNet's similar-to, adjectives).
  kGeneric = 2,  // A generic term (a hypernym's words).
  kRelated = 3,  // A related term (WordNet's also-see and the like).
};

inline bool IsGlossId(uint32_t id) { return (id & kGlossIdBit) != 0; }
inline bool IsTermId(uint32_t id) { return (id & (kGlossIdBit | kTermIdBits)) == kTermIdBits; }
inline TermRelation TermRelationOf(uint32_t id) {
  return static_cast<TermRelation>((id & kTermRelationMask) >> 28);
}

// The term id of `stem` (a Snowball English stem) under `relation`.
inline uint32_t TermId(std::string_view stem, TermRelation relation) {
  const uint64_t h = Fnv1a64(stem);
  return kTermIdBits | static_cast<uint32_t>(relation) << 28 |
         (static_cast<uint32_t>(h ^ (h >> 32)) & kTermHashMask);
}

// What a term id matches in a text: the kSame id of the same stem, whatever its relation.
inline uint32_t TermKey(uint32_t term_id) { return term_id & ~kTermRelationMask; }

}  // namespace strata::embed
