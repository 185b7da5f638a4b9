// libFuzzer target: the keyword tokenizer (text/tokenizer.h).
//
// Any bytes are a text (docs/design.md §9): in every mode Tokenize runs to the end, and each
// token is a non-empty valid UTF-8 term from inside the text, the first of a position never
// colocated (FTS5 refuses a first token that is). ForEachWord's words are non-empty valid
// UTF-8 from inside the text, in text order.

#include <utf8proc.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "text/tokenizer.h"

namespace {

[[noreturn]] void Fail(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "tokenizer_fuzzer: %s; input %zu bytes\n", what.c_str(), input.size());
  std::abort();
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    int32_t c = 0;
    const utf8proc_ssize_t n =
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                         static_cast<utf8proc_ssize_t>(s.size() - i), &c);
    if (n <= 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using strata::text::TokenizeMode;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  size_t previous_begin = 0;
  strata::text::ForEachWord(input, [&](const strata::text::Word& word) {
    if (word.text.empty() || !IsValidUtf8(word.text)) Fail("a word that is not UTF-8", input);
    if (word.begin >= word.end || word.end > input.size() || word.begin < previous_begin) {
      Fail("a word outside the text or out of order", input);
    }
    previous_begin = word.begin;
  });

  for (const TokenizeMode mode :
       {TokenizeMode::kDocument, TokenizeMode::kQuery, TokenizeMode::kPrefixQuery}) {
    bool first = true;
    const bool finished = strata::text::Tokenize(input, mode, [&](const strata::text::Token& t) {
      if (t.term.empty() || !IsValidUtf8(t.term)) Fail("a term that is not UTF-8", input);
      if (t.begin >= t.end || t.end > input.size()) Fail("a term outside the text", input);
      if (first && t.colocated) Fail("a colocated first token", input);
      first = false;
      return true;
    });
    if (!finished) Fail("Tokenize stopped by itself", input);
  }
  return 0;
}
