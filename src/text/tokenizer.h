#pragma once
// The keyword index's tokenizer: UTF-8 text to the terms FTS5 indexes and looks up, in any
// script. Pure C++; text/fts5_extensions.h registers it with SQLite as tokenizer "strata".

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "text/stemmer.h"

namespace strata::text {

// The writing system of a word.
enum class Script : uint8_t {
  kNone,  // Digits only.
  kLatin,
  kGreek,
  kCyrillic,
  kOther,  // Any other alphabet or abugida (Arabic, Hebrew, Devanagari, ...): not stemmed.
  // Written without spaces between words: cut into bigrams.
  kHan,
  kHiragana,
  kKatakana,
  kHangul,
};

// True for the scripts whose runs are cut into bigrams.
constexpr bool IsBigramScript(Script s) { return s >= Script::kHan; }

struct Word {
  std::string_view text;  // Case-folded, NFC. Valid during the callback only.
  size_t begin = 0;       // Byte offsets of the word in the text: [begin, end).
  size_t end = 0;
  Script script = Script::kNone;
};

// Calls `fn` for each word of `text`, in text order: each run of letters and digits (Unicode
// L*, N*, Co, with the marks Mn and Mc inside it), split where the script changes; a run of
// Han, Hiragana, Katakana or Hangul characters gives its overlapping pairs of characters
// (a run of one character gives that character). Bytes that are not UTF-8 separate words.
// `fn` must not call back into this header's functions.
void ForEachWord(std::string_view text, absl::FunctionRef<void(const Word&)> fn);

// The language of the Latin-script words of `text`, told by the commonest function words of
// each language (compiled in); kEnglish when none outnumbers English's.
Language DetectLanguage(std::string_view text);

enum class TokenizeMode {
  kDocument,     // A text being indexed: each word stemmed in the text's language.
  kQuery,        // Query text: a word's stems in every language of its script, colocated.
  kPrefixQuery,  // The start of a word (FTS5 "abc*"): case-folded, unstemmed.
};

struct Token {
  std::string_view term;   // Valid during the callback only.
  size_t begin = 0;        // Byte offsets of the word it came from.
  size_t end = 0;
  bool colocated = false;  // An alternative at the previous token's position.
};

// Cuts `text` into index terms: ForEachWord's words; Latin-script words stemmed in the
// text's DetectLanguage, Cyrillic ones in Russian, Greek ones in Greek (words with digits are
// not stemmed); then diacritics removed. A word written with diacritics also gives, colocated,
// the stem of the word written without them, so that a query typed either way meets it. Calls
// `fn` for each; stops when it returns false. Returns false when stopped. Never fails: any
// bytes are a text. `fn` must not call back into this header's functions.
bool Tokenize(std::string_view text, TokenizeMode mode,
              absl::FunctionRef<bool(const Token&)> fn);

// `word` without the Korean particle (조사) it ends in: "서버에서" -> "서버", so that a query
// word meets the word written with any particle or none (text/fts_query.h cuts query words
// so; documents keep theirs: their pairs hold the stem's). Only for a word of Hangul
// syllables alone, the longest particle of a compiled-in list (tokenizer.cc) first, and never
// leaving fewer than 2 syllables ("회의" stays); any other `word` is returned whole.
std::string_view WithoutKoreanParticle(std::string_view word);

}  // namespace strata::text
