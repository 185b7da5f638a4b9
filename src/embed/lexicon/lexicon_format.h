#pragma once
// The lexicon table's format: the one definition that its writer (lexicon_gen.cc, a build-time
// tool) and its reader (lexicon.cc) both compile, so the two cannot drift apart. Header only,
// no dependencies beyond the standard library: lexicon_gen is built for the build machine.
//
// All integers little-endian uint32 unless noted; sections follow the header in this order,
// each starting on a 4-byte boundary:
//   header     kHeaderWords uint32, indexed by HeaderWord
//   slots      [slot_count]     open addressing, linear probing on Fnv1a64(word); 0 = empty,
//                               else word index + 1. slot_count is a power of two >= 2 words.
//   word_refs  [word_count + 1] word i's features are refs[word_refs[i], word_refs[i + 1])
//   word_text  [word_count + 1] word i is strings[word_text[i], word_text[i + 1])
//   ids        [id_count]       the distinct feature ids, ascending
//   refs       [ref_count]      (index into ids) << 8 | weight, weight in 1..255 (x / 255)
//   pos_masks  [word_count] uint8, padded to 4: PosBit p set if the word is a lemma of part of
//              speech p in WordNet or the thesaurus; 0 for an inflected form from an exception
//              list or a stop word (whose entry is empty)
//   strings    [string_bytes] the words, sorted, no separators
// Feature ids are feature_ids.h's.

#include <array>
#include <cstdint>
#include <string_view>

namespace strata::embed::lexicon_format {

inline constexpr uint32_t kMagic = 0x584c5453;  // "STLX"
// 2: the header carries the checksum of the sections.
inline constexpr uint32_t kFormatVersion = 2;

// The header's words, in order.
enum HeaderWord : int {
  kMagicWord,
  kVersionWord,
  kWordCount,
  kSlotCount,
  kIdCount,
  kRefCount,
  kStringBytes,
  kMaxFeaturesPerWord,  // The per-word cap the writer applied; the reader keeps it for merges.
  kHashCheck,           // Fnv1a64(kHashCheckWord), truncated: both sides hash words alike.
  kTotalBytes,          // Of the whole table, header included.
  kChecksumLow,         // Fnv1a64 of every byte after the header: the table's identity, which
  kChecksumHigh,        // the built-in embedder's fingerprint carries.
  kHeaderWords,
};

inline constexpr std::string_view kHashCheckWord = "strata-lexicon";

// Parts of speech as pos_masks bits.
enum PosBit : uint8_t { kNounBit = 1, kVerbBit = 2, kAdjectiveBit = 4, kAdverbBit = 8 };

// WordNet morphy's detachment rules: a word ending in `suffix` may be an inflection of the
// lemma with `replacement` instead, for the parts of speech in `pos`. The writer applies them
// to the exception lists' forms, the reader to words the table does not hold, in this order.
struct Detachment {
  std::string_view suffix;
  std::string_view replacement;
  uint8_t pos;  // PosBit mask.
};
inline constexpr std::array<Detachment, 18> kDetachments = {{
    {"s", "", kNounBit | kVerbBit},
    {"ses", "s", kNounBit},
    {"xes", "x", kNounBit},
    {"zes", "z", kNounBit},
    {"ches", "ch", kNounBit},
    {"shes", "sh", kNounBit},
    {"men", "man", kNounBit},
    {"ies", "y", kNounBit | kVerbBit},
    {"es", "e", kVerbBit},
    {"es", "", kVerbBit},
    {"ed", "e", kVerbBit},
    {"ed", "", kVerbBit},
    {"ing", "e", kVerbBit},
    {"ing", "", kVerbBit},
    {"er", "", kAdjectiveBit},
    {"est", "", kAdjectiveBit},
    {"er", "e", kAdjectiveBit},
    {"est", "e", kAdjectiveBit},
}};

}  // namespace strata::embed::lexicon_format
