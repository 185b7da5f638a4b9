#include "text/analyzer.h"

#include "absl/container/flat_hash_set.h"

#include "text/fts_query.h"
#include "text/stemmer.h"
#include "text/tokenizer.h"
#include "text/word_lists.h"

namespace strata::text {

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  ForEachWord(text, [&](const Word& word) {
    if (word.text.size() <= kMaxWordBytes) words.emplace_back(word.text);
  });
  return words;
}

std::string Stem(std::string_view word) { return Stem(Language::kEnglish, word); }

bool IsFillerWord(std::string_view word) {
  if (IsStopWord(word)) return !word_lists::Contains(word_lists::kMeaningfulStopWords, word);
  static const absl::flat_hash_set<std::string_view> kSet(word_lists::kMoreFillers.begin(),
                                                          word_lists::kMoreFillers.end());
  return kSet.contains(word);
}

bool IsNegation(std::string_view word) {
  return word_lists::Contains(word_lists::kNegations, word);
}

std::vector<std::string> ContentTerms(std::string_view text) {
  std::vector<std::string> terms;
  for (const std::string& word : Words(text)) {
    if (!IsFillerWord(word)) terms.push_back(Stem(word));
  }
  return terms;
}

}  // namespace strata::text
