// Tests of dedup/signature.h: the band keys a body is indexed under, the character trigrams
// that verify a candidate, their Jaccard similarity, and the properties the write path relies
// on: near-duplicates almost always share a band key; bodies drawn from a small shared
// vocabulary, and unrelated bodies, almost never do.

#include "dedup/signature.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dedup/content.h"
#include "text/analyzer.h"
#include "text/body_text.h"
#include "util/hash.h"

namespace strata::dedup {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr uint64_t kHash = 0x0123456789abcdefull;

uint64_t Facts() { return ScopeHash("facts", ""); }

// The JSON string holding `text`.
std::string Json(std::string_view text) { return nlohmann::json(std::string(text)).dump(); }

// The content units of the body `body_json`, as the write path computes them.
ContentUnits UnitsOf(std::string_view body_json) {
  absl::StatusOr<text::ParsedBody> body = text::ParseBody(body_json);
  EXPECT_TRUE(body.ok()) << body.status() << " for " << body_json;
  return body.ok() ? Analyze(*body) : ContentUnits{};
}

// The band keys of the body that is the JSON string `text`, with the exact key of `hash`.
std::vector<int64_t> TextKeys(std::string_view text, uint64_t hash = kHash,
                              uint64_t scope = Facts()) {
  return BandKeys(UnitsOf(Json(text)), hash, scope);
}

// The keys of the bands over pairs of adjacent terms: the first kBands keys of a body that
// has at least two terms.
std::vector<int64_t> PairKeys(const std::vector<int64_t>& keys) {
  EXPECT_GE(keys.size(), static_cast<size_t>(kBands));
  if (keys.size() < static_cast<size_t>(kBands)) return {};
  return {keys.begin(), keys.begin() + kBands};
}

// The keys of the bands over units of a short body with at least two terms: the kShortBands
// keys after the pair keys.
std::vector<int64_t> UnitKeys(const std::vector<int64_t>& keys) {
  EXPECT_EQ(keys.size(), static_cast<size_t>(kBands + kShortBands));
  if (keys.size() != static_cast<size_t>(kBands + kShortBands)) return {};
  return {keys.begin() + kBands, keys.end()};
}

// Whether `a` and `b` have a key in common.
bool ShareAKey(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  for (int64_t k : a) {
    if (std::find(b.begin(), b.end(), k) != b.end()) return true;
  }
  return false;
}

double TrigramJaccard(std::string_view a, std::string_view b) {
  return Jaccard(Trigrams(a), Trigrams(b));
}

// ---------------------------------------------------------------------------------------------
// ScopeHash

TEST(ScopeHash, IsAFixedValueForAFixedScope) {
  // Band keys are stored, so the scope salt may not change between builds.
  EXPECT_EQ(ScopeHash("facts", ""), 0xd4d3d33e6bf6ddf8ull);
}

TEST(ScopeHash, DistinguishesCategoryFromWorkspace) {
  const std::set<uint64_t> scopes = {ScopeHash("a", "b"), ScopeHash("b", "a"), ScopeHash("ab", ""),
                                     ScopeHash("", "ab"), ScopeHash("a", ""),  ScopeHash("a", "c")};
  EXPECT_EQ(scopes.size(), 6u);
}

// ---------------------------------------------------------------------------------------------
// BandKeys

// The scheme as its description states it, written out here from that description so that
// the fixed values below are checked by a second derivation, not only recorded:
// - a term is the stem of a content word of a value; its hash is Mix64(FNV-1a("w:" + stem));
//   a body's units are the distinct term hashes (plus identifiers, members and member values,
//   none of which the body below has);
// - a shingle is an ordered pair of adjacent terms (t, u): Mix64(t ^ Mix64(u + C));
// - row i of a MinHash signature is the minimum over its items of Mix64(item ^ G * (i + 1));
// - band b's key starts from Mix64(scope ^ salt ^ (b + 1) * B) and mixes in its 4 rows in
//   order: key = Mix64(key ^ row); the pair bands have salt 0, the unit bands their own;
// - the pair bands come first, then (at most kShortUnits units) the unit bands; a body with
//   neither has one key, Mix64(scope ^ Mix64(normal_hash ^ E)).
uint64_t TermHash(std::string_view stem) {
  std::string bytes = "w:";
  bytes.append(stem);
  return Mix64(Fnv1a64(bytes));
}

void ReferenceBands(const std::vector<uint64_t>& items, int bands, uint64_t scope, uint64_t salt,
                    std::vector<int64_t>& keys) {
  if (items.empty()) return;
  for (int band = 0; band < bands; ++band) {
    uint64_t key = Mix64(scope ^ salt ^ (static_cast<uint64_t>(band) + 1) * 0xd6e8feb86659fd93ull);
    for (int row = 0; row < kRowsPerBand; ++row) {
      const uint64_t i = static_cast<uint64_t>(band * kRowsPerBand + row);
      uint64_t minimum = ~0ull;
      for (uint64_t item : items) {
        minimum = std::min(minimum, Mix64(item ^ (0x9e3779b97f4a7c15ull * (i + 1))));
      }
      key = Mix64(key ^ minimum);
    }
    keys.push_back(static_cast<int64_t>(key));
  }
}

std::vector<int64_t> ReferenceKeys(const std::vector<std::string>& stems, uint64_t normal_hash,
                                   uint64_t scope) {
  std::vector<uint64_t> terms, pairs;
  for (const std::string& stem : stems) terms.push_back(TermHash(stem));
  for (size_t i = 0; i + 1 < terms.size(); ++i) {
    pairs.push_back(Mix64(terms[i] ^ Mix64(terms[i + 1] + 0x2545f4914f6cdd1dull)));
  }
  std::vector<uint64_t> units = terms;
  std::sort(units.begin(), units.end());
  units.erase(std::unique(units.begin(), units.end()), units.end());
  std::vector<int64_t> keys;
  ReferenceBands(pairs, kBands, scope, 0, keys);
  if (units.size() <= kShortUnits) {
    ReferenceBands(units, kShortBands, scope, 0x8cb92ba72f3d8dd7ull, keys);
  }
  if (keys.empty()) {
    keys.push_back(static_cast<int64_t>(Mix64(scope ^ Mix64(normal_hash ^ 0x5bd1e995ull))));
  }
  return keys;
}

constexpr char kFox[] = "The quick brown fox jumps over the lazy dog.";

TEST(BandKeys, AreAFixedValueForAFixedInput) {
  // A change here changes every stored key: it needs a new kScheme so that stores rebuild
  // their signatures.
  EXPECT_STREQ(kScheme, "minhash-pairs-8x4-values-8x4-v4");
  EXPECT_EQ(kBands, 8);
  EXPECT_EQ(kRowsPerBand, 4);
  EXPECT_EQ(kShortBands, 8);
  EXPECT_EQ(kShortUnits, 24u);
  // "the" is filler; "jumps" and "lazy" stem to "jump" and "lazi": 7 terms, 6 pairs, 7 units
  // (at most kShortUnits): 8 pair bands, then 8 unit bands.
  const std::vector<int64_t> keys = TextKeys(kFox);
  EXPECT_THAT(
      keys,
      ElementsAre(
          // 8 pair bands:
          -6867076372420313409, -6734505590836133976, 5930698365080033280, 6696016595571795526,
          7470560455010614145, -8590344417013856681, 1832002536101555216, 7602165217599933500,
          // 8 unit bands:
          -3856393597824204234, 2361960406888459445, -5432716812746599911, 8268175501481261926,
          8559126319881727719, 3095781738241769902, 6125831005680041801, -6851285219443002884));
  EXPECT_EQ(keys, ReferenceKeys({"quick", "brown", "fox", "jump", "over", "lazi", "dog"}, kHash,
                                Facts()));
  // A body with nothing to band: the one key of its normal hash.
  EXPECT_THAT(TextKeys("", kHash), ElementsAre(8820134695866534921));
  EXPECT_EQ(TextKeys("", kHash), ReferenceKeys({}, kHash, Facts()));
}

TEST(BandKeys, FollowTheDescribedSchemeForBodiesOfEveryShape) {
  EXPECT_EQ(TextKeys("alpha beta"), ReferenceKeys({"alpha", "beta"}, kHash, Facts()));
  EXPECT_EQ(TextKeys("alpha"), ReferenceKeys({"alpha"}, kHash, Facts()));
  EXPECT_EQ(TextKeys(""), ReferenceKeys({}, kHash, Facts()));
  // 30 distinct words: more than kShortUnits units, so no unit bands.
  std::string text;
  std::vector<std::string> stems;
  for (int i = 0; i < 30; ++i) {
    absl::StrAppend(&text, "word", std::string(1, static_cast<char>('a' + i % 26)),
                    std::string(1, static_cast<char>('a' + i / 26)), " ");
    stems.push_back(text::Stem(text::Words(text).back()));
  }
  EXPECT_EQ(TextKeys(text), ReferenceKeys(stems, kHash, Facts()));
}

TEST(BandKeys, AreDeterministic) {
  const std::string text = "deploys go through the staging cluster first";
  EXPECT_EQ(TextKeys(text), TextKeys(text));
  EXPECT_EQ(BandKeys(UnitsOf(Json(text)), kHash, Facts()),
            BandKeys(UnitsOf(Json(text)), kHash, Facts()));
}

TEST(BandKeys, HowManyKeysABodyHas) {
  // A long body: the pair bands.
  std::string long_text;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&long_text, "term", i * 7919, " ");
  ASSERT_GT(UnitsOf(Json(long_text)).units.size(), kShortUnits);
  EXPECT_EQ(TextKeys(long_text).size(), static_cast<size_t>(kBands));
  // A short body (at most kShortUnits units): unit bands too.
  EXPECT_EQ(TextKeys("a longer body with several distinct words in it").size(),
            static_cast<size_t>(kBands + kShortBands));
  EXPECT_EQ(BandKeys(UnitsOf(R"({"title":"senior engineer"})"), kHash, Facts()).size(),
            static_cast<size_t>(kBands + kShortBands));
  // One term: no pair, so only the unit bands; a number is a term too.
  EXPECT_EQ(TextKeys("one").size(), static_cast<size_t>(kShortBands));
  EXPECT_EQ(TextKeys("the one").size(), static_cast<size_t>(kShortBands));
  EXPECT_EQ(BandKeys(UnitsOf(R"({"n":5})"), kHash, Facts()).size(),
            static_cast<size_t>(kShortBands));
  // A repeated term is one pair.
  EXPECT_EQ(TextKeys("go go").size(), static_cast<size_t>(kBands + kShortBands));
  // Nothing to band: one key.
  EXPECT_EQ(TextKeys("").size(), 1u);
}

TEST(BandKeys, ABodyWithoutUnitsHasOneKeyOfItsNormalHashAndScope) {
  const std::vector<int64_t> empty = TextKeys("", kHash);
  ASSERT_EQ(empty.size(), 1u);
  for (std::string_view text :
       {"   ", "\n\t", "!?.,;:-- () [] {} \"'", "the of and is also really"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(TextKeys(text, kHash), empty);
  }
  EXPECT_EQ(BandKeys(UnitsOf("{}"), kHash, Facts()), empty);
  EXPECT_EQ(BandKeys(UnitsOf("[null, {}]"), kHash, Facts()), empty);
  EXPECT_EQ(BandKeys(ContentUnits{}, kHash, Facts()), empty);
  EXPECT_NE(TextKeys("", kHash + 1), empty);
  EXPECT_NE(TextKeys("", kHash, ScopeHash("notes", "")), empty);
}

TEST(BandKeys, ABodyWithUnitsHasNoKeyOfItsNormalHash) {
  // Identical bodies share every band: the normal hash is not needed to meet.
  for (std::string_view text : {"some text", "one", kFox}) {
    SCOPED_TRACE(text);
    const std::vector<int64_t> keys = TextKeys(text, kHash);
    EXPECT_EQ(TextKeys(text, kHash + 1), keys);
    EXPECT_THAT(keys, Not(Contains(TextKeys("", kHash).front())));
  }
}

TEST(BandKeys, EveryKeyDependsOnTheScope) {
  for (std::string_view text : {"the cache is warmed at startup", "cache", kFox, ""}) {
    SCOPED_TRACE(text);
    const std::vector<int64_t> facts = TextKeys(text, kHash, ScopeHash("facts", ""));
    for (uint64_t other : {ScopeHash("notes", ""), ScopeHash("facts", "team-a")}) {
      const std::vector<int64_t> keys = TextKeys(text, kHash, other);
      ASSERT_EQ(keys.size(), facts.size());
      for (size_t i = 0; i < keys.size(); ++i) EXPECT_NE(keys[i], facts[i]) << "key " << i;
      EXPECT_FALSE(ShareAKey(keys, facts));
    }
  }
}

TEST(BandKeys, PairKeysIgnoreCaseWhitespaceAndPunctuation) {
  const std::vector<int64_t> plain = PairKeys(TextKeys("Hello World again"));
  for (std::string_view text : {"hello world again", "  HELLO\n\tworld   Again \n",
                                "Hello, world! Again?", "(hello)-[world]-{again}"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(PairKeys(TextKeys(text, kHash + 1)), plain);
  }
}

TEST(BandKeys, PairKeysIgnoreFillerWordsAndWordForms) {
  const std::vector<int64_t> plain = PairKeys(TextKeys("cache warmed startup"));
  for (std::string_view text :
       {"The cache is warmed at startup.", "the cache is really also warmed at the startup",
        "caches warming startups"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(PairKeys(TextKeys(text, kHash + 1)), plain);
  }
}

TEST(BandKeys, PairKeysIgnoreMemberNames) {
  // Pairs are over value terms; member names are units, not terms.
  EXPECT_EQ(PairKeys(BandKeys(UnitsOf(R"({"note":"cache warmed startup"})"), kHash, Facts())),
            PairKeys(TextKeys("cache warmed startup")));
}

TEST(BandKeys, PairKeysChangeWithAContentWord) {
  const std::vector<int64_t> a = PairKeys(TextKeys("alpha beta gamma"));
  EXPECT_NE(PairKeys(TextKeys("alpha beta delta")), a);
  EXPECT_NE(PairKeys(TextKeys("alpha beta gamma delta")), a);
  EXPECT_NE(PairKeys(TextKeys("alpha gamma")), a);
  // A negation or a pronoun is a content word.
  EXPECT_NE(PairKeys(TextKeys("alpha not beta gamma")), a);
  EXPECT_NE(PairKeys(TextKeys("she alpha beta gamma")), a);
  // Digits and non-ASCII bytes are part of words; other bytes split them.
  EXPECT_NE(PairKeys(TextKeys("v2 release")), PairKeys(TextKeys("v 2 release")));
  EXPECT_NE(PairKeys(TextKeys("na\xc3\xafve idea")), PairKeys(TextKeys("na ve idea")));
}

TEST(BandKeys, PairKeysChangeWithWordOrderButUnitKeysDoNot) {
  // Pairs are ordered: the same words in another order are other pairs. The units are a set.
  const std::vector<int64_t> forward = TextKeys("alpha beta gamma");
  const std::vector<int64_t> backward = TextKeys("gamma beta alpha");
  EXPECT_NE(PairKeys(forward), PairKeys(backward));
  EXPECT_FALSE(ShareAKey(PairKeys(TextKeys("alpha beta")), PairKeys(TextKeys("beta alpha"))));
  EXPECT_EQ(UnitKeys(forward), UnitKeys(backward));
  // Repeats are units once, but add pairs.
  EXPECT_EQ(UnitKeys(TextKeys("alpha beta gamma beta")), UnitKeys(forward));
  EXPECT_NE(PairKeys(TextKeys("alpha beta gamma beta")), PairKeys(forward));
}

TEST(BandKeys, AllKeysOfABodyAreDistinct) {
  for (std::string_view text : {"one two three", "one", kFox}) {
    SCOPED_TRACE(text);
    const std::vector<int64_t> keys = TextKeys(text);
    EXPECT_EQ(std::set<int64_t>(keys.begin(), keys.end()).size(), keys.size());
  }
}

// ---------------------------------------------------------------------------------------------
// Trigrams

constexpr uint32_t Pack(char a, char b, char c) {
  return static_cast<uint32_t>(static_cast<unsigned char>(a)) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b)) << 8 | static_cast<unsigned char>(c);
}

TEST(Trigrams, PackEachTrigramInto24Bits) {
  EXPECT_THAT(Trigrams("abc"), ElementsAre(0x616263u));
  EXPECT_THAT(Trigrams("abcd"), ElementsAre(Pack('a', 'b', 'c'), Pack('b', 'c', 'd')));
}

TEST(Trigrams, AreSortedAndDistinct) {
  EXPECT_THAT(Trigrams("cabcab"),
              ElementsAre(Pack('a', 'b', 'c'), Pack('b', 'c', 'a'), Pack('c', 'a', 'b')));
  EXPECT_THAT(Trigrams("aaaaaa"), ElementsAre(Pack('a', 'a', 'a')));
}

TEST(Trigrams, LowercaseAscii) {
  EXPECT_EQ(Trigrams("Hello WORLD"), Trigrams("hello world"));
  EXPECT_THAT(Trigrams("ABC"), ElementsAre(Pack('a', 'b', 'c')));
}

TEST(Trigrams, CollapseWhitespaceRunsToOneSpace) {
  EXPECT_THAT(Trigrams("a \t\n\r\f\v b"), ElementsAre(Pack('a', ' ', 'b')));
  EXPECT_EQ(Trigrams("hello\n\n  world\tagain"), Trigrams("hello world again"));
}

TEST(Trigrams, DropLeadingAndTrailingWhitespace) {
  EXPECT_THAT(Trigrams("  abc \n"), ElementsAre(Pack('a', 'b', 'c')));
  EXPECT_EQ(Trigrams("\t hello world  \n"), Trigrams("hello world"));
}

TEST(Trigrams, KeepPunctuationAndNonAsciiBytes) {
  EXPECT_THAT(Trigrams("a,b"), ElementsAre(Pack('a', ',', 'b')));
  EXPECT_NE(Trigrams("a,b"), Trigrams("a b"));
  // U+00C9 is not lowercased (ASCII only): its two bytes are kept as they are.
  EXPECT_THAT(Trigrams("\xc3\x89t"), ElementsAre(Pack('\xc3', '\x89', 't')));
}

TEST(Trigrams, ShorterThanThreeIsOnePackedValue) {
  EXPECT_THAT(Trigrams("ab"), ElementsAre(0x6162u));
  EXPECT_THAT(Trigrams("A"), ElementsAre(0x61u));
  EXPECT_THAT(Trigrams("  Ab \n"), ElementsAre(0x6162u));
  // Two letters around a collapsed run are three characters.
  EXPECT_THAT(Trigrams(" a \t b "), ElementsAre(Pack('a', ' ', 'b')));
}

TEST(Trigrams, EmptyOrBlankTextHasNone) {
  EXPECT_THAT(Trigrams(""), IsEmpty());
  EXPECT_THAT(Trigrams(" \t\n "), IsEmpty());
}

// ---------------------------------------------------------------------------------------------
// Jaccard

TEST(Jaccard, BothEmptyIsOne) { EXPECT_EQ(Jaccard({}, {}), 1.0); }

TEST(Jaccard, OneEmptyIsZero) {
  EXPECT_EQ(Jaccard({}, {1, 2}), 0.0);
  EXPECT_EQ(Jaccard({1, 2}, {}), 0.0);
}

TEST(Jaccard, DisjointIsZero) { EXPECT_EQ(Jaccard({1, 3, 5}, {2, 4, 6}), 0.0); }

TEST(Jaccard, IdenticalIsOne) { EXPECT_EQ(Jaccard({1, 7, 9}, {1, 7, 9}), 1.0); }

TEST(Jaccard, PartialOverlapIsIntersectionOverUnion) {
  EXPECT_DOUBLE_EQ(Jaccard({1, 2, 3}, {2, 3, 4}), 2.0 / 4.0);
  EXPECT_DOUBLE_EQ(Jaccard({2, 4}, {1, 2, 3, 4}), 2.0 / 4.0);
  EXPECT_DOUBLE_EQ(Jaccard({1, 2}, {2, 3, 4, 5, 6}), 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(Jaccard({10, 20, 30, 40}, {5, 20, 40, 50, 60}), 2.0 / 7.0);
}

TEST(Jaccard, IsSymmetric) {
  const std::vector<uint32_t> a = {1, 4, 5, 8, 9}, b = {2, 4, 8, 10};
  EXPECT_DOUBLE_EQ(Jaccard(a, b), Jaccard(b, a));
  EXPECT_DOUBLE_EQ(Jaccard(a, b), 2.0 / 7.0);
}

TEST(Jaccard, OfTrigramsOfHandCheckedTexts) {
  // {abc, bcd} and {abc, bce}.
  EXPECT_DOUBLE_EQ(TrigramJaccard("abcd", "abce"), 1.0 / 3.0);
  // {abc, bcd, cde} and {abc, bcd}: case and surrounding space do not count.
  EXPECT_DOUBLE_EQ(TrigramJaccard("ABCDE", "  abcd "), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(TrigramJaccard("same text", "SAME\ttext"), 1.0);
}

// ---------------------------------------------------------------------------------------------
// The LSH properties: near-duplicates share a band key; bodies from a small shared vocabulary
// and unrelated bodies do not.

// Pseudo-random numbers that are the same on every platform: mt19937_64 is specified by the
// standard, its distributions are not, so they are done here.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, 1).
  double Real() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n).
  size_t Below(size_t n) { return std::min(n - 1, static_cast<size_t>(Real() * n)); }
  // Uniform in [lo, hi].
  int Between(int lo, int hi) { return lo + static_cast<int>(Below(hi - lo + 1)); }
  bool Chance(double p) { return Real() < p; }

 private:
  std::mt19937_64 engine_;
};

// Pronounceable pseudo-words, distinct, of 1 to 4 syllables, none of them filler words or
// negations (a pseudo-word may come out as "the" or "no"), so that each is a content word.
std::vector<std::string> MakeVocabulary(Rng& rng, size_t size) {
  static constexpr std::string_view kOnsets[] = {
      "b", "c", "d", "f", "g",  "h",  "j",  "k",  "l",  "m",  "n",  "p",  "r",  "s",
      "t", "v", "w", "z", "br", "ch", "st", "tr", "pl", "gr", "sh", "th", "qu", ""};
  static constexpr std::string_view kVowels[] = {"a", "e", "i", "o", "u", "ai", "ea", "ou", "y"};
  static constexpr std::string_view kCodas[] = {"",  "",  "",  "n",  "r",  "s",
                                                "t", "l", "m", "ck", "nd", "st"};
  std::set<std::string> seen;
  std::vector<std::string> words;
  while (words.size() < size) {
    std::string word;
    const int syllables = rng.Between(1, 4);
    for (int i = 0; i < syllables; ++i) {
      word.append(kOnsets[rng.Below(std::size(kOnsets))]);
      word.append(kVowels[rng.Below(std::size(kVowels))]);
    }
    word.append(kCodas[rng.Below(std::size(kCodas))]);
    if (text::IsFillerWord(word) || text::IsNegation(word)) continue;
    if (seen.insert(word).second) words.push_back(std::move(word));
  }
  return words;
}

// Filler words that natural text scatters between its content words.
constexpr std::string_view kFillers[] = {"the", "a",   "of",   "and",  "is",     "to",
                                         "in",  "for", "with", "also", "really", "on"};

// How often each vocabulary word is drawn.
enum class Frequencies {
  kUniform,
  kZipf,  // The r-th word in proportion to 1/r, as in natural text: a few very common words.
};

// A body as words, the separator after each (the last one's is trailing text), and leading
// text; `content[i]` says whether word i is a content word (not one of kFillers).
struct Body {
  std::string lead;
  std::vector<std::string> words;
  std::vector<std::string> seps;
  std::vector<bool> content;

  std::string Render() const {
    std::string out = lead;
    for (size_t i = 0; i < words.size(); ++i) absl::StrAppend(&out, words[i], seps[i]);
    return out;
  }
  std::vector<size_t> ContentPositions() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < words.size(); ++i) {
      if (content[i]) out.push_back(i);
    }
    return out;
  }
};

// Random bodies from a vocabulary of 4,000 pseudo-words, and random edits of them.
class Corpus {
 public:
  Corpus(uint64_t seed, Frequencies frequencies)
      : rng_(seed), vocabulary_(MakeVocabulary(rng_, 4000)) {
    if (frequencies == Frequencies::kZipf) {
      double total = 0;
      for (size_t r = 1; r <= vocabulary_.size(); ++r) {
        total += 1.0 / static_cast<double>(r);
        cumulative_.push_back(total);
      }
      for (double& c : cumulative_) c /= total;
    }
  }

  Rng& rng() { return rng_; }

  std::string Word() {
    if (cumulative_.empty()) return vocabulary_[rng_.Below(vocabulary_.size())];
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), rng_.Real());
    return vocabulary_[std::min(vocabulary_.size() - 1,
                                static_cast<size_t>(it - cumulative_.begin()))];
  }

  // `min_words` to `max_words` content words in sentences; before each, with probability
  // `filler`, a filler word.
  Body RandomBody(int min_words, int max_words, double filler = 0) {
    Body body;
    const int n = rng_.Between(min_words, max_words);
    bool capital = true;
    for (int i = 0; i < n; ++i) {
      if (rng_.Chance(filler)) {
        Append(body, std::string(kFillers[rng_.Below(std::size(kFillers))]), false, capital, " ");
        capital = false;
      }
      const bool last = i + 1 == n;
      const bool stop = !last && rng_.Chance(0.06);
      std::string_view sep = " ";
      if (last) {
        sep = ".";
      } else if (stop) {
        sep = ". ";
      } else if (rng_.Chance(0.08)) {
        sep = ", ";
      }
      Append(body, Word(), true, capital, std::string(sep));
      capital = stop;
    }
    return body;
  }

  // `body` after `edits` content-word edits (each a substitution by another word, an
  // insertion or a deletion), and up to three changes that leave its content alone: case,
  // whitespace, punctuation, a filler word added or dropped.
  Body EditWords(Body body, int edits) {
    for (int e = 0; e < edits; ++e) {
      const std::vector<size_t> positions = body.ContentPositions();
      const size_t at = positions[rng_.Below(positions.size())];
      const auto it = static_cast<std::ptrdiff_t>(at);
      switch (rng_.Below(3)) {
        case 0: {
          std::string word = Word();
          while (word == body.words[at]) word = Word();
          body.words[at] = std::move(word);
          break;
        }
        case 1:
          body.words.insert(body.words.begin() + it, Word());
          body.seps.insert(body.seps.begin() + it, " ");
          body.content.insert(body.content.begin() + it, true);
          break;
        default:
          if (positions.size() > 1) {
            body.words.erase(body.words.begin() + it);
            // The deleted word's separator survives when it ended a sentence.
            if (at > 0 && body.seps[at].find('.') != std::string::npos) {
              body.seps[at - 1] = body.seps[at];
            }
            body.seps.erase(body.seps.begin() + it);
            body.content.erase(body.content.begin() + it);
          }
          break;
      }
    }
    const int cosmetic = rng_.Between(0, 3);
    for (int c = 0; c < cosmetic; ++c) {
      const size_t at = rng_.Below(body.words.size());
      std::string& word = body.words[at];
      switch (rng_.Below(5)) {
        case 0:
          for (char& ch : word) ch = absl::ascii_toupper(static_cast<unsigned char>(ch));
          break;
        case 1: {
          static constexpr std::string_view kSpaces[] = {"  ", "\n", " \t ", "\n\n", "   "};
          std::string& sep = body.seps[at];
          if (!sep.empty() && sep.back() == ' ') {
            sep.pop_back();
            sep.append(kSpaces[rng_.Below(std::size(kSpaces))]);
          }
          break;
        }
        case 2: {
          std::string& sep = body.seps[at];
          if (sep == " ") sep = rng_.Chance(0.5) ? ", " : "; ";
          break;
        }
        case 3: {
          const auto it = static_cast<std::ptrdiff_t>(at);
          body.words.insert(body.words.begin() + it,
                            std::string(kFillers[rng_.Below(std::size(kFillers))]));
          body.seps.insert(body.seps.begin() + it, " ");
          body.content.insert(body.content.begin() + it, false);
          break;
        }
        default:
          if (!body.content[at] && body.words.size() > 1) {
            body.words.erase(body.words.begin() + static_cast<std::ptrdiff_t>(at));
            body.seps.erase(body.seps.begin() + static_cast<std::ptrdiff_t>(at));
            body.content.erase(body.content.begin() + static_cast<std::ptrdiff_t>(at));
          } else {
            body.lead = rng_.Chance(0.5) ? "  " : "\n";
          }
          break;
      }
    }
    return body;
  }

 private:
  static void Append(Body& body, std::string word, bool content, bool capital, std::string sep) {
    if (capital) word[0] = absl::ascii_toupper(static_cast<unsigned char>(word[0]));
    body.words.push_back(std::move(word));
    body.seps.push_back(std::move(sep));
    body.content.push_back(content);
  }

  Rng rng_;
  std::vector<std::string> vocabulary_;
  std::vector<double> cumulative_;  // Zipf only: P(rank <= r), r = 1, 2, ...
};

struct Signed {
  std::vector<uint32_t> trigrams;
  std::vector<int64_t> keys;
};

// A body's trigrams and keys as the write path computes them: over the parsed body.
Signed Sign(std::string_view body_json, uint64_t scope) {
  absl::StatusOr<text::ParsedBody> body = text::ParseBody(body_json);
  EXPECT_TRUE(body.ok()) << body.status();
  if (!body.ok()) return {};
  return {.trigrams = Trigrams(body->normal_json),
          .keys = BandKeys(Analyze(*body), body->normal_hash, scope)};
}

constexpr double kThreshold = 0.70;
constexpr uint64_t kSeeds[] = {1, 20260301, 777};

double Rate(int64_t part, int64_t whole) {
  return static_cast<double>(part) / static_cast<double>(std::max<int64_t>(1, whole));
}

// Pairs of near-duplicates, and the misses among them (pairs sharing no band key: a
// near-duplicate the write path would not even verify).
struct Tally {
  int64_t pairs = 0;
  int64_t misses = 0;

  void Add(bool miss) {
    ++pairs;
    misses += miss;
  }
  double found() const { return 1.0 - Rate(misses, pairs); }
};

// Near-duplicates, as the rule means them: a body of 20 to 120 content words (Zipf
// frequencies, a filler word before one word in four: natural-ish text) and the same body
// with one or two content words changed, added or removed, and changes of case, whitespace,
// punctuation and filler words. Returns the fraction that share a band key, over the fixed
// seeds, and prints it by number of edits, length and trigram similarity.
double NearDuplicatesSharingABandKey() {
  constexpr int kBodiesPerSeed = 4000;
  const uint64_t scope = Facts();
  Tally all, by_edits[3], by_length[3], at_threshold;
  constexpr int kLengthEdges[] = {40, 80, 1000};
  for (uint64_t seed : kSeeds) {
    Corpus corpus(seed, Frequencies::kZipf);
    for (int b = 0; b < kBodiesPerSeed; ++b) {
      const Body body = corpus.RandomBody(20, 120, 0.25);
      const int edits = corpus.rng().Between(1, 2);
      const Body edited = corpus.EditWords(body, edits);
      const Signed x = Sign(Json(body.Render()), scope);
      const Signed y = Sign(Json(edited.Render()), scope);
      const bool miss = !ShareAKey(x.keys, y.keys);
      all.Add(miss);
      by_edits[edits].Add(miss);
      const int n = static_cast<int>(body.ContentPositions().size());
      size_t l = 0;
      while (n > kLengthEdges[l]) ++l;
      by_length[l].Add(miss);
      if (Jaccard(x.trigrams, y.trigrams) >= kThreshold) at_threshold.Add(miss);
    }
  }
  for (int e = 1; e <= 2; ++e) {
    std::printf("  %d edit(s): %6lld pairs, %.4f share a band key\n", e,
                static_cast<long long>(by_edits[e].pairs), by_edits[e].found());
  }
  constexpr const char* kLengthNames[] = {"20-40 words", "41-80 words", "81-120 words"};
  for (size_t l = 0; l < std::size(kLengthNames); ++l) {
    std::printf("  %-12s %6lld pairs, %.4f share a band key\n", kLengthNames[l],
                static_cast<long long>(by_length[l].pairs), by_length[l].found());
  }
  std::printf("  trigram similarity >= %.2f: %lld pairs, %.4f share a band key\n", kThreshold,
              static_cast<long long>(at_threshold.pairs), at_threshold.found());
  std::printf("near-duplicates sharing a band key: %lld of %lld = %.4f\n",
              static_cast<long long>(all.pairs - all.misses), static_cast<long long>(all.pairs),
              all.found());
  ::testing::Test::RecordProperty("near_duplicate_pairs", absl::StrCat(all.pairs));
  ::testing::Test::RecordProperty("near_duplicates_found", absl::StrFormat("%.5f", all.found()));
  return all.found();
}

TEST(BandKeysProperty, NearDuplicatesShareABandKey) {
  // Measured: 11,997 of 12,000 over these seeds (0.9998; the 3 misses have two edits in
  // 20-80 words). The bound is a little below, so that a scheme that finds fewer fails (the
  // rule asks for 0.97).
  EXPECT_GE(NearDuplicatesSharingABandKey(), 0.998);
}

// Perseus Vault's scale corpus: every body's words drawn uniformly from these. Its description
// calls them 60 but lists 47, as benchmark/scale/corpus.py does: fewer words, more shared pairs.
constexpr std::string_view kPerseusWords[] = {
    "service", "latency",   "schema",  "deploy",   "index",    "queue",     "worker",  "retry",
    "cache",   "shard",     "vault",   "memory",   "recall",   "decay",     "layer",   "topic",
    "entity",  "journal",   "replica", "merge",    "postgres", "sqlite",    "onnx",    "embedding",
    "vector",  "keyword",   "hybrid",  "ranking",  "fusion",   "timeout",   "breaker", "fallback",
    "config",  "workspace", "scope",   "audit",    "chain",    "commit",    "release", "binary",
    "stdio",   "transport", "tool",    "argument", "budget",   "threshold", "gate"};

// 40 to 120 words drawn uniformly from kPerseusWords, space-separated.
std::string PerseusWords(Rng& rng) {
  std::string out;
  const int n = rng.Between(40, 120);
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += ' ';
    out += kPerseusWords[rng.Below(std::size(kPerseusWords))];
  }
  return out;
}

// Memory i of Perseus Vault's scale corpus. The nonce stands in for SHA-1's first
// 16 hex digits: any 16 hex digits that differ per memory say as much.
std::string PerseusBody(Rng& rng, int i) {
  nlohmann::json body = {{"text", absl::StrCat("[", i, "] ", PerseusWords(rng))},
                         {"detail", absl::StrCat("entity ", i, " in group ", i % 977)},
                         {"nonce", absl::StrFormat("%016x", Mix64(static_cast<uint64_t>(i)))}};
  return body.dump();
}

// Over `bodies` bodies made by `make`, the pairs that share a band key, counted from a map
// of key to bodies (an upper bound: a pair sharing two keys counts twice), as a fraction of
// all pairs.
template <typename MakeBody>
double SharedKeyRate(const char* name, int bodies, MakeBody make) {
  const uint64_t scope = Facts();
  std::unordered_map<int64_t, int64_t> count;
  count.reserve(static_cast<size_t>(bodies) * (kBands + kShortBands));
  int64_t short_bodies = 0;
  for (int b = 0; b < bodies; ++b) {
    const std::vector<int64_t> keys = Sign(make(b), scope).keys;
    short_bodies += keys.size() > static_cast<size_t>(kBands);
    for (int64_t key : keys) ++count[key];
  }
  int64_t sharing = 0;
  for (const auto& [key, n] : count) sharing += n * (n - 1) / 2;
  const int64_t pairs = static_cast<int64_t>(bodies) * (bodies - 1) / 2;
  const double rate = Rate(sharing, pairs);
  std::printf("%s: %lld of %lld pairs share a band key = %.3g (%lld bodies with unit bands)\n",
              name, static_cast<long long>(sharing), static_cast<long long>(pairs), rate,
              static_cast<long long>(short_bodies));
  ::testing::Test::RecordProperty(absl::StrCat(name, "_pairs"), absl::StrCat(pairs));
  ::testing::Test::RecordProperty(absl::StrCat(name, "_sharing"), absl::StrCat(sharing));
  return rate;
}

TEST(BandKeysProperty, PerseusCorpusBodiesAlmostNeverShareABandKey) {
  // Every body holds most of the 47 words, so words alone (or character trigrams) make
  // every pair look alike; ordered pairs of words do not: two bodies share ~3 of their ~80
  // pairs (Jaccard ~0.02). Measured: 10 of 7,998,000 pairs over 4,000 bodies (1.3e-6).
  Rng rng(13);
  EXPECT_LE(SharedKeyRate("perseus", 4000, [&](int i) { return PerseusBody(rng, i); }), 1e-4);
}

TEST(BandKeysProperty, BareSmallVocabularyTextsAlmostNeverShareABandKey) {
  // The same words without the per-memory detail and nonce: nothing but the shared
  // vocabulary to tell bodies apart. Measured: 29 of 7,998,000 pairs (3.6e-6); a body of
  // few words can hold at most kShortUnits distinct ones and get unit bands (15 of 4,000).
  Rng rng(60);
  EXPECT_LE(SharedKeyRate("perseus_text", 4000, [&](int) { return Json(PerseusWords(rng)); }),
            1e-4);
}

TEST(BandKeysProperty, ShortBodiesOfOneShapeRarelyShareABandKey) {
  // A store of structured memories: every body has the same members, and values drawn from
  // a few choices. Member names are not band units, nor are the words of short values again
  // (their member=value units stand for them): when they were, every pair shared 4 of ~16
  // units and every write verified the candidate cap. Pairs agreeing on title, team and
  // level (1 in 280) are near twins and may share a key; others should not.
  const char* const titles[] = {"senior engineer", "staff engineer", "engineer", "manager",
                                "director"};
  const char* const teams[] = {"storage", "compute", "network", "billing",
                               "search",  "infra",   "mobile",  "web"};
  Rng rng(280);
  EXPECT_LE(SharedKeyRate("one_shape", 3000,
                          [&](int i) {
                            return nlohmann::json{{"name", absl::StrCat("person ", i)},
                                                  {"title", titles[rng.Below(5)]},
                                                  {"team", teams[rng.Below(8)]},
                                                  {"level", rng.Between(1, 7)}}
                                .dump();
                          }),
            0.01);
}

// The rate at which pairs of unrelated random bodies (5 to 120 words) share a band key
// (candidates a write would verify for nothing), over the fixed seeds.
double BackgroundCollisionRate(Frequencies frequencies) {
  constexpr int64_t kBodies = 4000;
  const uint64_t scope = Facts();
  int64_t pairs = 0, colliding = 0;
  for (uint64_t seed : kSeeds) {
    Corpus corpus(seed ^ 0x5eed, frequencies);
    std::unordered_map<int64_t, std::vector<int>> by_key;
    for (int b = 0; b < kBodies; ++b) {
      for (int64_t key : Sign(Json(corpus.RandomBody(5, 120).Render()), scope).keys) {
        by_key[key].push_back(b);
      }
    }
    std::set<std::pair<int, int>> shared;
    for (const auto& [key, bodies] : by_key) {
      for (size_t i = 0; i < bodies.size(); ++i) {
        for (size_t j = i + 1; j < bodies.size(); ++j) shared.emplace(bodies[i], bodies[j]);
      }
    }
    pairs += kBodies * (kBodies - 1) / 2;
    colliding += static_cast<int64_t>(shared.size());
  }
  const double rate = Rate(colliding, pairs);
  std::printf("background: %lld of %lld unrelated pairs share a band key = %.3g\n",
              static_cast<long long>(colliding), static_cast<long long>(pairs), rate);
  ::testing::Test::RecordProperty("unrelated_pairs", absl::StrCat(pairs));
  ::testing::Test::RecordProperty("unrelated_pairs_sharing_a_key", absl::StrCat(colliding));
  ::testing::Test::RecordProperty("background_collision_rate", absl::StrFormat("%.3g", rate));
  return rate;
}

TEST(BandKeysProperty, UnrelatedBodiesRarelyShareABandKey) {
  // Measured: 0 of 23,994,000 pairs.
  EXPECT_LT(BackgroundCollisionRate(Frequencies::kUniform), 1e-4);
}

TEST(BandKeysProperty, UnrelatedZipfBodiesShareABandKeyLessThanOnceInTenThousandPairs) {
  // Common words make unrelated bodies overlap, most of all short ones (which have unit
  // bands too). Measured: 855 of 23,994,000 pairs (3.6e-5; words alone, scheme v2: ~7e-4).
  EXPECT_LT(BackgroundCollisionRate(Frequencies::kZipf), 1e-4);
}

}  // namespace
}  // namespace strata::dedup
