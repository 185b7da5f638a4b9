#pragma once
// The keyword index over versions (rowid = versions.id): SQLite's FTS5 table, or its tables on
// PostgreSQL (text/pg_keyword_index.h), which rank alike.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/db.h"
#include "text/fts_query.h"

namespace strata::text {

class PgKeywordIndex;

// Column weights for bm25(): body text, key, category.
inline constexpr double kTextWeight = 1.0;
inline constexpr double kKeyWeight = 2.0;
inline constexpr double kCategoryWeight = 0.5;
// The index's fields (FTS5's columns) in order, and their weights.
inline constexpr int kFields = 3;
inline constexpr double kFieldWeights[kFields] = {kTextWeight, kKeyWeight, kCategoryWeight};

// What the index is searched for: the versions holding any of `terms` or `phrases`
// (text::ParseQuery's). Numbered as text::MatchExpression orders them, terms first: the
// numbers of RankedMatch::phrases.
struct KeywordMatch {
  std::vector<std::string> terms;
  std::vector<QueryPhrase> phrases;
  bool empty() const { return terms.empty() && phrases.empty(); }
};

// A match of the index, as ranked.
struct RankedMatch {
  int64_t version_id;
  double score;      // BM25 with the column weights above; higher is better.
  uint64_t phrases;  // Bit i: the match holds term or phrase i of the KeywordMatch.
};

// What Add indexes of a version, owned (FtsIndex::AddBeside).
struct KeywordDocument {
  int64_t version_id = 0;
  std::string text;  // text::BodyText of its body.
  std::string key, category;
};

// Maintains the index: FTS5's contentless table on SQLite, which stores no text, so removal
// needs the same values that were added; on PostgreSQL the values are not read again (the
// version's row says its terms). Callers own transactions.
// Thread safety: as the Db it borrows.
class FtsIndex {
 public:
  explicit FtsIndex(store::Db* db);
  ~FtsIndex();

  // `text` is the version's searchable text (text::BodyText of its body).
  absl::Status Add(int64_t version_id, std::string_view text, std::string_view key,
                   std::string_view category);
  absl::Status Remove(int64_t version_id, std::string_view body_json, std::string_view key,
                      std::string_view category);
  // Add for versions whose writes committed, in one transaction of their own beside the
  // writers (PgKeywordIndex::AddBeside). REQUIRES: PostgreSQL (SQLite's writers take turns
  // anyway, and FTS5 cannot tell whether a version is indexed), no transaction open.
  absl::Status AddBeside(std::span<const KeywordDocument> documents);
  absl::Status AddBeside(int64_t version_id, std::string_view text, std::string_view key,
                         std::string_view category);

  // The matches of `match` ranked by BM25, best first (ties by version id), from the
  // `offset`-th on, at most `limit`; none for an empty `match`. Reads only the index: costs
  // what ranking every match costs, not what loading them does.
  absl::StatusOr<std::vector<RankedMatch>> Rank(const KeywordMatch& match, int64_t offset,
                                                int64_t limit);
  // The version ids matching `match`, newest (highest id) first, below `below` when given,
  // at most `limit`; none for an empty `match`. On SQLite the index's own order, which needs
  // no sort.
  absl::StatusOr<std::vector<int64_t>> NewestMatches(const KeywordMatch& match,
                                                     std::optional<int64_t> below, int64_t limit);

 private:
  store::Db* db_;  // Not owned; outlives this.
  // On PostgreSQL (null on SQLite); keeps what it learns across writes.
  std::unique_ptr<PgKeywordIndex> postgres_;
};

}  // namespace strata::text
