#include "dedup/content.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "text/analyzer.h"
#include "util/hash.h"
#include "util/sv.h"

namespace strata::dedup {
namespace {

// Units of different kinds never collide by text: each kind hashes under its own prefix.
uint64_t UnitHash(char kind, std::string_view text) {
  const char prefix[2] = {kind, ':'};
  return Mix64(Fnv1a64(text, Fnv1a64(std::string_view(prefix, 2))));
}

// A member's value is a unit of its own when it is this short (in content terms): it says
// which value belongs to which member ({"owner": "ana", "reviewer": "bo"} against the two
// swapped). Longer values are prose, whose words already count.
constexpr size_t kMaxValueTerms = 8;
constexpr size_t kMaxIdentifierBytes = 64;
// A member's value of at most this many terms is a label ("senior engineer", "storage"):
// short bodies are banded by its member=value unit, not its words, which memories of one
// shape share. A longer value (a sentence) is banded by its words, so that one changed word
// leaves most of them.
constexpr size_t kMaxLabelTerms = 3;

// These character tests run on every byte of every body: plain comparisons, not
// string_view::find (a memchr call per byte).
bool IsTrimmable(char c) {
  switch (c) {
    case '.':
    case ',':
    case ';':
    case ':':
    case '!':
    case '?':
    case '(':
    case ')':
    case '[':
    case ']':
    case '{':
    case '}':
    case '<':
    case '>':
    case '"':
    case '\'':
    case '`':
    case '*':
      return true;
    default:
      return false;
  }
}

bool IsJoiner(char c) {
  return c == '.' || c == '_' || c == '/' || c == '-' || c == ':' || c == '@' || c == '#';
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// A whitespace-separated token that is an identifier: it holds a digit, or punctuation
// inside it that joins parts ("v2.19.1", "scale-12", "a_b", "x/y"). Empty when it is not.
std::string Identifier(std::string_view token) {
  while (!token.empty() && IsTrimmable(token.front())) token.remove_prefix(1);
  while (!token.empty() && IsTrimmable(token.back())) token.remove_suffix(1);
  if (token.size() < 2 || token.size() > kMaxIdentifierBytes) return "";
  bool digit = false, joined = false, alnum = false;
  for (size_t i = 0; i < token.size(); ++i) {
    const char c = token[i];
    if (c >= '0' && c <= '9') digit = true;
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) alnum = true;
    if (i > 0 && i + 1 < token.size() && IsJoiner(c)) {
      joined = true;
    }
  }
  if (!alnum || !(digit || joined)) return "";
  std::string out(token);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// `text` with each "n't" (ASCII or typographic apostrophe) written "n not": "doesn't" is
// otherwise the words "doesn" and "t", and dropping it would drop no negation. The result is
// `text` itself when it has no apostrophe, else the expanded copy made in `out`.
std::string_view ExpandContractedNegations(std::string_view text, std::string& out) {
  static constexpr std::string_view kForms[] = {"n't", "n\xe2\x80\x99t", "N'T", "N\xe2\x80\x99T"};
  if (text.find('\'') == std::string_view::npos &&
      text.find("\xe2\x80\x99") == std::string_view::npos) {
    return text;
  }
  out.clear();
  out.reserve(text.size() + 8);
  size_t i = 0;
  while (i < text.size()) {
    bool matched = false;
    for (std::string_view form : kForms) {
      if (text.substr(i, form.size()) == form) {
        out += "n not";
        i += form.size();
        matched = true;
        break;
      }
    }
    if (!matched) out += text[i++];
  }
  return out;
}

// What Analyze makes of a word (after "cannot" -> "not"). Texts repeat their words, and the
// analysis (two set lookups, a Snowball stem, a hash) cost ten times a cached lookup: a
// thread keeps the facts of the words it met, and forgets them all at once when there are
// many, which bounds the memory.
struct WordFacts {
  bool filler = false;
  std::optional<uint64_t> negation;  // Its unit, when the word is a negation.
  uint64_t term = 0;                 // The unit of its stem.
  std::string stem;
};

const WordFacts& Facts(const std::string& word) {
  constexpr size_t kMaxCachedWords = 1 << 16;
  // Node-based: Analyze holds pointers to entries while it adds others.
  thread_local absl::node_hash_map<std::string, WordFacts> cache;
  if (auto it = cache.find(word); it != cache.end()) return it->second;
  WordFacts facts;
  facts.filler = text::IsFillerWord(word);
  if (!facts.filler) {
    if (text::IsNegation(word)) facts.negation = UnitHash('w', word);
    facts.stem = text::Stem(word);
    facts.term = UnitHash('w', facts.stem);
  }
  if (cache.size() >= kMaxCachedWords) cache.clear();
  return cache.emplace(word, std::move(facts)).first->second;
}

void SortUnique(std::vector<uint64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

ContentUnits Analyze(const text::ParsedBody& body) {
  ContentUnits out;
  std::vector<uint64_t> values;  // Units of values, repeats kept until counted.
  std::vector<uint64_t> members;
  for (const text::BodyValue& v : body.values) {
    if (!v.member.empty()) members.push_back(UnitHash('k', v.member));
    // The value's content terms: their units, and their stems while a member's value may
    // still be short enough to be a unit of its own.
    std::vector<uint64_t> term_units;
    std::vector<std::string_view> stems;
    if (v.is_string) {
      std::string expanded;
      for (std::string& word : text::Words(ExpandContractedNegations(v.value, expanded))) {
        if (word == "cannot") word = "not";
        const WordFacts& facts = Facts(word);
        if (facts.filler) continue;
        if (facts.negation) out.negations.push_back(*facts.negation);
        term_units.push_back(facts.term);
        if (!v.member.empty() && stems.size() <= kMaxValueTerms) stems.push_back(facts.stem);
      }
      size_t start = 0;
      while (start < v.value.size()) {
        size_t end = start;
        while (end < v.value.size() && !IsSpace(v.value[end])) ++end;
        const std::string id = Identifier(std::string_view(v.value).substr(start, end - start));
        if (!id.empty()) {
          values.push_back(UnitHash('i', id));
          out.band_units.push_back(values.back());
        }
        start = end + 1;
      }
    } else {
      // A number or boolean, as JSON writes it.
      term_units.push_back(UnitHash('w', v.value));
      stems.push_back(v.value);
    }
    const bool member_value = !v.member.empty() && term_units.size() <= kMaxValueTerms;
    const bool label = !v.member.empty() && term_units.size() <= kMaxLabelTerms;
    for (const uint64_t h : term_units) {
      values.push_back(h);
      out.terms.push_back(h);
      if (!label) out.band_units.push_back(h);
    }
    if (member_value) {
      std::vector<std::string_view> sorted = stems;
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      std::string value = v.member + "=";
      for (const std::string_view term : sorted) absl::StrAppend(&value, ToAbsl(term), " ");
      members.push_back(UnitHash('v', value));
      if (label) out.band_units.push_back(members.back());
    }
  }
  SortUnique(values);
  SortUnique(out.negations);
  out.value_units = static_cast<int>(values.size());
  out.units = std::move(values);
  out.units.insert(out.units.end(), members.begin(), members.end());
  SortUnique(out.units);
  SortUnique(out.band_units);
  return out;
}

bool AddsNothing(const ContentUnits& b, const ContentUnits& a) {
  return b.negations == a.negations &&
         std::includes(a.units.begin(), a.units.end(), b.units.begin(), b.units.end());
}

}  // namespace strata::dedup
