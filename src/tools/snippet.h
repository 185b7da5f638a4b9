#pragma once
// A window of a long body's text around where a recall query matched it (recall's max_chars).
// Lengths are Unicode code points of UTF-8 text; a window never starts or ends inside a
// UTF-8 sequence.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"

namespace strata::tools {

// Byte offsets [begin, end) in a text.
struct ByteRange {
  size_t begin = 0;
  size_t end = 0;
};

// The index terms of a query, as the keyword index looks them up: text::ParseQuery's terms,
// each tokenized as a query (a word's stems in every language of its script).
// Thread safety: immutable after construction.
class QueryTerms {
 public:
  explicit QueryTerms(std::string_view query);

  // The bytes of the first word of `text` that the keyword index, reading `text` as a
  // document (text::Tokenize), holds as one of the terms; nullopt when none, or when the
  // query has no terms.
  std::optional<ByteRange> FirstMatch(std::string_view text) const;

 private:
  absl::flat_hash_set<std::string> terms_;
};

// The number of code points of UTF-8 `text` (its bytes that do not continue a sequence).
size_t CodePoints(std::string_view text);

// `max_chars` consecutive code points of `text` centred on `around` (from the start when
// nullopt), moved inwards to stay within the text; all of `text` when it is no longer.
// REQUIRES: max_chars > 0; `around` lies within `text`.
std::string_view Window(std::string_view text, std::optional<ByteRange> around, size_t max_chars);

}  // namespace strata::tools
