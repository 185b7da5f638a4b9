#pragma once
// Snowball stemmers: the one wrapper of libstemmer, for the keyword tokenizer and the analyzer.

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::text {

// The languages strata stems. Latin-script languages first, kEnglish at 0 (the default);
// kRussian and kGreek are the only languages of their scripts.
enum class Language : uint8_t {
  kEnglish,
  kGerman,
  kFrench,
  kSpanish,
  kItalian,
  kPortuguese,
  kDutch,
  kSwedish,
  kDanish,
  kNorwegian,
  kFinnish,
  kRussian,
  kGreek,
};
inline constexpr int kLanguageCount = 13;
inline constexpr int kLatinLanguageCount = 11;  // kEnglish .. kFinnish

// Snowball's name of the language ("english").
std::string_view LanguageName(Language language);

// The Snowball stem of `word` (lowercase UTF-8) in `language`. The reference is valid until
// the next call on this thread. Thread-safe: each thread has its own stemmers.
const std::string& Stem(Language language, std::string_view word);

}  // namespace strata::text
