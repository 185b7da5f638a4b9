#pragma once
// Turning free text from a model into a safe FTS5 MATCH expression.

#include <string>
#include <string_view>
#include <vector>

namespace strata::text {

// The query's terms as FTS5's unicode61 tokenizer would see them: runs of ASCII letters and
// digits and of non-ASCII bytes, ASCII-lowercased, duplicates removed, at most kMaxTerms.
// English stop words are dropped when any other term remains.
std::vector<std::string> QueryTerms(std::string_view query);

// An FTS5 expression matching any of `terms`: each term double-quoted (a string, never
// syntax) and joined by OR. Empty when `terms` is empty. No input yields an FTS5 syntax error.
std::string MatchExpression(const std::vector<std::string>& terms);

// Whether `term` (lowercase) is one of the English stop words QueryTerms drops.
bool IsStopWord(std::string_view term);

inline constexpr size_t kMaxTerms = 32;
inline constexpr size_t kMaxTermBytes = 64;

}  // namespace strata::text
