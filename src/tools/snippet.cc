#include "tools/snippet.h"

#include <algorithm>

#include "text/fts_query.h"
#include "text/tokenizer.h"
#include "util/sv.h"

namespace strata::tools {
namespace {

bool ContinuesSequence(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The byte offset of the code point `n` code points after the one that starts at or after
// byte `from`; the text's size when there is none.
size_t Advance(std::string_view text, size_t from, size_t n) {
  for (size_t i = from; i < text.size(); ++i) {
    if (ContinuesSequence(text[i])) continue;
    if (n == 0) return i;
    --n;
  }
  return text.size();
}

}  // namespace

QueryTerms::QueryTerms(std::string_view query) {
  // What recall searches: the FTS5 expression of ParseQuery's terms, which the index's
  // tokenizer cuts in query mode.
  for (const std::string& term : text::ParseQuery(query).terms) {
    text::Tokenize(term, text::TokenizeMode::kQuery, [this](const text::Token& token) {
      terms_.insert(std::string(token.term));
      return true;
    });
  }
}

std::optional<ByteRange> QueryTerms::FirstMatch(std::string_view text) const {
  if (terms_.empty()) return std::nullopt;
  std::optional<ByteRange> match;
  text::Tokenize(text, text::TokenizeMode::kDocument, [&](const text::Token& token) {
    if (!terms_.contains(ToAbsl(token.term))) return true;
    match = ByteRange{.begin = token.begin, .end = token.end};
    return false;
  });
  return match;
}

size_t CodePoints(std::string_view text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !ContinuesSequence(c); }));
}

std::string_view Window(std::string_view text, std::optional<ByteRange> around, size_t max_chars) {
  const size_t chars = CodePoints(text);
  if (chars <= max_chars) return text;
  size_t first = 0;  // The window's first code point.
  if (around) {
    const size_t begin = CodePoints(text.substr(0, around->begin));
    const size_t length = CodePoints(text.substr(around->begin, around->end - around->begin));
    const size_t centre = begin + length / 2;
    first = std::min(centre > max_chars / 2 ? centre - max_chars / 2 : 0, chars - max_chars);
  }
  const size_t begin = Advance(text, 0, first);
  const size_t end = Advance(text, begin, max_chars);
  return text.substr(begin, end - begin);
}

}  // namespace strata::tools
