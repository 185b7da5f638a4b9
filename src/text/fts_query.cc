#include "text/fts_query.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_set.h"

namespace strata::text {
namespace {

// Sorted, so that a duplicate shows (the set below is built from it).
constexpr std::array<std::string_view, 64> kStopWords = {
    "a",   "about", "after", "all",  "also",  "am",    "an",   "and",   "any",  "are",  "as",
    "at",  "be",    "been",  "but",  "by",    "can",   "did",  "do",    "does", "for",  "from",
    "had", "has",   "have",  "he",   "her",   "his",   "how",  "i",     "if",   "in",   "into",
    "is",  "it",    "its",   "me",   "my",    "no",    "not",  "of",    "on",   "or",   "our",
    "she", "so",    "that",  "the",  "their", "them",  "then", "there", "they", "this", "to",
    "was", "we",    "were",  "what", "when",  "which", "who",  "with",  "you"};
static_assert(std::is_sorted(kStopWords.begin(), kStopWords.end()));

bool IsTokenByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

}  // namespace

bool IsStopWord(std::string_view term) {
  // Every word of every text is looked up: a hash probe, not a dozen string compares.
  static const absl::flat_hash_set<std::string_view> kSet(kStopWords.begin(), kStopWords.end());
  return kSet.contains(term);
}

std::vector<std::string> QueryTerms(std::string_view query) {
  std::vector<std::string> content;  // Terms that are not stop words, in query order.
  std::vector<std::string> stop;     // Stop words, used only when there is nothing else.
  size_t i = 0;
  while (i < query.size() && content.size() < kMaxTerms) {
    while (i < query.size() && !IsTokenByte(static_cast<unsigned char>(query[i]))) ++i;
    const size_t start = i;
    while (i < query.size() && IsTokenByte(static_cast<unsigned char>(query[i]))) ++i;
    if (i == start) break;
    size_t length = std::min(i - start, kMaxTermBytes);
    // Never cut a UTF-8 sequence: back off over continuation bytes.
    while (length < i - start && length > 0 &&
           (static_cast<unsigned char>(query[start + length]) & 0xC0) == 0x80) {
      --length;
    }
    // Nothing left: the run is not UTF-8 (a sequence has at most 3 continuation bytes) and is
    // cut where it stands rather than yield an empty term.
    if (length == 0) length = std::min(i - start, kMaxTermBytes);
    std::string term(query.substr(start, length));
    for (char& c : term) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    std::vector<std::string>& list = IsStopWord(term) ? stop : content;
    if (std::find(list.begin(), list.end(), term) == list.end()) list.push_back(std::move(term));
  }
  if (!content.empty()) return content;
  if (stop.size() > kMaxTerms) stop.resize(kMaxTerms);
  return stop;
}

std::string MatchExpression(const std::vector<std::string>& terms) {
  std::string out;
  for (const std::string& term : terms) {
    if (!out.empty()) out += " OR ";
    out += '"';
    for (char c : term) {
      if (c == '"') out += '"';  // Doubled inside an FTS5 string; unreachable for QueryTerms.
      out += c;
    }
    out += '"';
  }
  return out;
}

}  // namespace strata::text
