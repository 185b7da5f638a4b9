#include "text/analyzer.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_set.h"

#include "text/fts_query.h"
#include "text/stemmer.h"
#include "text/tokenizer.h"

namespace strata::text {
namespace {

constexpr std::array<std::string_view, 8> kNegations = {"no",   "not",    "never",   "nor",
                                                        "none", "nobody", "nothing", "without"};

// Stop words of the keyword arm that carry meaning here: pronouns say who, and negations
// are kept by IsNegation.
constexpr std::array<std::string_view, 17> kMeaningfulStopWords = {
    "he",  "her",   "his",  "i",    "it", "its", "me", "my", "our",
    "she", "their", "them", "they", "we", "you", "no", "not"};

// Fillers beyond the keyword arm's stop words: intensifiers and discourse words that a
// rewording adds or drops without changing the fact. Sorted, so that a duplicate shows.
constexpr std::array<std::string_view, 26> kMoreFillers = {
    "actually",   "again",  "already", "basically", "being", "certainly", "could",
    "definitely", "indeed", "just",    "obviously", "quite", "rather",    "really",
    "should",     "simply", "some",    "still",     "such",  "than",      "these",
    "those",      "too",    "very",    "will",      "would",
};
static_assert(std::is_sorted(kMoreFillers.begin(), kMoreFillers.end()));

template <size_t N>
bool In(const std::array<std::string_view, N>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

}  // namespace

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  ForEachWord(text, [&](const Word& word) {
    if (word.text.size() <= kMaxWordBytes) words.emplace_back(word.text);
  });
  return words;
}

std::string Stem(std::string_view word) { return Stem(Language::kEnglish, word); }

bool IsFillerWord(std::string_view word) {
  if (IsStopWord(word)) return !In(kMeaningfulStopWords, word);
  static const absl::flat_hash_set<std::string_view> kSet(kMoreFillers.begin(), kMoreFillers.end());
  return kSet.contains(word);
}

bool IsNegation(std::string_view word) { return In(kNegations, word); }

std::vector<std::string> ContentTerms(std::string_view text) {
  std::vector<std::string> terms;
  for (const std::string& word : Words(text)) {
    if (!IsFillerWord(word)) terms.push_back(Stem(word));
  }
  return terms;
}

}  // namespace strata::text
