#pragma once
// The word lists of text analysis, in one place: which function words each consumer drops and
// why. Header only, standard library only: the lexicon generator (a build-time tool) compiles
// it too. Lists whose order does not matter are sorted, and checked so, so that a duplicate
// shows. Changing a list changes what is indexed or embedded: the keyword list needs a
// reindex, the embedder's and the lexicon's a new embedder version (builtin_embedder.cc).

#include <algorithm>
#include <array>
#include <string_view>

namespace strata::text::word_lists {

template <size_t N>
constexpr bool Contains(const std::array<std::string_view, N>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// The keyword arm's stop words (text::IsStopWord): a query term among them matches only as part
// of a phrase or when the query has nothing else.
inline constexpr std::array<std::string_view, 64> kKeywordStopWords = {
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "but", "by", "can", "did", "do", "does", "for", "from", "had", "has", "have", "he",
    "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
    "of", "on", "or", "our", "she", "so", "that", "the", "their", "them", "then", "there",
    "they", "this", "to", "was", "we", "were", "what", "when", "which", "who", "with", "you",
};
static_assert(std::is_sorted(kKeywordStopWords.begin(), kKeywordStopWords.end()));

// Words the built-in embedder drops beyond kKeywordStopWords: they carry no topic, and a
// question's "what", "should" and "usually" only add noise to a vector.
inline constexpr std::array<std::string_view, 61> kEmbedderStopWords = {
    "above", "again", "before", "being", "both", "could", "doing", "during", "each", "else",
    "ever", "get", "gets", "got", "having", "here", "hers", "him", "just", "let", "like",
    "may", "might", "more", "most", "much", "must", "nor", "now", "off", "often", "once",
    "only", "other", "ours", "out", "over", "own", "same", "shall", "should", "some", "such",
    "than", "these", "those", "through", "too", "under", "until", "up", "us", "usually",
    "very", "where", "while", "whom", "why", "will", "would", "your",
};
static_assert(std::is_sorted(kEmbedderStopWords.begin(), kEmbedderStopWords.end()));

// The near-duplicate rule's words (text/analyzer.h). Negations turn a statement into its
// opposite; never filler.
inline constexpr std::array<std::string_view, 8> kNegations = {
    "no", "not", "never", "nor", "none", "nobody", "nothing", "without",
};

// Keyword stop words that carry meaning for the near-duplicate rule: pronouns say who, and
// negations are kept by IsNegation.
inline constexpr std::array<std::string_view, 17> kMeaningfulStopWords = {
    "he", "her", "his", "i", "it", "its", "me", "my", "our", "she", "their", "them", "they",
    "we", "you", "no", "not",
};

// Fillers beyond the keyword stop words: intensifiers and discourse words that a rewording adds
// or drops without changing the fact.
inline constexpr std::array<std::string_view, 26> kMoreFillers = {
    "actually", "again", "already", "basically", "being", "certainly", "could", "definitely",
    "indeed", "just", "obviously", "quite", "rather", "really", "should", "simply", "some",
    "still", "such", "than", "these", "those", "too", "very", "will", "would",
};
static_assert(std::is_sorted(kMoreFillers.begin(), kMoreFillers.end()));

// Words the lexicon gives no features (lexicon_gen.cc): stop-like function words, which the
// embedder drops anyway and WordNet lists as nouns ("it", "in", "he", "who").
inline constexpr std::array<std::string_view, 62> kLexiconStopWords = {
    "a", "am", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by", "did", "do",
    "does", "doing", "for", "from", "had", "has", "have", "having", "he", "her", "him", "his",
    "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "nor", "not", "of", "on",
    "or", "our", "she", "so", "than", "that", "the", "their", "them", "then", "these", "they",
    "this", "those", "to", "us", "was", "we", "were", "which", "who", "with",
};
static_assert(std::is_sorted(kLexiconStopWords.begin(), kLexiconStopWords.end()));

// Function words of WordNet's glosses that kLexiconStopWords lacks: a gloss word among them is
// no feature.
inline constexpr std::array<std::string_view, 65> kGlossStopWords = {
    "about", "after", "all", "also", "another", "any", "because", "before", "between", "both",
    "can", "could", "each", "either", "especially", "etc", "every", "few", "how", "however",
    "less", "like", "many", "may", "more", "most", "much", "must", "neither", "often", "one",
    "only", "other", "others", "over", "same", "several", "should", "some", "somebody",
    "someone", "something", "such", "through", "thus", "too", "under", "until", "upon",
    "usually", "various", "very", "what", "when", "where", "whether", "while", "whose", "why",
    "will", "within", "without", "would", "you", "your",
};
static_assert(std::is_sorted(kGlossStopWords.begin(), kGlossStopWords.end()));

}  // namespace strata::text::word_lists
