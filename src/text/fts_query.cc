#include "text/fts_query.h"

#include <algorithm>
#include <array>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "text/tokenizer.h"
#include "text/word_lists.h"

namespace strata::text {
namespace {

bool IsTokenByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

bool IsTokenByte(char c) { return IsTokenByte(static_cast<unsigned char>(c)); }

bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The term a run of token bytes becomes: ASCII-lowercased, at most kMaxTermBytes, never cut
// inside a UTF-8 sequence.
std::string TermOf(std::string_view run) {
  size_t length = std::min(run.size(), kMaxTermBytes);
  // Back off over continuation bytes.
  while (length < run.size() && length > 0 && (static_cast<unsigned char>(run[length]) & 0xC0) == 0x80) {
    --length;
  }
  // Nothing left: the run is not UTF-8 (a sequence has at most 3 continuation bytes) and is
  // cut where it stands rather than yield an empty term.
  if (length == 0) length = std::min(run.size(), kMaxTermBytes);
  std::string term(run.substr(0, length));
  for (char& c : term) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return term;
}

// The terms of a run of token bytes: the run as one term (TermOf), unless it holds Chinese,
// Japanese or Korean, whose words are not spaced: then the index's words of it (overlapping
// character pairs there), each a term, so that a sentence finds a memory sharing some of its
// words rather than only one holding it whole. A Korean word is cut without its particle
// (text::WithoutKoreanParticle), so that its pairs, and the phrase of them, meet the word
// written with any particle or none.
void AppendTerms(std::string_view run, std::vector<std::string>& out) {
  const bool ascii = std::all_of(run.begin(), run.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (!ascii) {
    std::vector<std::string> words;
    bool bigrams = false;
    ForEachWord(WithoutKoreanParticle(run), [&](const Word& w) {
      bigrams |= IsBigramScript(w.script);
      words.push_back(TermOf(w.text));
    });
    if (bigrams) {
      out.insert(out.end(), std::make_move_iterator(words.begin()),
                 std::make_move_iterator(words.end()));
      return;
    }
  }
  out.push_back(TermOf(run));
}

// One whitespace-separated piece of a query, without the punctuation around it.
struct Chunk {
  std::string_view text;
  std::vector<std::string> terms;  // Its runs of token bytes, as terms.
  bool identifier = false;
  bool hex = false;  // One run of 7+ hex digits with a letter among them.
  bool unspaced = false;  // Holds words written without spaces (terms are character pairs).
};

Chunk ReadChunk(std::string_view text) {
  Chunk chunk;
  size_t begin = 0, end = text.size();
  while (begin < end && !IsTokenByte(text[begin])) ++begin;
  while (end > begin && !IsTokenByte(text[end - 1])) --end;
  chunk.text = text.substr(begin, end - begin);
  bool digit = false, letter = false, all_hex = true, joined = false;
  size_t runs = 0;
  for (size_t i = 0; i < chunk.text.size();) {
    if (!IsTokenByte(chunk.text[i])) {
      // Joined by a character that names things (a path, a file, a host, an address), not by
      // an apostrophe or a hyphen between words.
      if (std::string_view("/_.:@=+").find(chunk.text[i]) != std::string_view::npos) joined = true;
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < chunk.text.size() && IsTokenByte(chunk.text[i])) {
      digit |= IsDigit(chunk.text[i]);
      letter |= !IsDigit(chunk.text[i]) && IsHexDigit(chunk.text[i]);
      all_hex &= IsHexDigit(chunk.text[i]);
      ++i;
    }
    AppendTerms(chunk.text.substr(start, i - start), chunk.terms);
    ++runs;
  }
  chunk.hex = runs == 1 && chunk.terms.size() == 1 && chunk.text.size() >= 7 && all_hex && digit &&
              letter;
  // More terms than runs: a run of Chinese, Japanese or Korean, cut into pairs.
  chunk.unspaced = chunk.terms.size() > runs;
  chunk.identifier = chunk.text.size() <= kMaxIdentifierBytes &&
                     ((runs >= 2 && (digit || joined || runs >= 3)) ||
                      (runs == 1 && digit && chunk.text.size() >= 3));
  return chunk;
}

}  // namespace

bool IsStopWord(std::string_view term) {
  // Every word of every text is looked up: a hash probe, not a dozen string compares.
  static const absl::flat_hash_set<std::string_view> kSet(word_lists::kKeywordStopWords.begin(),
                                                          word_lists::kKeywordStopWords.end());
  return kSet.contains(term);
}

ParsedQuery ParseQuery(std::string_view query) {
  // Each run of token bytes lies inside one whitespace-separated chunk, so the chunks' terms,
  // in order, are the query's.
  std::vector<std::string> content;  // Terms that are not stop words, in query order.
  std::vector<std::string> stop;     // Stop words, used only when there is nothing else.
  auto add_term = [&content, &stop](std::string term) {
    std::vector<std::string>& list = IsStopWord(term) ? stop : content;
    if (list.size() < kMaxTerms && std::find(list.begin(), list.end(), term) == list.end()) {
      list.push_back(std::move(term));
    }
  };
  std::vector<QueryPhrase> phrases;
  auto add = [&phrases](QueryPhrase phrase) {
    for (const QueryPhrase& p : phrases) {
      if (p.text == phrase.text && p.prefix == phrase.prefix) return;
    }
    if (phrases.size() < kMaxPhrases) phrases.push_back(std::move(phrase));
  };
  std::optional<Chunk> previous;  // The chunk before, when it can start a pair.
  size_t i = 0;
  while (i < query.size() && (content.size() < kMaxTerms || phrases.size() < kMaxPhrases)) {
    while (i < query.size() && IsSpace(query[i])) ++i;
    const size_t start = i;
    while (i < query.size() && !IsSpace(query[i])) ++i;
    if (i == start) break;
    Chunk chunk = ReadChunk(query.substr(start, i - start));
    if (content.size() < kMaxTerms) {
      for (const std::string& term : chunk.terms) add_term(term);
    }
    if (phrases.size() == kMaxPhrases) continue;
    if (chunk.terms.empty()) continue;  // Punctuation alone does not part two words.
    if (chunk.identifier) {
      add({.kind = QueryPhrase::Kind::kIdentifier, .text = absl::StrJoin(chunk.terms, " ")});
      if (chunk.hex) {
        add({.kind = QueryPhrase::Kind::kIdentifier, .text = chunk.terms[0],
             .prefix = true});
      }
    }
    const bool pairs = chunk.text.size() <= kMaxIdentifierBytes &&
                       std::none_of(chunk.terms.begin(), chunk.terms.end(),
                                    [](const std::string& t) { return IsStopWord(t); });
    if (pairs && chunk.unspaced && chunk.terms.size() >= 2) {
      // The chunk as written: a memory holding the whole sentence or word ranks first.
      add({.kind = QueryPhrase::Kind::kAdjacent, .text = absl::StrJoin(chunk.terms, " "),
           .words = chunk.terms});
    }
    if (pairs && previous) {
      QueryPhrase pair{.kind = QueryPhrase::Kind::kAdjacent,
                       .text = absl::StrCat(absl::StrJoin(previous->terms, " "), " ",
                                            absl::StrJoin(chunk.terms, " ")),
                       .words = previous->terms};
      pair.words.insert(pair.words.end(), chunk.terms.begin(), chunk.terms.end());
      add(std::move(pair));
    }
    if (pairs) {
      previous = std::move(chunk);
    } else {
      previous.reset();
    }
  }
  return {.terms = content.empty() ? std::move(stop) : std::move(content),
          .phrases = std::move(phrases)};
}

std::string MatchExpression(const std::vector<std::string>& terms,
                            const std::vector<QueryPhrase>& phrases) {
  std::string out;
  auto quote = [&out](std::string_view text) {
    if (!out.empty()) out += " OR ";
    out += '"';
    for (char c : text) {
      if (c == '"') out += '"';  // Doubled inside an FTS5 string.
      out += c;
    }
    out += '"';
  };
  for (const std::string& term : terms) quote(term);
  for (const QueryPhrase& phrase : phrases) {
    quote(phrase.text);
    if (phrase.prefix) out += " *";
  }
  return out;
}

}  // namespace strata::text
