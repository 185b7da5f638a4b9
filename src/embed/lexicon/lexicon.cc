#include "embed/lexicon/lexicon.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "embed/lexicon/lexicon_blob.h"  // Generated: embeds the table as strata_lexicon_table.
#include "embed/lexicon/lexicon_format.h"
#include "util/hash.h"
#include "util/log.h"

// The table lexicon_gen wrote, 64-byte aligned in .rodata (see lexicon_blob.h).
extern "C" const uint32_t strata_lexicon_table[];

namespace strata::embed {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the lexicon table is little-endian; add byte swapping to read it here");

namespace format = lexicon_format;

// Words longer than this skip the detachment rules (no English lemma is close to it).
constexpr size_t kMaxDetachBytes = 64;

[[noreturn]] void Corrupt(const char* what) {
  Log(LogLevel::kError,
      absl::StrCat("the compiled-in WordNet lexicon is not what this reader expects (", what,
                   "); lexicon_gen.cc and lexicon.cc disagree: rebuild both"));
  std::abort();
}

LexFeature Decode(const uint32_t* ids, uint32_t ref) {
  return {.id = ids[ref >> 8], .weight = static_cast<float>(ref & 0xff) * (1.0f / 255.0f)};
}

}  // namespace

const Lexicon& Lexicon::Get() {
  static const Lexicon lexicon;
  return lexicon;
}

Lexicon::Lexicon() {
  const uint32_t* table = strata_lexicon_table;
  const uint32_t word_count = table[format::kWordCount], slot_count = table[format::kSlotCount],
                 id_count = table[format::kIdCount], ref_count = table[format::kRefCount],
                 string_bytes = table[format::kStringBytes];
  if (table[format::kMagicWord] != format::kMagic) Corrupt("bad magic");
  if (table[format::kVersionWord] != format::kFormatVersion) Corrupt("format version");
  if (table[format::kHashCheck] != static_cast<uint32_t>(Fnv1a64(format::kHashCheckWord))) {
    Corrupt("word hash");
  }
  const uint32_t total_bytes = table[format::kTotalBytes];
  if (total_bytes != STRATA_LEXICON_TABLE_BYTES) Corrupt("table size");
  if (!std::has_single_bit(slot_count) || slot_count < 2 * uint64_t{word_count}) {
    Corrupt("slot count");
  }
  const uint64_t words_bytes = 4 * (uint64_t{format::kHeaderWords} + slot_count +
                                    2 * (uint64_t{word_count} + 1) + id_count + ref_count);
  const uint64_t pos_bytes = (uint64_t{word_count} + 3) / 4 * 4;
  if (words_bytes + pos_bytes + string_bytes != total_bytes) Corrupt("section sizes");

  word_count_ = word_count;
  slot_mask_ = slot_count - 1;
  max_features_ = table[format::kMaxFeaturesPerWord];
  checksum_ = uint64_t{table[format::kChecksumHigh]} << 32 | table[format::kChecksumLow];
  slots_ = table + format::kHeaderWords;
  word_refs_ = slots_ + slot_count;
  word_text_ = word_refs_ + word_count + 1;
  ids_ = word_text_ + word_count + 1;
  refs_ = ids_ + id_count;
  pos_masks_ = reinterpret_cast<const uint8_t*>(refs_ + ref_count);
  strings_ = reinterpret_cast<const char*>(pos_masks_ + pos_bytes);
  if (word_refs_[word_count] != ref_count || word_text_[word_count] != string_bytes) {
    Corrupt("section ends");
  }
}

std::string_view Lexicon::Word(uint32_t index) const {
  return {strings_ + word_text_[index], word_text_[index + 1] - word_text_[index]};
}

uint32_t Lexicon::Find(std::string_view word) const {
  // Load factor <= 1/2, so probe chains are short and always end at an empty slot.
  for (uint64_t h = Fnv1a64(word);; ++h) {
    const uint32_t slot = slots_[h & slot_mask_];
    if (slot == 0) return kNotFound;
    if (Word(slot - 1) == word) return slot - 1;
  }
}

void Lexicon::Append(uint32_t index, std::vector<LexFeature>& out) const {
  for (uint32_t r = word_refs_[index]; r < word_refs_[index + 1]; ++r) {
    out.push_back(Decode(ids_, refs_[r]));
  }
}

void Lexicon::Features(std::string_view word, std::vector<LexFeature>& out) const {
  if (word.empty()) return;
  if (const uint32_t index = Find(word); index != kNotFound) {
    Append(index, out);
    return;
  }
  if (word.size() > kMaxDetachBytes) return;

  // Morphy's detachment: every rule whose result is a lemma of the rule's part of speech.
  std::array<uint32_t, format::kDetachments.size()> found;
  size_t found_count = 0;
  std::array<char, kMaxDetachBytes + 4> candidate;
  for (const format::Detachment& rule : format::kDetachments) {
    if (word.size() <= rule.suffix.size() || !word.ends_with(rule.suffix)) continue;
    const size_t stem = word.size() - rule.suffix.size();
    std::memcpy(candidate.data(), word.data(), stem);
    std::memcpy(candidate.data() + stem, rule.replacement.data(), rule.replacement.size());
    const uint32_t index = Find({candidate.data(), stem + rule.replacement.size()});
    if (index == kNotFound || (pos_masks_[index] & rule.pos) == 0) continue;
    if (std::find(found.begin(), found.begin() + found_count, index) !=
        found.begin() + found_count) {
      continue;
    }
    found[found_count++] = index;
  }
  if (found_count == 0) return;

  const size_t begin = out.size();
  Append(found[0], out);
  if (found_count == 1) return;
  // Several lemmas ("hoped" -> hope, hop): one feature per id at its largest weight, and the
  // same per-word cap as the table's entries, heaviest first.
  for (size_t f = 1; f < found_count; ++f) {
    for (uint32_t r = word_refs_[found[f]]; r < word_refs_[found[f] + 1]; ++r) {
      const LexFeature feature = Decode(ids_, refs_[r]);
      auto same = std::find_if(out.begin() + begin, out.end(),
                               [&](const LexFeature& g) { return g.id == feature.id; });
      if (same == out.end()) {
        out.push_back(feature);
      } else {
        same->weight = std::max(same->weight, feature.weight);
      }
    }
  }
  if (out.size() - begin > max_features_) {
    std::sort(out.begin() + begin, out.end(), [](const LexFeature& a, const LexFeature& b) {
      return a.weight != b.weight ? a.weight > b.weight : a.id < b.id;
    });
    out.erase(out.begin() + begin + max_features_, out.end());
  }
}

}  // namespace strata::embed
