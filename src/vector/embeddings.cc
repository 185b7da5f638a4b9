#include "vector/embeddings.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "text/body_text.h"
#include "util/int64_blob.h"
#include "util/status_macros.h"
#include "vector/codec.h"

namespace strata::vector {
namespace {

// The scope's conditions on `v` (versions) and `m` (memories).
std::string ScopeSql(const store::Db& db, const BacklogScope& scope) {
  std::string sql;
  if (scope.category) absl::StrAppend(&sql, " AND m.category = :category");
  if (scope.memory_id) absl::StrAppend(&sql, " AND v.memory_id = :memory_id");
  if (scope.memory_ids) {
    absl::StrAppend(&sql, db.dialect() == store::Dialect::kSqlite
                              ? " AND v.memory_id IN (SELECT value FROM json_each(:memory_ids))"
                              : " AND v.memory_id = ANY(CAST(:memory_ids AS bigint[]))");
  }
  return sql;
}

void BindScope(const store::Db& db, store::Stmt& s, const BacklogScope& scope) {
  if (scope.category) s.Bind(s.ParameterIndex(":category"), std::string_view(*scope.category));
  if (scope.memory_id) s.Bind(s.ParameterIndex(":memory_id"), *scope.memory_id);
  if (scope.memory_ids) {
    s.Bind(s.ParameterIndex(":memory_ids"), store::IdListOf(db, *scope.memory_ids));
  }
}

}  // namespace

namespace {

absl::StatusOr<std::optional<Space>> FindSpace(store::Db& db, const std::string& fingerprint) {
  ASSIGN_OR_RETURN(store::Stmt select,
                   db.Prepare("SELECT id, dimension FROM embed_spaces WHERE fingerprint = ?"));
  select.Bind(1, std::string_view(fingerprint));
  ASSIGN_OR_RETURN(bool row, select.Step());
  if (!row) return std::nullopt;
  return Space{.id = select.Int(0),
               .fingerprint = fingerprint,
               .dimension = static_cast<int>(select.Int(1))};
}

}  // namespace

absl::StatusOr<Space> RegisterSpace(store::Db& db, const embed::EmbedderInfo& info,
                                    int64_t now_unix_ms) {
  const std::string fingerprint = info.Fingerprint();
  // A known space costs a read: no write transaction at every start.
  ASSIGN_OR_RETURN(std::optional<Space> space, FindSpace(db, fingerprint));
  if (space) return *space;
  {
    // In a transaction: an insert outside one may fail at once, not wait, when another
    // process registers at the same moment.
    ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(db));
    ASSIGN_OR_RETURN(store::Stmt insert,
                     db.Prepare("INSERT INTO embed_spaces (fingerprint, dimension, "
                                "created_at_unix_ms) VALUES (?, ?, ?) "
                                "ON CONFLICT (fingerprint) DO NOTHING"));
    insert.Bind(1, std::string_view(fingerprint))
        .Bind(2, int64_t{info.dimension})
        .Bind(3, now_unix_ms);
    RETURN_IF_ERROR(insert.Run());
    RETURN_IF_ERROR(txn.Commit());
  }
  ASSIGN_OR_RETURN(space, FindSpace(db, fingerprint));
  if (!space) return absl::InternalError("embed_spaces: the space just registered is missing");
  return *space;
}

std::string EmbeddingText(std::string_view key, std::string_view body_json) {
  std::string text(key);
  for (char& c : text) {
    if (c == '-' || c == '_' || c == '.' || c == '/' || c == ':') c = ' ';
  }
  absl::StrAppend(&text, "\n", text::BodyText(body_json));
  return text;
}

absl::StatusOr<std::vector<PendingVersion>> PendingVersions(store::Db& db, int64_t space,
                                                            const BacklogScope& scope,
                                                            int64_t after_id, int limit) {
  // The vectors' bound (e.version_id > :after) says nothing new to the rows, but a plan
  // may merge the versions past the cursor with the vectors by version id, and without it
  // read every vector from the first: on PostgreSQL during a load from empty, before its
  // statistics, each of a node's reads took 3-12 ms at 30,000 (auto_explain), ~5% of the
  // server's CPU a write.
  ASSIGN_OR_RETURN(
      store::Stmt s,
      db.Prepare(absl::StrCat(
          "SELECT v.id, v.memory_id, m.key, v.body_json FROM versions v "
          "JOIN memories m ON m.id = v.memory_id "
          "WHERE v.id > :after AND NOT EXISTS (SELECT 1 FROM embeddings e "
          "WHERE e.space_id = :space AND e.version_id = v.id AND e.version_id > :after)",
          ScopeSql(db, scope), " ORDER BY v.id LIMIT :limit")));
  s.Bind(s.ParameterIndex(":after"), after_id)
      .Bind(s.ParameterIndex(":space"), space)
      .Bind(s.ParameterIndex(":limit"), int64_t{limit});
  BindScope(db, s, scope);
  std::vector<PendingVersion> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({.version_id = s.Int(0),
                   .memory_id = s.Int(1),
                   .text = EmbeddingText(s.Text(2), s.Text(3))});
  }
  return out;
}

absl::StatusOr<VectorCounts> CountVectorsAndPending(store::Db& db, int64_t space) {
  // Each vector belongs to one distinct, existing version (UNIQUE, ON DELETE CASCADE).
  ASSIGN_OR_RETURN(store::Stmt s,
                   db.Prepare("SELECT (SELECT count(*) FROM embeddings WHERE space_id = ?1), "
                              "(SELECT count(*) FROM versions)"));
  s.Bind(1, space);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return VectorCounts{};
  return VectorCounts{.vectors = s.Int(0), .pending = s.Int(1) - s.Int(0)};
}

absl::StatusOr<int64_t> CountPending(store::Db& db, int64_t space, const BacklogScope& scope) {
  if (!scope.category && !scope.memory_id && !scope.memory_ids) {
    ASSIGN_OR_RETURN(const VectorCounts counts, CountVectorsAndPending(db, space));
    return counts.pending;
  }
  ASSIGN_OR_RETURN(store::Stmt s,
                   db.Prepare(absl::StrCat(
                       "SELECT count(*) FROM versions v JOIN memories m ON m.id = v.memory_id "
                       "WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
                       "WHERE e.space_id = :space AND e.version_id = v.id)",
                       ScopeSql(db, scope))));
  s.Bind(s.ParameterIndex(":space"), space);
  BindScope(db, s, scope);
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

absl::StatusOr<int64_t> LastVectorRow(store::Db& db) {
  ASSIGN_OR_RETURN(store::Stmt s, db.Prepare("SELECT coalesce(max(id), 0) FROM embeddings"));
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

absl::StatusOr<int64_t> VectorRowSequence(store::Db& db) {
  // SQLite's AUTOINCREMENT keeps it in sqlite_sequence; PostgreSQL's identity column in its
  // sequence (NULL until the first value is handed out).
  static constexpr char kSqlite[] =
      "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'embeddings'), 0)";
  static constexpr char kPostgres[] =
      "SELECT coalesce(pg_sequence_last_value(CAST(pg_get_serial_sequence('embeddings', 'id') "
      "AS regclass)), 0)";
  ASSIGN_OR_RETURN(store::Stmt s,
                   db.Prepare(db.dialect() == store::Dialect::kSqlite ? kSqlite : kPostgres));
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

absl::Status StoreVectors(store::Db& db, int64_t space, int dimension,
                          std::span<const int64_t> version_ids, std::span<const float> vectors,
                          std::span<const std::vector<int64_t>> links) {
  // A vector replaced gets a new row id (SQLite's REPLACE deletes and inserts), so that
  // readers catching up by row id (ReadVectorsAfter) see it.
  static constexpr char kSqlite[] =
      "INSERT OR REPLACE INTO embeddings (space_id, version_id, vec, links) "
      "SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM versions WHERE id = ?2)";
  static constexpr char kPostgres[] =
      "INSERT INTO embeddings (space_id, version_id, vec, links) "
      "SELECT CAST(?1 AS BIGINT), CAST(?2 AS BIGINT), CAST(?3 AS BYTEA), CAST(?4 AS BYTEA) "
      "WHERE EXISTS (SELECT 1 FROM versions WHERE id = ?2) ON CONFLICT (space_id, version_id) "
      "DO UPDATE SET id = DEFAULT, vec = excluded.vec, links = excluded.links";
  const char* sql = db.dialect() == store::Dialect::kSqlite ? kSqlite : kPostgres;
  ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(db));
  for (size_t i = 0; i < version_ids.size(); ++i) {
    const std::string blob = Encode(vectors.subspan(i * dimension, dimension));
    ASSIGN_OR_RETURN(store::Stmt s, db.Prepare(sql, store::Plan::kOnce));
    s.Bind(1, space).Bind(2, version_ids[i]).BindBlob(3, blob);
    if (links.empty() || links[i].empty()) {
      s.BindNull(4);
    } else {
      s.BindBlob(4, EncodeInt64s(links[i]));
    }
    RETURN_IF_ERROR(s.Run());
  }
  return txn.Commit();
}

absl::StatusOr<int64_t> ReadVectorsAfter(store::Db& db, int64_t space, int dimension,
                                         int64_t& after_row, int64_t limit, const VectorRowFn& fn) {
  // Every space's rows, told apart here: asked for one space's, a plan may find them by the
  // index by space and version and sort them, reading every vector of the space (on
  // PostgreSQL during a load from empty, before its statistics: 2-13 ms a read at 30,000,
  // auto_explain). A store has another space's rows only while a new model's vectors are
  // made.
  ASSIGN_OR_RETURN(store::Stmt s, db.Prepare("SELECT id, version_id, vec, links, space_id "
                                             "FROM embeddings WHERE id > ? ORDER BY id LIMIT ?"));
  s.Bind(1, after_row).Bind(2, limit);
  std::vector<float> v(dimension);
  int64_t rows = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ++rows;
    after_row = s.Int(0);
    if (s.Int(4) != space) continue;
    if (!Decode(s.Blob(2), v)) continue;  // Not of this dimension: never written by us.
    // Links that do not decode were not written by us either: the vector is searched for.
    const std::vector<int64_t> links = DecodeInt64s(s.Blob(3)).value_or(std::vector<int64_t>());
    fn(s.Int(0), s.Int(1), v, links);
  }
  return rows;
}

}  // namespace strata::vector
