#include "text/fts_index.h"

#include <limits>

#include "text/body_text.h"
#include "text/pg_keyword_index.h"
#include "util/status_macros.h"

namespace strata::text {

FtsIndex::FtsIndex(store::Db* db)
    : db_(db),
      postgres_(db->dialect() == store::Dialect::kPostgres ? std::make_unique<PgKeywordIndex>(db)
                                                           : nullptr) {}

FtsIndex::~FtsIndex() = default;

absl::Status FtsIndex::Add(int64_t version_id, std::string_view text, std::string_view key,
                           std::string_view category) {
  if (postgres_) return postgres_->Add(version_id, text, key, category);
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("INSERT INTO fts (rowid, text, key, category) "
                                               "VALUES (?1, ?2, ?3, ?4)"));
  s.Bind(1, version_id).Bind(2, text).Bind(3, key).Bind(4, category);
  return s.Run();
}

absl::Status FtsIndex::AddBeside(std::span<const KeywordDocument> documents) {
  if (!postgres_) {
    return absl::FailedPreconditionError("keyword rows beside the writers: PostgreSQL only");
  }
  return postgres_->AddBeside(documents);
}

absl::Status FtsIndex::AddBeside(int64_t version_id, std::string_view text, std::string_view key,
                                 std::string_view category) {
  const KeywordDocument document{.version_id = version_id,
                                 .text = std::string(text),
                                 .key = std::string(key),
                                 .category = std::string(category)};
  return AddBeside({&document, 1});
}

absl::Status FtsIndex::Remove(int64_t version_id, std::string_view body_json, std::string_view key,
                              std::string_view category) {
  if (postgres_) return postgres_->Remove(version_id);
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("INSERT INTO fts (fts, rowid, text, key, category) "
                                               "VALUES ('delete', ?1, ?2, ?3, ?4)"));
  s.Bind(1, version_id).Bind(2, BodyText(body_json)).Bind(3, key).Bind(4, category);
  return s.Run();
}

absl::StatusOr<std::vector<RankedMatch>> FtsIndex::Rank(const KeywordMatch& match, int64_t offset,
                                                        int64_t limit) {
  if (match.empty()) return std::vector<RankedMatch>();
  if (postgres_) return postgres_->Rank(match, offset, limit);
  // strata_bm25 and strata_phrases: text/fts5_extensions.h.
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT rowid, strata_bm25(fts) AS score, strata_phrases(fts) "
                                "FROM fts WHERE fts MATCH ?1 ORDER BY score DESC, rowid "
                                "LIMIT ?2 OFFSET ?3"));
  s.Bind(1, MatchExpression(match.terms, match.phrases)).Bind(2, limit).Bind(3, offset);
  std::vector<RankedMatch> matches;
  while (true) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    matches.push_back(
        {.version_id = s.Int(0), .score = s.Double(1), .phrases = static_cast<uint64_t>(s.Int(2))});
  }
  return matches;
}

absl::StatusOr<std::vector<int64_t>> FtsIndex::NewestMatches(const KeywordMatch& match,
                                                             std::optional<int64_t> below,
                                                             int64_t limit) {
  if (match.empty()) return std::vector<int64_t>();
  const int64_t before = below.value_or(std::numeric_limits<int64_t>::max());
  if (postgres_) return postgres_->NewestMatches(match, before, limit);
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT rowid FROM fts WHERE fts MATCH ?1 AND "
                                               "rowid < ?2 ORDER BY rowid DESC LIMIT ?3"));
  s.Bind(1, MatchExpression(match.terms, match.phrases)).Bind(2, before).Bind(3, limit);
  return s.Ints();
}

}  // namespace strata::text
