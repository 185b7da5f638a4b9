#pragma once
// Turning free text from a model into a safe FTS5 MATCH expression.

#include <string>
#include <string_view>
#include <vector>

namespace strata::text {

// A group of query words that a match should hold together, beside the single terms.
struct QueryPhrase {
  enum class Kind {
    // What the user typed as one token, kept whole: "CVE-2023-5678", "db-prod-07",
    // "src/recall/fusion.cc", "3.0.11-1~deb12u2", "#1002301", "deb12u2". A match of one is
    // exact keyword evidence (recall/recaller.h).
    kIdentifier,
    // Two words adjacent in the query, or a run of Chinese, Japanese or Korean: a memory
    // holding them adjacent ranks above one where they are scattered.
    kAdjacent,
  };
  Kind kind;
  // Its terms (as ParsedQuery::terms cuts them) separated by spaces, for the index's tokenizer
  // to cut into the phrase's tokens: never a byte FTS5 could read as syntax or an end of string.
  std::string text;
  // An identifier of 7+ hex digits (a commit hash's prefix) also matches longer tokens it
  // begins.
  bool prefix = false;
  std::vector<std::string> words;  // kAdjacent: its two terms, as ParsedQuery::terms has them.
};

// What recall searches a query for.
struct ParsedQuery {
  // The query's terms as FTS5's unicode61 tokenizer would see them: runs of ASCII letters and
  // digits and of non-ASCII bytes, ASCII-lowercased, duplicates removed, at most kMaxTerms.
  // English stop words are dropped when any other term remains.
  std::vector<std::string> terms;
  // Its identifiers and adjacent word pairs, at most kMaxPhrases, in query order. Pairs with a
  // stop word are left out (they are in every text).
  std::vector<QueryPhrase> phrases;
};

// `query`'s terms and phrases, read in one pass.
ParsedQuery ParseQuery(std::string_view query);

// An FTS5 expression matching any of `terms` or `phrases`: each double-quoted (a string, never
// syntax) and joined by OR, terms first. FTS5 numbers these phrases from 0 in this order.
// Empty when both are empty. No input yields an FTS5 syntax error.
std::string MatchExpression(const std::vector<std::string>& terms,
                            const std::vector<QueryPhrase>& phrases = {});

// Whether `term` (lowercase) is one of the English stop words ParseQuery drops from terms.
bool IsStopWord(std::string_view term);

inline constexpr size_t kMaxTerms = 32;
inline constexpr size_t kMaxPhrases = 16;
// A bit each of strata_phrases' INTEGER (fts5_extensions.h) tells recall a term or phrase matched.
static_assert(kMaxTerms + kMaxPhrases <= 63, "one bit a term or phrase, short of the sign bit");
inline constexpr size_t kMaxIdentifierBytes = 128;
inline constexpr size_t kMaxTermBytes = 64;

}  // namespace strata::text
