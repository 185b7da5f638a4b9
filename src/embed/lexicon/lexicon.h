#pragma once
// WordNet 3.0 and the MyThes English thesaurus, compiled at build time (lexicon_gen.cc) into a
// table inside the binary: for each English word, lexical features that words of related
// meaning share (its synsets, their hypernyms, derivationally related and similar synsets,
// stems of their glosses, the stems of its thesaurus terms).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace strata::embed {

// One lexical feature of a word: an id shared by related words (a synset, a hypernym, a
// gloss word's stem, a thesaurus term's stem; feature_ids.h) and how much it counts, in (0, 1].
struct LexFeature {
  uint32_t id;
  float weight;
};

// Thread safety: immutable; Get() and every method may be called from any thread at once.
class Lexicon {
 public:
  // The table compiled into the binary; cheap after the first call. Aborts with a message if
  // the table is not the format this reader expects (a build bug, never bad input).
  static const Lexicon& Get();

  Lexicon(const Lexicon&) = delete;
  Lexicon& operator=(const Lexicon&) = delete;

  // Appends the features of `word` (lowercase ASCII as it appears in text, e.g. "drinks",
  // "hatchbacks", "ran") to `out`: the word's own entry if the table has one (a lemma or an
  // inflected form from WordNet's exception lists), else the merged entries of the lemmas
  // WordNet's detachment rules find ("drinks" -> "drink"). Unknown words and stop words
  // ("the", "was") append nothing.
  // Each id appears at most once per call. Allocates nothing beyond `out` growing.
  void Features(std::string_view word, std::vector<LexFeature>& out) const;

  // Number of entries (lemmas and inflected forms).
  size_t words() const { return word_count_; }
  // The checksum lexicon_gen wrote of the table's contents (lexicon_format.h): two builds
  // give the same features for every word exactly when their checksums agree.
  uint64_t checksum() const { return checksum_; }

 private:
  static constexpr uint32_t kNotFound = UINT32_MAX;

  Lexicon();  // Reads and checks the compiled-in table.

  // The index of `word`'s entry, or kNotFound.
  uint32_t Find(std::string_view word) const;
  std::string_view Word(uint32_t index) const;
  void Append(uint32_t index, std::vector<LexFeature>& out) const;

  // All point into the compiled-in table.
  uint32_t word_count_ = 0;
  uint32_t slot_mask_ = 0;
  uint32_t max_features_ = 0;
  uint64_t checksum_ = 0;
  const uint32_t* slots_ = nullptr;
  const uint32_t* word_refs_ = nullptr;
  const uint32_t* word_text_ = nullptr;
  const uint32_t* ids_ = nullptr;
  const uint32_t* refs_ = nullptr;
  const uint8_t* pos_masks_ = nullptr;
  const char* strings_ = nullptr;
};

}  // namespace strata::embed
