// lexicon_gen: compiles WordNet 3.0 (Debian's wordnet-base) and the MyThes English thesaurus
// (Debian's mythes-en-us) into the table that embed/lexicon/lexicon.cc reads, and a header that
// embeds the table into the library.
//
//   lexicon_gen WORDNET_DIR THESAURUS_DAT TABLE_OUT HEADER_OUT [--stats]
//
// Runs at build time only (a meson custom_target). Any failure prints one line and exits 1,
// which fails the build. --stats prints a summary (words, features) to stdout.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "embed/lexicon/feature_ids.h"
#include "embed/lexicon/lexicon_format.h"
#include "text/stemmer.h"
#include "text/tokenizer.h"
#include "text/word_lists.h"
#include "util/hash.h"

namespace {

using strata::Fnv1a64;  // The word hash; lexicon.cc computes the same.
using strata::embed::kGlossIdBit;
using strata::embed::TermId;
using strata::embed::TermRelation;
namespace lexicon_format = strata::embed::lexicon_format;
namespace word_lists = strata::text::word_lists;

// ---- Knobs: what a word's features are and how much each counts ----

// Senses per part of speech, in WordNet's sense-frequency order, and the weight of each rank.
// Later senses are rarer meanings; they still count, less.
constexpr int kSensesPerPos = 3;
constexpr std::array<float, kSensesPerPos> kSenseWeights = {1.0f, 0.6f, 0.4f};

// Hypernyms (@ and @i) are walked up to kMaxHypernymLevels levels; level 1 weighs
// kHypernymWeight and each further level kHypernymDecay times the one below. The walk is long
// because WordNet's noun chains are deep: "cat" reaches "animal" only at level 7
// (feline, carnivore, placental, mammal, vertebrate, chordate, animal) and "hatchback" reaches
// "vehicle" at level 5. It stops early at a general synset (below), so the extra levels only
// add categories that still say something.
constexpr int kMaxHypernymLevels = 8;
constexpr float kHypernymWeight = 0.5f;
constexpr float kHypernymDecay = 0.8f;

// A synset too general to be a useful hypernym feature; the walk never goes through one (it
// would only reach more general ones). Two rules, because either alone misses cases:
// - Nouns within kNounMinHypernymDepth - 1 levels of the root "entity" (their shortest path):
//   the abstract top of the tree (physical_entity, abstraction, object, whole, matter, state,
//   person, cognition, ...: 254 synsets), however few descendants some of them have.
// - Synsets with more than kMaxNounHypernymDescendants (nouns; about 6% of the 82,115 noun
//   synsets) or kMaxVerbHypernymDescendants (verbs, whose tree is shallow and bushy: 13,767
//   synsets) transitive hyponyms. These cut organism (19,447), artifact (10,698), act (6,876),
//   instrumentality (5,516) and taxonomic_group (5,425) but keep plant (4,487), animal
//   (4,016), food (1,526) and vehicle (527); for verbs they cut change, act, move, make,
//   travel, think, be (251) and keep consume (89), get (145), express (203).
constexpr int kNounMinHypernymDepth = 4;
constexpr int kMaxNounHypernymDescendants = 5000;
constexpr int kMaxVerbHypernymDescendants = 240;

// Related synsets, each at most kMaxRelatedPerSynset per relation and sense (a head adjective
// such as "good" has dozens of similar-to satellites):
constexpr float kDerivedWeight = 0.5f;    // + derivationally related forms ("drink"/"drinker").
constexpr float kSimilarWeight = 0.5f;    // & similar-to, adjectives ("wet"/"damp").
constexpr float kPertainymWeight = 0.5f;  // \ pertainym ("quickly"/"quick", "atomic"/"atom").
constexpr int kMaxRelatedPerSynset = 6;

// Content words of a synset's gloss (before the first ';' or quoted example), stemmed with
// Snowball's English stemmer. A stem that occurs in more than kMaxGlossStemSynsets glosses
// ("use", "person", "genus", "plant") is dropped: it would tie thousands of unrelated words
// together, and so are function words (text/word_lists.h: kLexiconStopWords, kGlossStopWords).
constexpr float kGlossWeight = 0.2f;
constexpr int kMaxGlossWordsPerSynset = 8;
constexpr int kMinGlossWordLength = 3;
constexpr int kMaxGlossStemSynsets = 1500;

// Thesaurus terms (MyThes, whose sense lines follow WordNet's senses): for a lemma's first
// kThesaurusSensesPerPos senses per part of speech (weighted by kSenseWeights), the stem of each
// one-word term, weighted by its relation. A term feature matches the same stem in another text
// whatever that word's own senses (feature_ids.h): "assert" lists "maintain" in its first sense,
// a sense beyond maintain's first three, so "asserted" meets "maintaining" where no synset
// feature links them. Terms of several words ("motor vehicle") and antonyms are left out (the
// first measured no better and made the table 1.2 MB larger; docs/embeddings.md).
constexpr int kThesaurusSensesPerPos = 3;
static_assert(kThesaurusSensesPerPos <= kSensesPerPos, "a weight per sense rank");
constexpr float kSynonymTermWeight = 1.0f;
constexpr float kSimilarTermWeight = 0.6f;
constexpr float kGenericTermWeight = 0.5f;
constexpr float kRelatedTermWeight = 0.5f;

// Per word: features below kMinWeight are dropped, and only the kMaxFeaturesPerWord heaviest
// WordNet features and kMaxTermFeaturesPerWord heaviest term features are kept (ties by id, so
// the table is deterministic).
constexpr float kMinWeight = 0.05f;
constexpr int kMaxFeaturesPerWord = 48;
constexpr int kMaxTermFeaturesPerWord = 24;

// Words that get no features: shorter than kMinWordLength (single letters are mostly chemical
// symbols and letter names) or stop-like function words (the embedder drops them anyway;
// WordNet lists some as nouns: "it", "in", "he", "who"; text/word_lists.h).
constexpr size_t kMinWordLength = 2;

// ---- The table's format: lexicon_format.h, which lexicon.cc reads with ----

enum Pos : uint8_t { kNoun = 0, kVerb = 1, kAdjective = 2, kAdverb = 3, kPosCount = 4 };
constexpr std::array<std::string_view, kPosCount> kPosFileNames = {"noun", "verb", "adj", "adv"};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "lexicon_gen: %s\n", message.c_str());
  std::exit(1);
}

// The word hash of the slot table; lexicon.cc computes the same.
uint64_t WordHash(std::string_view word) { return Fnv1a64(word); }

uint32_t GlossId(std::string_view stem) {
  std::string key = "g:";
  key += stem;
  const uint64_t h = Fnv1a64(key);
  return kGlossIdBit | (static_cast<uint32_t>(h ^ (h >> 32)) & ~kGlossIdBit);
}

// The words of `text` as the embedder sees them (text::ForEachWord, as text::Words), joined by
// single spaces: case-folded, runs of letters and digits ("E-mail" -> "e mail", "banker's" ->
// "banker s").
std::string NormalizeWords(std::string_view text) {
  std::string out;
  strata::text::ForEachWord(text, [&out](const strata::text::Word& word) {
    if (!out.empty()) out += ' ';
    out.append(word.text);
  });
  return out;
}

std::vector<std::string_view> SplitWords(std::string_view normalized) {
  std::vector<std::string_view> words;
  for (size_t start = 0; start < normalized.size();) {
    size_t end = normalized.find(' ', start);
    if (end == std::string_view::npos) end = normalized.size();
    words.push_back(normalized.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

bool IsStopWord(std::string_view word) {
  return word_lists::Contains(word_lists::kLexiconStopWords, word);
}

bool IsGlossStopWord(std::string_view word) {
  return IsStopWord(word) || word_lists::Contains(word_lists::kGlossStopWords, word);
}

std::vector<std::string_view> SplitSpaces(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\n' && line[i] != '\r') ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
    if (i < line.size() && (line[i] == '\n' || line[i] == '\r')) break;
  }
  return tokens;
}

uint32_t ParseUnsigned(std::string_view token, int base, std::string_view context) {
  uint32_t value = 0;
  if (token.empty()) Die("empty number in " + std::string(context));
  for (char c : token) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      Die("bad number \"" + std::string(token) + "\" in " + std::string(context));
    }
    value = value * base + digit;
  }
  return value;
}

Pos PosFromChar(char c, std::string_view context) {
  switch (c) {
    case 'n':
      return kNoun;
    case 'v':
      return kVerb;
    case 'a':
    case 's':  // Adjective satellites live in data.adj with the head adjectives.
      return kAdjective;
    case 'r':
      return kAdverb;
  }
  Die("bad part of speech in " + std::string(context));
}

std::vector<std::string> ReadLines(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Die("cannot read " + path.string() + " (is wordnet-base installed?)");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    // The license header of every index and data file starts with two spaces.
    if (line.empty() || line[0] == ' ') continue;
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

enum class Relation : uint8_t { kHypernym, kDerived, kSimilar, kPertainym };

struct Pointer {
  Relation relation;
  uint8_t source_word;  // 1-based word in the synset for a lexical pointer; 0 = whole synset.
  uint32_t target;      // Synset index.
};

struct Synset {
  Pos pos = kNoun;
  uint32_t offset = 0;
  std::vector<std::string> words;  // Lowercase, without adjective markers like "(a)".
  std::vector<Pointer> pointers;
  std::vector<uint32_t> gloss_ids;
  std::vector<uint32_t> hyponyms;  // Inverse of kHypernym.
  int depth = -1;                  // Shortest hypernym path to a root.
  int descendants = 0;             // Transitive hyponyms.
  bool general = false;            // Never a hypernym feature (see the knobs).
};

// Snowball's English stem of a lowercase ASCII word: text::Stem, the keyword arm's and the
// embedder's stemmer, so the table's stems are the ones the embedder looks up.
std::string EnglishStem(std::string_view word) {
  return strata::text::Stem(strata::text::Language::kEnglish, word);
}

struct Senses {
  std::array<std::vector<uint32_t>, kPosCount> synsets;  // First kSensesPerPos, in order.
};

class WordNet {
 public:
  explicit WordNet(const std::filesystem::path& dir) {
    for (int p = 0; p < kPosCount; ++p) ReadData(dir, static_cast<Pos>(p));
    ResolvePointers();
    ComputeGenerality();
    ComputeGlosses();
    for (int p = 0; p < kPosCount; ++p) ReadIndex(dir, static_cast<Pos>(p));
    for (int p = 0; p < kPosCount; ++p) ReadExceptions(dir, static_cast<Pos>(p));
  }

  const std::vector<Synset>& synsets() const { return synsets_; }
  const std::map<std::string, Senses>& lemmas() const { return lemmas_; }
  const std::array<std::map<std::string, std::vector<std::string>>, kPosCount>& exceptions() const {
    return exceptions_;
  }
  const Senses* Find(const std::string& lemma) const {
    auto it = lemmas_.find(lemma);
    return it == lemmas_.end() ? nullptr : &it->second;
  }

 private:
  struct RawPointer {
    Relation relation;
    uint8_t source_word;
    Pos pos;
    uint32_t offset;
  };

  void ReadData(const std::filesystem::path& dir, Pos pos) {
    const std::filesystem::path path = dir / ("data." + std::string(kPosFileNames[pos]));
    for (const std::string& line : ReadLines(path)) {
      const size_t bar = line.find(" | ");
      const std::string_view head = std::string_view(line).substr(0, bar);
      const std::vector<std::string_view> t = SplitSpaces(head);
      const std::string context = path.string() + " line \"" + line.substr(0, 40) + "\"";
      if (t.size() < 6) Die("short line in " + context);
      Synset synset;
      synset.pos = pos;
      synset.offset = ParseUnsigned(t[0], 10, context);
      if (synset.offset >= (1u << 28)) Die("synset offset too large for an id in " + context);
      const uint32_t word_count = ParseUnsigned(t[3], 16, context);
      size_t i = 4;
      for (uint32_t w = 0; w < word_count; ++w, i += 2) {
        if (i + 1 >= t.size()) Die("truncated words in " + context);
        std::string word = ToLower(t[i]);
        if (const size_t paren = word.find('('); paren != std::string::npos) word.resize(paren);
        synset.words.push_back(std::move(word));
      }
      if (i >= t.size()) Die("missing pointer count in " + context);
      const uint32_t pointer_count = ParseUnsigned(t[i++], 10, context);
      std::vector<RawPointer> raw;
      for (uint32_t k = 0; k < pointer_count; ++k, i += 4) {
        if (i + 3 >= t.size()) Die("truncated pointers in " + context);
        const std::string_view symbol = t[i];
        Relation relation;
        if (symbol == "@" || symbol == "@i") {
          relation = Relation::kHypernym;
        } else if (symbol == "+") {
          relation = Relation::kDerived;
        } else if (symbol == "&") {
          relation = Relation::kSimilar;
        } else if (symbol == "\\") {
          relation = Relation::kPertainym;
        } else {
          continue;
        }
        if (t[i + 2].size() != 1 || t[i + 3].size() != 4) Die("bad pointer in " + context);
        raw.push_back(
            {.relation = relation,
             .source_word = static_cast<uint8_t>(ParseUnsigned(t[i + 3].substr(0, 2), 16, context)),
             .pos = PosFromChar(t[i + 2][0], context),
             .offset = ParseUnsigned(t[i + 1], 10, context)});
      }
      if (bar != std::string::npos)
        glosses_.push_back(line.substr(bar + 3));
      else
        glosses_.emplace_back();
      index_[Key(pos, synset.offset)] = static_cast<uint32_t>(synsets_.size());
      synsets_.push_back(std::move(synset));
      raw_pointers_.push_back(std::move(raw));
    }
  }

  static uint64_t Key(Pos pos, uint32_t offset) { return uint64_t{pos} << 32 | offset; }

  void ResolvePointers() {
    for (size_t s = 0; s < synsets_.size(); ++s) {
      for (const RawPointer& raw : raw_pointers_[s]) {
        auto it = index_.find(Key(raw.pos, raw.offset));
        if (it == index_.end()) Die("pointer to a missing synset " + std::to_string(raw.offset));
        synsets_[s].pointers.push_back(
            {.relation = raw.relation, .source_word = raw.source_word, .target = it->second});
        if (raw.relation == Relation::kHypernym) {
          synsets_[it->second].hyponyms.push_back(static_cast<uint32_t>(s));
        }
      }
    }
    raw_pointers_.clear();
  }

  int Depth(uint32_t s, int guard) {
    Synset& synset = synsets_[s];
    if (synset.depth >= 0) return synset.depth;
    if (guard > 64) Die("hypernym cycle at synset " + std::to_string(synset.offset));
    int depth = 0;
    bool first = true;
    for (const Pointer& p : synset.pointers) {
      if (p.relation != Relation::kHypernym) continue;
      const int d = Depth(p.target, guard + 1) + 1;
      depth = first ? d : std::min(depth, d);
      first = false;
    }
    synset.depth = depth;
    return depth;
  }

  void ComputeGenerality() {
    std::vector<uint32_t> seen(synsets_.size(), UINT32_MAX);
    std::vector<uint32_t> stack;
    for (uint32_t s = 0; s < synsets_.size(); ++s) {
      Depth(s, 0);
      int count = 0;
      stack.assign(1, s);
      while (!stack.empty()) {
        const uint32_t x = stack.back();
        stack.pop_back();
        for (uint32_t y : synsets_[x].hyponyms) {
          if (seen[y] == s) continue;
          seen[y] = s;
          ++count;
          stack.push_back(y);
        }
      }
      Synset& synset = synsets_[s];
      synset.descendants = count;
      synset.general = (synset.pos == kNoun && (synset.depth < kNounMinHypernymDepth ||
                                                count > kMaxNounHypernymDescendants)) ||
                       (synset.pos == kVerb && count > kMaxVerbHypernymDescendants);
    }
  }

  // The definition part of a gloss: up to the first ';' or quoted example.
  static std::string_view Definition(std::string_view gloss) {
    return gloss.substr(0, std::min(gloss.find(';'), gloss.find('"')));
  }

  void ComputeGlosses() {
    std::vector<std::vector<std::string>> stems(synsets_.size());
    std::unordered_map<std::string, int> synsets_per_stem;
    for (size_t s = 0; s < synsets_.size(); ++s) {
      const std::string definition = ToLower(Definition(glosses_[s]));
      std::set<std::string> seen;
      size_t i = 0;
      while (i < definition.size()) {
        while (i < definition.size() && !(definition[i] >= 'a' && definition[i] <= 'z')) ++i;
        const size_t start = i;
        while (i < definition.size() && definition[i] >= 'a' && definition[i] <= 'z') ++i;
        const std::string_view word = std::string_view(definition).substr(start, i - start);
        if (word.size() < kMinGlossWordLength || IsGlossStopWord(word)) continue;
        std::string stem = EnglishStem(word);
        if (!seen.insert(stem).second) continue;
        ++synsets_per_stem[stem];
        stems[s].push_back(std::move(stem));
      }
    }
    for (size_t s = 0; s < synsets_.size(); ++s) {
      for (const std::string& stem : stems[s]) {
        if (synsets_per_stem[stem] > kMaxGlossStemSynsets) continue;
        if (synsets_[s].gloss_ids.size() == kMaxGlossWordsPerSynset) break;
        synsets_[s].gloss_ids.push_back(GlossId(stem));
      }
    }
    glosses_.clear();
  }

  void ReadIndex(const std::filesystem::path& dir, Pos pos) {
    const std::filesystem::path path = dir / ("index." + std::string(kPosFileNames[pos]));
    for (const std::string& line : ReadLines(path)) {
      const std::vector<std::string_view> t = SplitSpaces(line);
      const std::string context = path.string() + " line \"" + line.substr(0, 40) + "\"";
      if (t.size() < 4) Die("short line in " + context);
      const uint32_t synset_count = ParseUnsigned(t[2], 10, context);
      if (t.size() < synset_count + 6) Die("truncated line in " + context);
      std::vector<uint32_t>& senses = lemmas_[std::string(t[0])].synsets[pos];
      for (uint32_t k = 0; k < synset_count && k < kSensesPerPos; ++k) {
        auto it = index_.find(Key(pos, ParseUnsigned(t[t.size() - synset_count + k], 10, context)));
        if (it == index_.end()) Die("sense of a missing synset in " + context);
        senses.push_back(it->second);
      }
    }
  }

  void ReadExceptions(const std::filesystem::path& dir, Pos pos) {
    const std::filesystem::path path = dir / (std::string(kPosFileNames[pos]) + ".exc");
    for (const std::string& line : ReadLines(path)) {
      const std::vector<std::string_view> t = SplitSpaces(line);
      if (t.size() < 2) Die("short line in " + path.string());
      std::vector<std::string>& lemmas = exceptions_[pos][std::string(t[0])];
      for (size_t i = 1; i < t.size(); ++i) lemmas.emplace_back(t[i]);
    }
  }

  std::vector<Synset> synsets_;
  std::unordered_map<uint64_t, uint32_t> index_;  // Key(pos, offset) -> synset index.
  std::vector<std::vector<RawPointer>> raw_pointers_;
  std::vector<std::string> glosses_;
  std::map<std::string, Senses> lemmas_;
  std::array<std::map<std::string, std::vector<std::string>>, kPosCount> exceptions_;
};

struct ThesaurusTerm {
  std::string words;  // NormalizeWords of the term as written.
  TermRelation relation;
};

struct ThesaurusSense {
  Pos pos;
  std::vector<ThesaurusTerm> terms;
};

// The MyThes thesaurus (th_en_US_v2.dat): a first line naming the encoding, then for each entry
// a line "entry|N" followed by N sense lines "(pos)|term|term|...", pos one of noun, verb, adj,
// adv; a term may end in " (generic term)", " (similar term)", " (related term)" or
// " (antonym)". Entries are keyed by NormalizeWords; where two entries normalize alike
// (".22-caliber", ".22 caliber") the first one's senses are kept.
class Thesaurus {
 public:
  explicit Thesaurus(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) Die("cannot read " + path.string() + " (is mythes-en-us installed?)");
    std::string line;
    size_t line_number = 1;
    auto context = [&] { return path.string() + " line " + std::to_string(line_number); };
    if (!std::getline(in, line) || (line != "UTF-8" && line != "UTF-8\r")) {
      Die(context() + ": expected the encoding UTF-8, got \"" + line + "\"");
    }
    while (std::getline(in, line)) {
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      const size_t bar = line.rfind('|');
      if (bar == std::string::npos || bar == 0) Die(context() + ": expected \"entry|N\"");
      const uint32_t sense_count =
          ParseUnsigned(std::string_view(line).substr(bar + 1), 10, context());
      const std::string key = NormalizeWords(std::string_view(line).substr(0, bar));
      std::vector<ThesaurusSense> senses;
      for (uint32_t k = 0; k < sense_count; ++k) {
        ++line_number;
        if (!std::getline(in, line)) Die(context() + ": the file ends inside an entry");
        if (!line.empty() && line.back() == '\r') line.pop_back();
        senses.push_back(ParseSense(line, context()));
      }
      if (!key.empty()) entries_.try_emplace(key, std::move(senses));
    }
  }

  // The senses of a normalized entry, or nullptr.
  const std::vector<ThesaurusSense>* Find(const std::string& normalized) const {
    auto it = entries_.find(normalized);
    return it == entries_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, std::vector<ThesaurusSense>>& entries() const { return entries_; }

 private:
  static ThesaurusSense ParseSense(std::string_view line, const std::string& context) {
    ThesaurusSense sense;
    size_t start = 0;
    std::vector<std::string_view> fields;
    while (true) {
      const size_t bar = line.find('|', start);
      fields.push_back(line.substr(start, bar == std::string_view::npos ? bar : bar - start));
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
    const std::string_view pos = fields[0];
    if (pos == "(noun)") {
      sense.pos = kNoun;
    } else if (pos == "(verb)") {
      sense.pos = kVerb;
    } else if (pos == "(adj)") {
      sense.pos = kAdjective;
    } else if (pos == "(adv)") {
      sense.pos = kAdverb;
    } else {
      Die(context + ": unknown part of speech \"" + std::string(pos) + "\"");
    }
    for (size_t f = 1; f < fields.size(); ++f) {
      std::string_view term = fields[f];
      TermRelation relation = TermRelation::kSame;
      bool antonym = false;
      if (term.ends_with(")")) {
        const size_t open = term.rfind(" (");
        if (open == std::string_view::npos) {
          Die(context + ": unbalanced \"" + std::string(term) + "\"");
        }
        const std::string_view note = term.substr(open + 2, term.size() - open - 3);
        if (note == "generic term") {
          relation = TermRelation::kGeneric;
        } else if (note == "similar term") {
          relation = TermRelation::kSimilar;
        } else if (note == "related term") {
          relation = TermRelation::kRelated;
        } else if (note == "antonym") {
          antonym = true;
        } else {
          Die(context + ": unknown term annotation \"" + std::string(note) + "\"");
        }
        term = term.substr(0, open);
      }
      if (antonym) continue;
      std::string words = NormalizeWords(term);
      if (!words.empty()) sense.terms.push_back({.words = std::move(words), .relation = relation});
    }
    return sense;
  }

  std::map<std::string, std::vector<ThesaurusSense>> entries_;
};

// Morphy's detachment rules (lexicon_format.h), which lexicon.cc applies at run time to
// words the table does not hold: the lemmas `word` may be an inflection of as `pos`.
std::vector<std::string> Detach(const std::string& word, Pos pos) {
  std::vector<std::string> out;
  for (const lexicon_format::Detachment& rule : lexicon_format::kDetachments) {
    if ((rule.pos & (1u << pos)) == 0) continue;
    if (word.size() <= rule.suffix.size() || !word.ends_with(rule.suffix)) continue;
    out.push_back(word.substr(0, word.size() - rule.suffix.size()) + std::string(rule.replacement));
  }
  return out;
}

uint32_t SynsetId(const Synset& synset) { return uint32_t{synset.pos} << 28 | synset.offset; }

// Accumulates one word's features, keeping the largest weight per id.
class FeatureSet {
 public:
  void Add(uint32_t id, float weight) {
    if (weight < kMinWeight) return;
    auto [it, inserted] = weights_.try_emplace(id, weight);
    if (!inserted) it->second = std::max(it->second, weight);
  }
  bool empty() const { return weights_.empty(); }

  // The heaviest kMaxFeaturesPerWord WordNet features, then the heaviest
  // kMaxTermFeaturesPerWord term features, each heaviest first, ties by ascending id.
  std::vector<std::pair<uint32_t, float>> Top() const {
    std::vector<std::pair<uint32_t, float>> wordnet, terms;
    for (const auto& feature : weights_) {
      (strata::embed::IsTermId(feature.first) ? terms : wordnet).push_back(feature);
    }
    auto heaviest = [](std::vector<std::pair<uint32_t, float>>& features, size_t count) {
      std::sort(features.begin(), features.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
      });
      if (features.size() > count) features.resize(count);
    };
    heaviest(wordnet, kMaxFeaturesPerWord);
    heaviest(terms, kMaxTermFeaturesPerWord);
    wordnet.insert(wordnet.end(), terms.begin(), terms.end());
    return wordnet;
  }

 private:
  std::unordered_map<uint32_t, float> weights_;
};

class FeatureBuilder {
 public:
  FeatureBuilder(const WordNet& wordnet, const Thesaurus& thesaurus)
      : wordnet_(wordnet), thesaurus_(thesaurus) {}

  // The features `lemma` (WordNet's spelling) has as part of speech `pos`: its WordNet senses'
  // and its thesaurus senses', into `out`.
  void AddLemma(const std::string& lemma, Pos pos, FeatureSet& out) const {
    if (const Senses* senses = wordnet_.Find(lemma)) {
      const std::vector<uint32_t>& synsets = senses->synsets[pos];
      for (size_t rank = 0; rank < synsets.size(); ++rank) {
        AddSense(lemma, synsets[rank], kSenseWeights[rank], out);
      }
    }
    AddTerms(lemma, pos, out);
  }

  // Whether `lemma` is a lemma of `pos` in WordNet or the thesaurus.
  bool IsLemma(const std::string& lemma, Pos pos) const {
    if (const Senses* senses = wordnet_.Find(lemma); senses && !senses->synsets[pos].empty()) {
      return true;
    }
    const std::vector<ThesaurusSense>* senses = thesaurus_.Find(NormalizeWords(lemma));
    return senses != nullptr && std::any_of(senses->begin(), senses->end(),
                                            [&](const ThesaurusSense& s) { return s.pos == pos; });
  }

 private:
  void AddSense(const std::string& lemma, uint32_t s, float weight, FeatureSet& out) const {
    const std::vector<Synset>& synsets = wordnet_.synsets();
    const Synset& synset = synsets[s];
    out.Add(SynsetId(synset), weight);
    const auto word = std::find(synset.words.begin(), synset.words.end(), lemma);
    const size_t word_number =
        word == synset.words.end() ? 0 : static_cast<size_t>(word - synset.words.begin()) + 1;
    int derived = 0, similar = 0, pertainyms = 0;
    for (const Pointer& p : synset.pointers) {
      // A lexical pointer belongs to one word of the synset; follow only this word's.
      if (p.source_word != 0 && p.source_word != word_number) continue;
      const uint32_t id = SynsetId(synsets[p.target]);
      if (p.relation == Relation::kDerived && derived++ < kMaxRelatedPerSynset) {
        out.Add(id, weight * kDerivedWeight);
      } else if (p.relation == Relation::kSimilar && similar++ < kMaxRelatedPerSynset) {
        out.Add(id, weight * kSimilarWeight);
      } else if (p.relation == Relation::kPertainym && pertainyms++ < kMaxRelatedPerSynset) {
        out.Add(id, weight * kPertainymWeight);
      }
    }
    for (uint32_t gloss_id : synset.gloss_ids) out.Add(gloss_id, weight * kGlossWeight);
    AddHypernyms(s, weight, out);
  }

  // Breadth-first up the hypernym graph, one weight per level, never through a general synset.
  void AddHypernyms(uint32_t s, float weight, FeatureSet& out) const {
    const std::vector<Synset>& synsets = wordnet_.synsets();
    std::vector<uint32_t> level = {s}, next, seen = {s};
    float level_weight = weight * kHypernymWeight;
    for (int l = 0; l < kMaxHypernymLevels && !level.empty(); ++l) {
      next.clear();
      for (uint32_t x : level) {
        for (const Pointer& p : synsets[x].pointers) {
          if (p.relation != Relation::kHypernym || synsets[p.target].general) continue;
          if (std::find(seen.begin(), seen.end(), p.target) != seen.end()) continue;
          seen.push_back(p.target);
          next.push_back(p.target);
          out.Add(SynsetId(synsets[p.target]), level_weight);
        }
      }
      level.swap(next);
      level_weight *= kHypernymDecay;
    }
  }

  void AddTerms(const std::string& lemma, Pos pos, FeatureSet& out) const {
    const std::string key = NormalizeWords(lemma);
    const std::vector<ThesaurusSense>* senses = thesaurus_.Find(key);
    if (senses == nullptr) return;
    std::vector<std::string> own_stems;  // The entry's own stems are in every text it is in.
    for (std::string_view word : SplitWords(key)) own_stems.push_back(Stem(word));
    int rank = 0;
    for (const ThesaurusSense& sense : *senses) {
      if (sense.pos != pos) continue;
      if (rank == kThesaurusSensesPerPos) break;
      const float sense_weight = kSenseWeights[rank++];
      for (const ThesaurusTerm& term : sense.terms) {
        if (term.words.find(' ') != std::string::npos || term.words.size() < kMinWordLength ||
            IsGlossStopWord(term.words)) {
          continue;
        }
        const std::string& stem = Stem(term.words);
        if (std::find(own_stems.begin(), own_stems.end(), stem) != own_stems.end()) continue;
        out.Add(TermId(stem, term.relation), sense_weight * RelationWeight(term.relation));
      }
    }
  }

  static float RelationWeight(TermRelation relation) {
    switch (relation) {
      case TermRelation::kSame:
        return kSynonymTermWeight;
      case TermRelation::kSimilar:
        return kSimilarTermWeight;
      case TermRelation::kGeneric:
        return kGenericTermWeight;
      case TermRelation::kRelated:
        return kRelatedTermWeight;
    }
    return 0;
  }

  const std::string& Stem(std::string_view word) const {
    auto [it, inserted] = stems_.try_emplace(std::string(word));
    if (inserted) it->second = EnglishStem(word);
    return it->second;
  }

  const WordNet& wordnet_;
  const Thesaurus& thesaurus_;
  mutable std::unordered_map<std::string, std::string> stems_;
};

struct Entry {
  std::vector<std::pair<uint32_t, float>> features;
  uint8_t pos_mask = 0;
};

// Every word that is a lemma in WordNet or the thesaurus or an inflected form in an exception
// list, at least kMinWordLength bytes long and not a stop word, keyed by NormalizeWords (WordNet
// spells "e-mail" and "green_tea", the embedder sees "e mail" and "green tea": runs of several
// words get no entry). Its features follow morphy per part of speech: the exception list's
// lemmas where it lists the word, else the word itself where it is a lemma, else the lemmas the
// detachment rules reach ("leaves": leaf as a noun, leave as a verb; "billing": the noun
// billing, and bill as a verb).
std::map<std::string, Entry> BuildEntries(const WordNet& wordnet, const Thesaurus& thesaurus) {
  const FeatureBuilder builder(wordnet, thesaurus);
  std::map<std::string, std::string> spellings;  // Normalized -> WordNet's spelling.
  auto consider = [&](const std::string& spelling) {
    std::string word = NormalizeWords(spelling);
    if (word.size() >= kMinWordLength && word.find(' ') == std::string::npos && !IsStopWord(word)) {
      spellings.try_emplace(std::move(word), spelling);
    }
  };
  for (const auto& [lemma, senses] : wordnet.lemmas()) consider(lemma);
  for (const auto& exceptions : wordnet.exceptions()) {
    for (const auto& [form, lemmas] : exceptions) consider(form);
  }
  for (const auto& [word, senses] : thesaurus.entries()) consider(word);

  // A stop word's entry is empty, so that the reader does not detach it into a lemma
  // ("was" -> "wa", "does" -> "doe").
  std::map<std::string, Entry> entries;
  for (std::string_view word : word_lists::kLexiconStopWords) entries.emplace(word, Entry{});
  for (const auto& [word, spelling] : spellings) {
    FeatureSet features;
    Entry entry;
    auto add = [&](const std::string& lemma, Pos pos) {
      if (!IsStopWord(lemma)) builder.AddLemma(lemma, pos, features);
    };
    for (int p = 0; p < kPosCount; ++p) {
      const Pos pos = static_cast<Pos>(p);
      const bool is_lemma = builder.IsLemma(spelling, pos);
      if (is_lemma) entry.pos_mask |= 1u << pos;
      auto exception = wordnet.exceptions()[pos].find(spelling);
      if (exception != wordnet.exceptions()[pos].end()) {
        for (const std::string& lemma : exception->second) add(lemma, pos);
      } else if (is_lemma) {
        add(spelling, pos);
      } else {
        for (const std::string& lemma : Detach(spelling, pos)) add(lemma, pos);
      }
    }
    if (features.empty()) continue;
    entry.features = features.Top();
    entries.emplace(word, std::move(entry));
  }
  return entries;
}

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string Serialize(const std::map<std::string, Entry>& entries) {
  std::vector<uint32_t> ids;
  for (const auto& [word, entry] : entries) {
    for (const auto& [id, weight] : entry.features) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.size() >= (1u << 24)) Die("more than 2^24 distinct features");

  const uint32_t word_count = static_cast<uint32_t>(entries.size());
  uint32_t slot_count = 1;
  while (slot_count < 2 * word_count) slot_count *= 2;
  std::vector<uint32_t> slots(slot_count, 0), word_refs, word_text, refs;
  std::string strings, pos_masks;
  uint32_t index = 0;
  for (const auto& [word, entry] : entries) {
    for (uint64_t h = WordHash(word);; ++h) {
      uint32_t& slot = slots[h & (slot_count - 1)];
      if (slot == 0) {
        slot = index + 1;
        break;
      }
    }
    word_refs.push_back(static_cast<uint32_t>(refs.size()));
    word_text.push_back(static_cast<uint32_t>(strings.size()));
    for (const auto& [id, weight] : entry.features) {
      const uint32_t id_index =
          static_cast<uint32_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
      const long quantized = std::clamp(std::lround(weight * 255.0f), 1l, 255l);
      refs.push_back(id_index << 8 | static_cast<uint32_t>(quantized));
    }
    strings += word;
    pos_masks.push_back(static_cast<char>(entry.pos_mask));
    ++index;
  }
  word_refs.push_back(static_cast<uint32_t>(refs.size()));
  word_text.push_back(static_cast<uint32_t>(strings.size()));
  while (pos_masks.size() % 4 != 0) pos_masks.push_back(0);

  std::string body;  // Every section after the header.
  for (const std::vector<uint32_t>* section : {&slots, &word_refs, &word_text, &ids, &refs}) {
    for (uint32_t v : *section) PutU32(body, v);
  }
  body += pos_masks;
  body += strings;
  const size_t total = 4 * size_t{lexicon_format::kHeaderWords} + body.size();
  if (total >= (1ull << 32)) Die("table larger than 4 GiB");
  const uint64_t checksum = Fnv1a64(body);

  std::array<uint32_t, lexicon_format::kHeaderWords> header{};
  header[lexicon_format::kMagicWord] = lexicon_format::kMagic;
  header[lexicon_format::kVersionWord] = lexicon_format::kFormatVersion;
  header[lexicon_format::kWordCount] = word_count;
  header[lexicon_format::kSlotCount] = slot_count;
  header[lexicon_format::kIdCount] = static_cast<uint32_t>(ids.size());
  header[lexicon_format::kRefCount] = static_cast<uint32_t>(refs.size());
  header[lexicon_format::kStringBytes] = static_cast<uint32_t>(strings.size());
  header[lexicon_format::kMaxFeaturesPerWord] = kMaxFeaturesPerWord + kMaxTermFeaturesPerWord;
  header[lexicon_format::kHashCheck] =
      static_cast<uint32_t>(WordHash(lexicon_format::kHashCheckWord));
  header[lexicon_format::kTotalBytes] = static_cast<uint32_t>(total);
  header[lexicon_format::kChecksumLow] = static_cast<uint32_t>(checksum);
  header[lexicon_format::kChecksumHigh] = static_cast<uint32_t>(checksum >> 32);
  std::string out;
  out.reserve(total);
  for (uint32_t v : header) PutU32(out, v);
  out += body;
  return out;
}

// The header lexicon.cc includes: the table's size, and the assembler that embeds it. The
// header is rewritten whenever the table is, so lexicon.cc (and the .incbin) is rebuilt too.
std::string EmbeddingHeader(const std::filesystem::path& table, size_t bytes) {
  std::string path;
  for (char c : table.string()) {
    if (c == '"' || c == '\\') path += '\\';
    path += c;
  }
  std::string escaped;  // The same path as a C string literal holding an assembler string.
  for (char c : "\"" + path + "\"") {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "// Generated by lexicon_gen from WordNet 3.0; do not edit. Included by lexicon.cc.\n"
         "#pragma once\n\n"
         "#define STRATA_LEXICON_TABLE_BYTES " +
         std::to_string(bytes) +
         "u\n\n"
         "asm(\".pushsection .rodata\\n\"\n"
         "    \".balign 64\\n\"\n"
         "    \".globl strata_lexicon_table\\n\"\n"
         "    \".hidden strata_lexicon_table\\n\"\n"
         "    \".type strata_lexicon_table, %object\\n\"\n"
         "    \"strata_lexicon_table:\\n\"\n"
         "    \".incbin " +
         escaped +
         "\\n\"\n"
         "    \".size strata_lexicon_table, . - strata_lexicon_table\\n\"\n"
         "    \".popsection\\n\");\n";
}

void WriteFile(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) Die("cannot write " + path.string());
}

}  // namespace

int main(int argc, char** argv) {
  const bool stats = argc == 6 && std::string_view(argv[5]) == "--stats";
  if (argc != 5 && !stats) {
    Die("usage: lexicon_gen WORDNET_DIR THESAURUS_DAT TABLE_OUT HEADER_OUT [--stats]");
  }
  const WordNet wordnet(argv[1]);
  const Thesaurus thesaurus(argv[2]);
  const std::map<std::string, Entry> entries = BuildEntries(wordnet, thesaurus);
  const std::string table = Serialize(entries);
  const std::filesystem::path table_path = std::filesystem::absolute(argv[3]);
  WriteFile(table_path, table);
  WriteFile(argv[4], EmbeddingHeader(table_path, table.size()));
  if (stats) {
    size_t features = 0, terms = 0;
    for (const auto& [word, entry] : entries) {
      features += entry.features.size();
      for (const auto& [id, weight] : entry.features) terms += strata::embed::IsTermId(id);
    }
    std::printf(
        "synsets %zu, lemmas %zu, thesaurus entries %zu, words %zu, features %zu (%.1f per "
        "word, %zu of them thesaurus terms), bytes %zu\n",
        wordnet.synsets().size(), wordnet.lemmas().size(), thesaurus.entries().size(),
        entries.size(), features,
        static_cast<double>(features) / static_cast<double>(entries.size()), terms, table.size());
  }
  return 0;
}
