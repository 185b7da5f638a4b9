#pragma once
// The text side of the BERT tokenizer, character by character as Hugging Face's `tokenizers`
// runs it: the BertNormalizer and the BertPreTokenizer. Unicode data comes from utf8proc,
// corrected where Hugging Face's own tables disagree (normalizer.cc says which and why);
// tests/embed/bert_normalizer_test.cc checks every code point against the real one.

#include <string>
#include <string_view>
#include <vector>

namespace strata::embed::bert {

// Code points of UTF-8 text; each byte that is not part of a valid sequence (overlong forms and
// surrogates included) becomes U+FFFD. `valid`, if not null, says whether there were none.
std::u32string DecodeUtf8(std::string_view text, bool* valid = nullptr);
// REQUIRES: every element is a Unicode scalar value (as DecodeUtf8 returns).
std::string EncodeUtf8(std::u32string_view text);
void AppendUtf8(char32_t c, std::string& out);

// Unicode's White_Space property, what Rust's char::is_whitespace tests.
bool IsUnicodeWhitespace(char32_t c);

struct NormalizerOptions {
  bool lowercase = true;
  bool strip_accents = true;
  bool tokenize_chinese_chars = true;
};

// The BertNormalizer, in its order: drop NUL, U+FFFD and control/format/private-use
// characters; turn whitespace (tab, newline and carriage return included) into ' '; put
// spaces around CJK ideographs; NFD and drop nonspacing marks (strip_accents); lowercase
// each character by its full mapping (lowercase; no context rule such as final sigma).
std::u32string Normalize(std::u32string_view text, const NormalizerOptions& options);

// The BertPreTokenizer: whitespace separates words and goes; each punctuation character (ASCII
// symbols and Unicode P*) is a word of its own. The words point into `text`.
std::vector<std::u32string_view> PreTokenize(std::u32string_view text);

}  // namespace strata::embed::bert
