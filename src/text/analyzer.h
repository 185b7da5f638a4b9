#pragma once
// Words and stems: how text is cut into terms for the embedder and the near-duplicate rule.

#include <string>
#include <string_view>
#include <vector>

namespace strata::text {

// Words longer than this many bytes are dropped by Words (noise, not words).
inline constexpr size_t kMaxWordBytes = 40;

// The words of `text` as the keyword index cuts them (text::ForEachWord: letters and digits
// of any script, case-folded; Han, kana and Hangul as bigrams), unstemmed, in text order,
// repeats kept.
std::vector<std::string> Words(std::string_view text);

// The Snowball English stem of a lowercase word ("prefers" -> "prefer"): text::Stem in
// English. Thread-safe.
std::string Stem(std::string_view word);

// Words that add no information to a sentence: articles, auxiliaries, prepositions and
// fillers ("the", "is", "really"). Negations and pronouns are not filler: "not" and "she"
// change what a sentence says.
bool IsFillerWord(std::string_view word);

// "not", "no", "never", ...: words that turn a statement into its opposite.
bool IsNegation(std::string_view word);

// The stems of the words of `text` that are not filler, in text order, repeats kept.
std::vector<std::string> ContentTerms(std::string_view text);

}  // namespace strata::text
