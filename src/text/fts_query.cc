#include "text/fts_query.h"

#include <algorithm>
#include <array>

namespace strata::text {
namespace {

constexpr std::array<std::string_view, 64> kStopWords = {
    "a",    "about", "after", "all",   "also", "am",    "an",   "and",  "any",   "are",
    "as",   "at",    "be",    "been",  "but",  "by",    "can",  "did",  "do",    "does",
    "for",  "from",  "had",   "has",   "have", "he",    "her",  "his",  "how",   "i",
    "if",   "in",    "into",  "is",    "it",   "its",   "me",   "my",   "no",    "not",
    "of",   "on",    "or",    "our",   "she",  "so",    "that", "the",  "their", "them",
    "then", "there", "they",  "this",  "to",   "was",   "we",   "were", "what",  "when",
    "which", "who",  "with",  "you"};

bool IsStopWord(std::string_view term) {
  return std::find(kStopWords.begin(), kStopWords.end(), term) != kStopWords.end();
}

bool IsTokenByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

}  // namespace

std::vector<std::string> QueryTerms(std::string_view query) {
  std::vector<std::string> terms;
  bool has_content_word = false;
  size_t i = 0;
  while (i < query.size() && terms.size() < kMaxTerms * 2) {
    while (i < query.size() && !IsTokenByte(static_cast<unsigned char>(query[i]))) ++i;
    const size_t start = i;
    while (i < query.size() && IsTokenByte(static_cast<unsigned char>(query[i]))) ++i;
    if (i == start) break;
    std::string term(query.substr(start, std::min(i - start, kMaxTermBytes)));
    for (char& c : term) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (std::find(terms.begin(), terms.end(), term) != terms.end()) continue;
    has_content_word = has_content_word || !IsStopWord(term);
    terms.push_back(std::move(term));
  }
  if (has_content_word) {
    std::erase_if(terms, [](const std::string& t) { return IsStopWord(t); });
  }
  if (terms.size() > kMaxTerms) terms.resize(kMaxTerms);
  return terms;
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
