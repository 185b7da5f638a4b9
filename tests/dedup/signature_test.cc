// Tests of dedup/signature.h: the band keys a body is indexed under, the character trigrams
// that verify a candidate, their Jaccard similarity, and the property the write path relies
// on: bodies at or above the trigram threshold almost always share a band key, unrelated
// bodies almost never do.

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

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/hash.h"

namespace strata::dedup {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr uint64_t kHash = 0x0123456789abcdefull;

uint64_t Facts() { return ScopeHash("facts", ""); }

// The MinHash band keys of `keys` (all but the exact-content key, which is last).
std::vector<int64_t> WordKeys(const std::vector<int64_t>& keys) {
  return {keys.begin(), keys.end() - 1};
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

TEST(BandKeys, AreAFixedValueForAFixedInput) {
  // Computed independently from the scheme's description (splitmix64 finalizer over FNV-1a
  // word hashes, 64 salted minima, 16 bands of 4). A change here changes every stored key:
  // it needs a new kScheme so that stores rebuild their signatures.
  EXPECT_STREQ(kScheme, "minhash-values-16x4-v2");
  EXPECT_THAT(BandKeys("The quick brown fox jumps over the lazy dog.", kHash, Facts()),
              ElementsAre(-7252340562700376223, 5998721825707924088, 4128872254468031831,
                          -6547089903512041351, -1725589297114381048, -1873508015183654364,
                          -6594338719434482116, -4812738098177478123, -4477897249095090074,
                          1542657798236564783, 8035548069180384068, -3167289668246468861,
                          1486914895353642489, -2290529509771565876, -868735006215798938,
                          5144429618446703722, 8820134695866534921));
}

TEST(BandKeys, AreDeterministic) {
  const std::string text = "deploys go through the staging cluster first";
  EXPECT_EQ(BandKeys(text, kHash, Facts()), BandKeys(text, kHash, Facts()));
}

TEST(BandKeys, TextWithWordsHasOneKeyPerBandThenTheExactKey) {
  EXPECT_EQ(BandKeys("one", kHash, Facts()).size(), static_cast<size_t>(kBands + 1));
  EXPECT_EQ(BandKeys("a longer body with several distinct words in it", kHash, Facts()).size(),
            static_cast<size_t>(kBands + 1));
  EXPECT_EQ(kHashes, kBands * kRowsPerBand);
}

TEST(BandKeys, TextWithoutWordsHasOnlyTheExactKey) {
  const std::vector<int64_t> with_words = BandKeys("words", kHash, Facts());
  for (std::string_view text : {"", "   ", "\n\t", "!?.,;:-- () [] {} \"'"}) {
    SCOPED_TRACE(text);
    EXPECT_THAT(BandKeys(text, kHash, Facts()), ElementsAre(with_words.back()));
  }
}

TEST(BandKeys, EveryKeyDependsOnTheScope) {
  const std::string text = "the cache is warmed at startup";
  const std::vector<int64_t> facts = BandKeys(text, kHash, ScopeHash("facts", ""));
  for (uint64_t other : {ScopeHash("notes", ""), ScopeHash("facts", "team-a")}) {
    const std::vector<int64_t> keys = BandKeys(text, kHash, other);
    ASSERT_EQ(keys.size(), facts.size());
    for (size_t i = 0; i < keys.size(); ++i) EXPECT_NE(keys[i], facts[i]) << "key " << i;
    EXPECT_FALSE(ShareAKey(keys, facts));
  }
}

TEST(BandKeys, WordKeysIgnoreCaseWhitespaceAndPunctuation) {
  const std::vector<int64_t> plain = WordKeys(BandKeys("Hello World again", kHash, Facts()));
  for (std::string_view text : {"hello world again", "  HELLO\n\tworld   Again \n",
                                "Hello, world! Again?", "(hello)-[world]-{again}"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(WordKeys(BandKeys(text, kHash + 1, Facts())), plain);
  }
}

TEST(BandKeys, WordKeysIgnoreOrderAndRepetition) {
  EXPECT_EQ(WordKeys(BandKeys("alpha beta gamma", kHash, Facts())),
            WordKeys(BandKeys("gamma alpha beta beta alpha", kHash, Facts())));
}

TEST(BandKeys, WordKeysChangeWithTheWords) {
  const std::vector<int64_t> a = WordKeys(BandKeys("alpha beta gamma", kHash, Facts()));
  EXPECT_NE(WordKeys(BandKeys("alpha beta delta", kHash, Facts())), a);
  // Digits and non-ASCII bytes are part of words; other bytes split them.
  EXPECT_NE(WordKeys(BandKeys("v2 release", kHash, Facts())),
            WordKeys(BandKeys("v 2 release", kHash, Facts())));
  EXPECT_NE(WordKeys(BandKeys("na\xc3\xafve", kHash, Facts())),
            WordKeys(BandKeys("na ve", kHash, Facts())));
  EXPECT_NE(WordKeys(BandKeys("well-known", kHash, Facts())),
            WordKeys(BandKeys("wellknown", kHash, Facts())));
}

TEST(BandKeys, ExactKeyDependsOnlyOnNormalHashAndScope) {
  const int64_t exact = BandKeys("some text", kHash, Facts()).back();
  EXPECT_EQ(BandKeys("completely different words", kHash, Facts()).back(), exact);
  EXPECT_EQ(BandKeys("", kHash, Facts()).back(), exact);
  EXPECT_NE(BandKeys("some text", kHash + 1, Facts()).back(), exact);
  EXPECT_NE(BandKeys("some text", kHash, ScopeHash("notes", "")).back(), exact);
}

TEST(BandKeys, ExactKeyIsNotAWordKey) {
  const std::vector<int64_t> keys = BandKeys("one two three", kHash, Facts());
  const std::vector<int64_t> words = WordKeys(keys);
  EXPECT_THAT(words, Not(::testing::Contains(keys.back())));
  EXPECT_EQ(std::set<int64_t>(keys.begin(), keys.end()).size(), keys.size());
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
// The LSH property: near-duplicates share a band key, unrelated bodies do not.

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

// Pronounceable pseudo-words, distinct, of 1 to 4 syllables.
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
    if (seen.insert(word).second) words.push_back(std::move(word));
  }
  return words;
}

// How often each vocabulary word is drawn.
enum class Frequencies {
  kUniform,
  kZipf,  // The r-th word in proportion to 1/r, as in natural text: a few very common words.
};

// A body as words, the separator after each (the last one's is trailing text), and leading
// text.
struct Body {
  std::string lead;
  std::vector<std::string> words;
  std::vector<std::string> seps;

  std::string Render() const {
    std::string out = lead;
    for (size_t i = 0; i < words.size(); ++i) absl::StrAppend(&out, words[i], seps[i]);
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

  std::string Word() {
    if (cumulative_.empty()) return vocabulary_[rng_.Below(vocabulary_.size())];
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), rng_.Real());
    return vocabulary_[std::min(vocabulary_.size() - 1,
                                static_cast<size_t>(it - cumulative_.begin()))];
  }

  // 5 to 120 words in sentences.
  Body RandomBody() {
    Body body;
    const int n = rng_.Between(5, 120);
    bool capital = true;
    for (int i = 0; i < n; ++i) {
      std::string word = Word();
      if (capital) word[0] = absl::ascii_toupper(static_cast<unsigned char>(word[0]));
      body.words.push_back(std::move(word));
      capital = false;
      if (i + 1 == n) {
        body.seps.push_back(".");
      } else if (rng_.Chance(0.06)) {
        body.seps.push_back(". ");
        capital = true;
      } else {
        body.seps.push_back(rng_.Chance(0.08) ? ", " : " ");
      }
    }
    return body;
  }

  // `body` after 1 to max(1, 30% of its length) content edits (word substitutions,
  // insertions, deletions, typos), and up to three changes of case or whitespace.
  Body Edit(Body body) {
    const int most = std::max(1, static_cast<int>(body.words.size()) * 3 / 10);
    const int edits = rng_.Between(1, most);
    for (int e = 0; e < edits; ++e) {
      const auto at = static_cast<std::ptrdiff_t>(rng_.Below(body.words.size()));
      switch (rng_.Below(4)) {
        case 0:
          body.words[at] = Word();
          break;
        case 1:
          body.words.insert(body.words.begin() + at, Word());
          body.seps.insert(body.seps.begin() + at, " ");
          break;
        case 2:
          if (body.words.size() > 1) {
            body.words.erase(body.words.begin() + at);
            body.seps.erase(body.seps.begin() + at);
          }
          break;
        default:
          Typo(body.words[at]);
          break;
      }
    }
    const int cosmetic = rng_.Between(0, 3);
    for (int c = 0; c < cosmetic; ++c) {
      std::string& word = body.words[rng_.Below(body.words.size())];
      switch (rng_.Below(4)) {
        case 0:
          for (char& ch : word) ch = absl::ascii_toupper(static_cast<unsigned char>(ch));
          break;
        case 1:
          for (char& ch : word) ch = absl::ascii_tolower(static_cast<unsigned char>(ch));
          break;
        case 2: {
          static constexpr std::string_view kSpaces[] = {"  ", "\n", " \t ", "\n\n", "   "};
          std::string& sep = body.seps[rng_.Below(body.seps.size())];
          if (!sep.empty() && sep.back() == ' ') {
            sep.pop_back();
            sep.append(kSpaces[rng_.Below(std::size(kSpaces))]);
          }
          break;
        }
        default:
          body.lead = rng_.Chance(0.5) ? "  " : "\n";
          break;
      }
    }
    return body;
  }

 private:
  // Substitutes, inserts, deletes or transposes one letter.
  void Typo(std::string& word) {
    const char letter = static_cast<char>('a' + rng_.Below(26));
    const size_t at = rng_.Below(word.size());
    switch (rng_.Below(4)) {
      case 0:
        word[at] = letter;
        break;
      case 1:
        word.insert(word.begin() + static_cast<std::ptrdiff_t>(at), letter);
        break;
      case 2:
        if (word.size() > 1) word.erase(at, 1);
        break;
      default:
        if (at + 1 < word.size()) std::swap(word[at], word[at + 1]);
        break;
    }
  }

  Rng rng_;
  std::vector<std::string> vocabulary_;
  std::vector<double> cumulative_;  // Zipf only: P(rank <= r), r = 1, 2, ...
};

struct Signed {
  std::vector<uint32_t> trigrams;
  std::vector<int64_t> keys;
  size_t words = 0;
};

Signed Sign(const Body& body, uint64_t scope) {
  const std::string text = body.Render();
  return {.trigrams = Trigrams(text),
          .keys = BandKeys(text, Fnv1a64(text), scope),
          .words = body.words.size()};
}

constexpr double kThreshold = 0.70;
constexpr uint64_t kSeeds[] = {1, 20260301, 777};

double Rate(int64_t part, int64_t whole) {
  return static_cast<double>(part) / static_cast<double>(std::max<int64_t>(1, whole));
}

// Pairs at or above the threshold, and the false negatives among them (pairs sharing no
// band key: near-duplicates the write path would miss).
struct Tally {
  int64_t pairs = 0;
  int64_t misses = 0;

  void Add(bool miss) {
    ++pairs;
    misses += miss;
  }
  double rate() const { return Rate(misses, pairs); }
};

// Checks every pair within clusters of near-duplicates (a random body and four edits, each of
// the body or of an earlier edit) whose trigram Jaccard is at least the threshold, over the
// fixed seeds, and asserts that fewer than 3% of them share no band key.
void CheckNearDuplicatesShareABandKey(Frequencies frequencies) {
  constexpr int kClusters = 2500;
  constexpr int kMembers = 5;
  const uint64_t scope = ScopeHash("facts", "");
  Tally all;
  // Breakdowns for the report: by the shorter body's word count, and by similarity.
  constexpr size_t kLengthEdges[] = {15, 40, 1000};
  constexpr double kSimilarityEdges[] = {0.75, 0.80, 0.90, 2};
  Tally by_length[std::size(kLengthEdges)], by_similarity[std::size(kSimilarityEdges)];
  for (uint64_t seed : kSeeds) {
    Corpus corpus(seed, frequencies);
    Tally tally;
    for (int c = 0; c < kClusters; ++c) {
      std::vector<Body> bodies = {corpus.RandomBody()};
      for (int m = 1; m < kMembers; ++m) {
        // An edit of the original or of an earlier edit.
        bodies.push_back(corpus.Edit(bodies[static_cast<size_t>(c + m) % bodies.size()]));
      }
      std::vector<Signed> signatures;
      for (const Body& body : bodies) signatures.push_back(Sign(body, scope));
      for (size_t i = 0; i < signatures.size(); ++i) {
        for (size_t j = i + 1; j < signatures.size(); ++j) {
          const Signed& a = signatures[i];
          const Signed& b = signatures[j];
          const double similarity = Jaccard(a.trigrams, b.trigrams);
          if (similarity < kThreshold) continue;
          const bool miss = !ShareAKey(a.keys, b.keys);
          tally.Add(miss);
          size_t l = 0;
          while (std::min(a.words, b.words) > kLengthEdges[l]) ++l;
          by_length[l].Add(miss);
          size_t s = 0;
          while (similarity >= kSimilarityEdges[s]) ++s;
          by_similarity[s].Add(miss);
        }
      }
    }
    std::printf("seed %llu: %lld pairs >= %.2f, %lld without a shared band key (%.4f)\n",
                static_cast<unsigned long long>(seed), static_cast<long long>(tally.pairs),
                kThreshold, static_cast<long long>(tally.misses), tally.rate());
    EXPECT_GE(tally.pairs, 5000) << "seed " << seed << ": too few pairs to measure";
    EXPECT_LT(tally.rate(), 0.03) << "seed " << seed;
    all.pairs += tally.pairs;
    all.misses += tally.misses;
  }
  constexpr const char* kLengthNames[] = {"5-15 words", "16-40 words", "41+ words"};
  for (size_t l = 0; l < std::size(kLengthEdges); ++l) {
    std::printf("  %-12s %6lld pairs, false negatives %.4f\n", kLengthNames[l],
                static_cast<long long>(by_length[l].pairs), by_length[l].rate());
  }
  constexpr const char* kSimilarityNames[] = {"[0.70,0.75)", "[0.75,0.80)", "[0.80,0.90)",
                                              "[0.90,1.00]"};
  for (size_t s = 0; s < std::size(kSimilarityEdges); ++s) {
    std::printf("  %-12s %6lld pairs, false negatives %.4f\n", kSimilarityNames[s],
                static_cast<long long>(by_similarity[s].pairs), by_similarity[s].rate());
  }
  std::printf("false-negative rate: %lld of %lld pairs = %.4f\n",
              static_cast<long long>(all.misses), static_cast<long long>(all.pairs), all.rate());
  ::testing::Test::RecordProperty("pairs_at_or_above_threshold", absl::StrCat(all.pairs));
  ::testing::Test::RecordProperty("false_negatives", absl::StrCat(all.misses));
  ::testing::Test::RecordProperty("false_negative_rate", absl::StrFormat("%.5f", all.rate()));
  EXPECT_LT(all.rate(), 0.03);
}

// The rate at which pairs of unrelated random bodies share a band key (candidates a write
// would verify for nothing), over the fixed seeds.
double BackgroundCollisionRate(Frequencies frequencies) {
  constexpr int64_t kBodies = 4000;
  const uint64_t scope = ScopeHash("facts", "");
  int64_t pairs = 0, colliding = 0;
  for (uint64_t seed : kSeeds) {
    Corpus corpus(seed ^ 0x5eed, frequencies);
    std::unordered_map<int64_t, std::vector<int>> by_key;
    for (int b = 0; b < kBodies; ++b) {
      const std::string text = corpus.RandomBody().Render();
      for (int64_t key : BandKeys(text, Fnv1a64(text), scope)) by_key[key].push_back(b);
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

TEST(BandKeysProperty, NearDuplicatesAboveThresholdShareABandKey) {
  CheckNearDuplicatesShareABandKey(Frequencies::kUniform);
}

TEST(BandKeysProperty, NearDuplicatesWithZipfWordFrequenciesShareABandKey) {
  CheckNearDuplicatesShareABandKey(Frequencies::kZipf);
}

TEST(BandKeysProperty, UnrelatedBodiesRarelyShareABandKey) {
  EXPECT_LT(BackgroundCollisionRate(Frequencies::kUniform), 1e-4);
}

TEST(BandKeysProperty, UnrelatedZipfBodiesShareABandKeyLessThanOnceInAThousandPairs) {
  // Common words make unrelated bodies overlap (word Jaccard well above 0.03), so collisions
  // are some 1,000 times more frequent than with uniform words (about 7e-4 when written).
  // A write still verifies at most kMaxCandidates; this bound catches a scheme that is worse.
  EXPECT_LT(BackgroundCollisionRate(Frequencies::kZipf), 1e-3);
}

}  // namespace
}  // namespace strata::dedup
