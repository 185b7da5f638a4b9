// libFuzzer target: the FTS5 query builder (text/fts_query.h) against real FTS5.
//
// docs/design.md §5: queries are free text from a model, never FTS5 syntax; no input can cause an
// FTS5 syntax error. The input is a query: its terms (ParseQuery) must keep their contract, and
// their MatchExpression must run as a MATCH on strata's own fts table (schema and tokenizer from
// store/schema) without an error. The input's lines are also given to MatchExpression as raw
// terms, which it must quote into a valid expression whatever they hold but NUL: FTS5 reads an
// expression only up to its first NUL, and ParseQuery's terms never hold one (checked below).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "store/db.h"
#include "store/schema.h"
#include "text/fts5_extensions.h"
#include "text/fts_index.h"
#include "text/fts_query.h"

namespace {

using strata::text::kMaxTermBytes;
using strata::text::kMaxTerms;

[[noreturn]] void Fail(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "fts_query_fuzzer: ");
  std::fwrite(what.data(), 1, what.size(), stderr);
  std::fprintf(stderr, "; input %zu bytes: ", input.size());
  std::fwrite(input.data(), 1, std::min<size_t>(input.size(), 500), stderr);
  std::fputc('\n', stderr);
  std::abort();
}

// An in-memory database with strata's schema and a few indexed rows, made once.
strata::store::Db& Database() {
  static strata::store::Db* db = [] {
    if (!strata::text::InstallFts5Extensions().ok()) Fail("cannot install FTS5 extensions", "");
    absl::StatusOr<std::unique_ptr<strata::store::Db>> opened =
        strata::store::Db::Open(":memory:", {});
    if (!opened.ok() || !strata::store::Migrate(**opened).ok()) Fail("cannot set up", "");
    strata::text::FtsIndex index(opened->get());
    const char* const rows[][3] = {
        {"the yellow canary sings", "bird", "animals"},
        {"Maria is a staff engineer on the storage team", "maria-role", "people"},
        {"café 東京 ñandú", "unicode", "places"},
        {"NEAR AND OR NOT quoted \"text\"", "fts-words", "syntax"},
    };
    int64_t id = 0;
    for (const auto& row : rows) {
      if (!index.Add(++id, row[0], row[1], row[2]).ok()) Fail("cannot index", row[0]);
    }
    return opened->release();
  }();
  return *db;
}

// Runs `expression` as a MATCH; fails the run on any SQLite error.
void RunMatch(const std::string& expression, std::string_view input) {
  absl::StatusOr<strata::store::Stmt> s = Database().Prepare(
      "SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY bm25(fts, 1.0, 2.0, 0.5) LIMIT 10");
  if (!s.ok()) Fail(std::string(s.status().message()), input);
  s->Bind(1, std::string_view(expression));
  for (;;) {
    absl::StatusOr<bool> row = s->Step();
    if (!row.ok()) {
      Fail("MATCH " + expression + " failed: " + std::string(row.status().message()), input);
    }
    if (!*row) break;
  }
}

bool IsTokenByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  const std::vector<std::string> terms = strata::text::ParseQuery(input).terms;
  if (terms.size() > kMaxTerms) Fail("more than kMaxTerms terms", input);
  bool has_content = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string& term = terms[i];
    if (term.empty() || term.size() > kMaxTermBytes) Fail("a term of bad length: " + term, input);
    for (unsigned char c : term) {
      if (!IsTokenByte(c)) Fail("a term with a separator or uppercase byte: " + term, input);
    }
    if (std::find(terms.begin() + i + 1, terms.end(), term) != terms.end()) {
      Fail("a duplicate term: " + term, input);
    }
    has_content |= !strata::text::IsStopWord(term);
  }
  // Stop words are dropped whenever another term remains.
  if (has_content) {
    for (const std::string& term : terms) {
      if (strata::text::IsStopWord(term)) Fail("a stop word beside other terms: " + term, input);
    }
  }
  const std::string expression = strata::text::MatchExpression(terms);
  if (expression.empty() != terms.empty()) Fail("an empty expression for terms", input);
  if (!expression.empty()) RunMatch(expression, input);

  // The lines as raw terms (quotes, NULs and all).
  std::vector<std::string> raw;
  for (std::string_view rest = input; !rest.empty() && raw.size() < 8;) {
    const size_t newline = rest.find('\n');
    std::string term(rest.substr(0, newline));
    std::erase(term, '\0');
    raw.push_back(std::move(term));
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
  }
  const std::string raw_expression = strata::text::MatchExpression(raw);
  if (raw_expression.empty() != raw.empty()) Fail("an empty expression for raw terms", input);
  if (!raw_expression.empty()) RunMatch(raw_expression, input);
  return 0;
}
