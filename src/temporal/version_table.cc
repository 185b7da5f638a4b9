#include "temporal/version_table.h"

#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "pg/schema.h"
#include "util/json_text.h"
#include "util/status_macros.h"

namespace strata::temporal {
namespace {

constexpr char kVersionColumns[] =
    "v.id, v.memory_id, v.version, v.body_json, v.body_hash, v.type, v.tags_json, v.source, "
    "v.importance, v.valid_from_unix_ms, v.valid_to_unix_ms, v.recorded_at_unix_ms, "
    "v.superseded_at_unix_ms, m.category, m.key, m.workspace";

// Reads kVersionColumns starting at column `first`.
VersionRow ReadVersion(const store::Stmt& s, int first = 0) {
  const int c = first;
  VersionRow row;
  row.version_id = s.Int(c);
  row.body_hash = static_cast<uint64_t>(s.Int(c + 4));
  Version& v = row.version;
  v.memory_id = s.Int(c + 1);
  v.version = s.Int(c + 2);
  v.body_json = std::string(s.Text(c + 3));
  v.type = std::string(s.Text(c + 5));
  v.tags = ParseTags(s.Text(c + 6));
  if (!s.IsNull(c + 7)) v.source = std::string(s.Text(c + 7));
  if (!s.IsNull(c + 8)) v.importance = s.Double(c + 8);
  v.valid_from_unix_ms = s.Int(c + 9);
  v.valid_to_unix_ms = s.OptInt(c + 10);
  v.recorded_at_unix_ms = s.Int(c + 11);
  v.superseded_at_unix_ms = s.OptInt(c + 12);
  v.identity = {.category = std::string(s.Text(c + 13)),
                .key = std::string(s.Text(c + 14)),
                .workspace = std::string(s.Text(c + 15))};
  return row;
}

IdentityRow ReadIdentity(const store::Stmt& s) {
  return {.memory_id = s.Int(0),
          .identity = {.category = std::string(s.Text(1)),
                       .key = std::string(s.Text(2)),
                       .workspace = std::string(s.Text(3))},
          .last_event_at_unix_ms = s.Int(4),
          .current_version_id = s.OptInt(5),
          .version_count = s.Int(6)};
}

constexpr char kIdentityColumns[] =
    "id, category, key, workspace, last_event_at_unix_ms, current_version_id, version_count";

// The id for a new row of `table` (memories or versions) on SQLite: one past both the largest
// id present and the largest ever deleted (kept in meta under `deleted_mark` by a delete
// trigger), so that no id names two rows over time (schema migrations 4, 5 and 7).
// PostgreSQL's identity columns give that by themselves: their sequences never go back.
std::string NextIdSql(const char* table, const char* deleted_mark) {
  return absl::StrCat("(SELECT MAX(COALESCE((SELECT MAX(id) FROM ", table,
                      "), 0), CAST(value AS INTEGER)) + 1 FROM meta WHERE name = '", deleted_mark,
                      "')");
}

bool OnSqlite(const store::Db& db) { return db.dialect() == store::Dialect::kSqlite; }

}  // namespace

void BindScope(store::Stmt& s, const Scope& scope) {
  s.Bind(1, scope.workspace).Bind(2, scope.category);
}

VersionTimes VersionRow::Times() const {
  return {.valid_from_unix_ms = version.valid_from_unix_ms,
          .valid_to_unix_ms = version.valid_to_unix_ms,
          .recorded_at_unix_ms = version.recorded_at_unix_ms,
          .superseded_at_unix_ms = version.superseded_at_unix_ms};
}

absl::StatusOr<std::optional<IdentityRow>> VersionTable::FindIdentity(const Identity& identity) {
  static const std::string sql = absl::StrCat("SELECT ", kIdentityColumns,
                                              " FROM memories WHERE category = ?1 AND key = ?2 "
                                              "AND workspace = ?3");
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql, store::Plan::kOnce));
  s.Bind(1, identity.category).Bind(2, identity.key).Bind(3, identity.workspace);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::nullopt;
  return ReadIdentity(s);
}

absl::StatusOr<std::optional<IdentityRow>> VersionTable::FindIdentityById(int64_t memory_id) {
  static const std::string sql =
      absl::StrCat("SELECT ", kIdentityColumns, " FROM memories WHERE id = ?1");
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql, store::Plan::kOnce));
  s.Bind(1, memory_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::nullopt;
  return ReadIdentity(s);
}

absl::StatusOr<int64_t> VersionTable::InsertIdentity(const Identity& identity,
                                                     int64_t now_unix_ms) {
  static const std::string kSqlite = absl::StrCat(
      "INSERT INTO memories (id, category, key, workspace, created_at_unix_ms, "
      "last_event_at_unix_ms) VALUES (",
      NextIdSql("memories", "memory_id_deleted_high_water"), ", ?1, ?2, ?3, ?4, ?5)");
  static constexpr char kPostgres[] =
      "INSERT INTO memories (category, key, workspace, created_at_unix_ms, "
      "last_event_at_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id";
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(OnSqlite(*db_) ? kSqlite : kPostgres));
  // last_event starts before now so that the first version may be recorded at now.
  s.Bind(1, identity.category).Bind(2, identity.key).Bind(3, identity.workspace);
  s.Bind(4, now_unix_ms).Bind(5, now_unix_ms - 1);
  return s.RunInsert();
}

absl::StatusOr<int64_t> VersionTable::NewestVersionId() {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT COALESCE(MAX(id), 0) FROM versions"));
  ASSIGN_OR_RETURN(const bool row, s.Step());
  return row ? s.Int(0) : 0;
}

absl::StatusOr<VersionRow> VersionTable::LoadVersion(int64_t version_id) {
  static const std::string sql =
      absl::StrCat("SELECT ", kVersionColumns,
                   " FROM versions v JOIN memories m ON m.id = v.memory_id WHERE v.id = ?1");
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql));
  s.Bind(1, version_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no version with id ", version_id));
  return ReadVersion(s);
}

absl::StatusOr<std::vector<VersionRow>> VersionTable::LoadVersionsById(
    std::span<const int64_t> version_ids) {
  static const std::string kSqlite =
      absl::StrCat("SELECT ", kVersionColumns,
                   " FROM json_each(?1) AS c JOIN versions v ON v.id = c.value JOIN memories m ON "
                   "m.id = v.memory_id ORDER BY c.key");
  static const std::string kPostgres = absl::StrCat(
      "SELECT ", kVersionColumns,
      " FROM unnest(CAST(?1 AS bigint[])) WITH ORDINALITY AS c(value, n) "
      "JOIN versions v ON v.id = c.value JOIN memories m ON "
      "m.id = v.memory_id ORDER BY c.n");
  std::vector<VersionRow> rows;
  if (version_ids.empty()) return rows;
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare(OnSqlite(*db_) ? kSqlite : kPostgres, store::Plan::kGeneric));
  s.Bind(1, store::IdListOf(*db_, version_ids));
  rows.reserve(version_ids.size());
  while (rows.size() < version_ids.size()) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    VersionRow version = ReadVersion(s);
    if (version.version_id != version_ids[rows.size()]) break;  // One before it is missing.
    rows.push_back(std::move(version));
  }
  if (rows.size() < version_ids.size()) {
    return absl::NotFoundError(absl::StrCat("no version with id ", version_ids[rows.size()]));
  }
  return rows;
}

absl::StatusOr<std::vector<VersionRow>> VersionTable::LoadVersions(int64_t memory_id) {
  static const std::string sql =
      absl::StrCat("SELECT ", kVersionColumns,
                   " FROM versions v JOIN memories m ON m.id = v.memory_id "
                   "WHERE v.memory_id = ?1 ORDER BY v.version");
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql));
  s.Bind(1, memory_id);
  std::vector<VersionRow> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    rows.push_back(ReadVersion(s));
  }
  return rows;
}

absl::StatusOr<std::vector<int64_t>> VersionTable::LoadRetractions(int64_t memory_id) {
  ASSIGN_OR_RETURN(const std::vector<RetractionRow> rows, LoadRetractionRows(memory_id));
  std::vector<int64_t> out;
  out.reserve(rows.size());
  for (const RetractionRow& row : rows) out.push_back(row.at_unix_ms);
  return out;
}

absl::StatusOr<Timeline> VersionTable::LoadTimeline(int64_t memory_id) {
  Timeline timeline;
  ASSIGN_OR_RETURN(timeline.rows, LoadVersions(memory_id));
  ASSIGN_OR_RETURN(timeline.retractions, LoadRetractions(memory_id));
  timeline.times.reserve(timeline.rows.size());
  for (const VersionRow& row : timeline.rows) timeline.times.push_back(row.Times());
  return timeline;
}

absl::Status VersionTable::AppendVersion(const IdentityRow& identity, VersionRow& row) {
  Version& v = row.version;
  if (identity.current_version_id) {
    ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("UPDATE versions SET superseded_at_unix_ms = ?1 "
                                                 "WHERE id = ?2",
                                                 store::Plan::kOnce));
    s.Bind(1, v.recorded_at_unix_ms).Bind(2, *identity.current_version_id);
    RETURN_IF_ERROR(s.RunLater());
  }
  v.memory_id = identity.memory_id;
  v.version = identity.version_count + 1;
  v.superseded_at_unix_ms.reset();
  RETURN_IF_ERROR(InsertVersionRow(row));
  return SetIdentityState(identity.memory_id, row.version_id, v.version, v.recorded_at_unix_ms);
}

namespace {

// A version's columns after memory_id, from versions.version to superseded_at_unix_ms, as
// parameters `first`.. of `s`.
void BindVersionColumns(store::Stmt& s, const VersionRow& row, int first) {
  const Version& v = row.version;
  s.Bind(first, v.version).Bind(first + 1, v.body_json);
  s.Bind(first + 2, static_cast<int64_t>(row.body_hash)).Bind(first + 3, v.type);
  s.Bind(first + 4, TagsToJson(v.tags)).Bind(first + 5, v.source).Bind(first + 6, v.importance);
  s.Bind(first + 7, v.valid_from_unix_ms).Bind(first + 8, v.valid_to_unix_ms);
  s.Bind(first + 9, v.recorded_at_unix_ms).Bind(first + 10, v.superseded_at_unix_ms);
}

}  // namespace

absl::Status VersionTable::InsertVersionRow(VersionRow& row) {
  static const std::string kSqlite = absl::StrCat(
      "INSERT INTO versions (id, memory_id, version, body_json, body_hash, type, tags_json, "
      "source, importance, valid_from_unix_ms, valid_to_unix_ms, recorded_at_unix_ms, "
      "superseded_at_unix_ms) VALUES (",
      NextIdSql("versions", "version_id_deleted_high_water"),
      ", ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  // The id SendIdDraw drew (?13), or a new one.
  static const std::string kPostgres = absl::StrCat(
      "INSERT INTO versions (id, memory_id, version, body_json, body_hash, type, tags_json, "
      "source, importance, valid_from_unix_ms, valid_to_unix_ms, recorded_at_unix_ms, "
      "superseded_at_unix_ms) VALUES (COALESCE(CAST(?13 AS bigint), nextval('",
      pg::kVersionIdSequence,
      "')), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id");
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare(OnSqlite(*db_) ? kSqlite : kPostgres, store::Plan::kOnce));
  s.Bind(1, row.version.memory_id);
  BindVersionColumns(s, row, 2);
  if (!id_draw_) {
    if (!OnSqlite(*db_)) s.BindNull(13);
    ASSIGN_OR_RETURN(row.version_id, s.RunInsert());
    return absl::OkStatus();
  }
  // Its id came with an earlier answer (the memory's is left unused): written with the
  // COMMIT's answer.
  ASSIGN_OR_RETURN(const DrawnIds ids, TakeIdDraw());
  s.Bind(13, ids.version_id);
  RETURN_IF_ERROR(s.RunLater());
  row.version_id = ids.version_id;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> VersionTable::InsertIdentityWith(const Identity& identity,
                                                         int64_t now_unix_ms, VersionRow& row) {
  if (OnSqlite(*db_)) {
    ASSIGN_OR_RETURN(const int64_t id, InsertIdentity(identity, now_unix_ms));
    RETURN_IF_ERROR(AppendVersion({.memory_id = id, .identity = identity}, row));
    return id;
  }
  // The ids drawn first (with an earlier answer after SendIdDraw; otherwise now, in their own
  // round trip), so the memory row is written once with its state, as AppendVersion sets
  // it, not inserted and then updated; the rows are written with the next answer.
  if (!id_draw_) RETURN_IF_ERROR(SendIdDraw());
  ASSIGN_OR_RETURN(const DrawnIds ids, TakeIdDraw());
  ASSIGN_OR_RETURN(
      store::Stmt s,
      db_->Prepare("WITH m AS (INSERT INTO memories (id, category, key, workspace, "
                   "created_at_unix_ms, last_event_at_unix_ms, current_version_id, "
                   "version_count) VALUES (?16, ?12, ?13, ?14, ?15, ?10, ?17, 1)) "
                   "INSERT INTO versions (id, memory_id, version, body_json, body_hash, type, "
                   "tags_json, source, importance, valid_from_unix_ms, valid_to_unix_ms, "
                   "recorded_at_unix_ms, superseded_at_unix_ms) VALUES (?17, ?16, ?1, ?2, ?3, "
                   "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                   store::Plan::kOnce));
  Version& v = row.version;
  v.version = 1;
  v.superseded_at_unix_ms.reset();
  row.version_id = ids.version_id;
  BindVersionColumns(s, row, 1);
  s.Bind(12, identity.category).Bind(13, identity.key).Bind(14, identity.workspace);
  s.Bind(15, now_unix_ms).Bind(16, ids.memory_id).Bind(17, ids.version_id);
  RETURN_IF_ERROR(s.RunLater());
  v.memory_id = ids.memory_id;
  return ids.memory_id;
}

absl::StatusOr<VersionTable::DrawnIds> VersionTable::TakeIdDraw() {
  store::Stmt draw = *std::move(id_draw_);
  id_draw_.reset();
  ASSIGN_OR_RETURN(const bool drawn, draw.Step());
  if (!drawn) return absl::InternalError("drawing a memory's ids returned no row");
  const DrawnIds ids{.memory_id = draw.Int(0), .version_id = draw.Int(1)};
  ASSIGN_OR_RETURN(const bool more, draw.Step());
  (void)more;
  return ids;
}

absl::Status VersionTable::SendIdDraw() {
  if (OnSqlite(*db_) || id_draw_) return absl::OkStatus();
  // The identity columns' sequences by name, resolved once when prepared:
  // pg_get_serial_sequence searched the catalog on every call (6 us of a 41 us draw, pgbench).
  static const std::string kDraw = absl::StrCat("SELECT nextval('", pg::kMemoryIdSequence,
                                                "'), nextval('", pg::kVersionIdSequence, "')");
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(kDraw));
  RETURN_IF_ERROR(s.Send());
  id_draw_.emplace(std::move(s));
  return absl::OkStatus();
}

absl::Status VersionTable::Retract(const IdentityRow& identity, int64_t at_unix_ms,
                                   const std::string& reason) {
  if (identity.current_version_id) {
    ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("UPDATE versions SET superseded_at_unix_ms = ?1 "
                                                 "WHERE id = ?2",
                                                 store::Plan::kOnce));
    s.Bind(1, at_unix_ms).Bind(2, *identity.current_version_id);
    RETURN_IF_ERROR(s.Run());
  }
  RETURN_IF_ERROR(InsertRetraction(
      identity.memory_id,
      {.at_unix_ms = at_unix_ms,
       .reason = reason.empty() ? std::nullopt : std::optional<std::string>(reason)}));
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("UPDATE memories SET current_version_id = NULL, "
                                               "last_event_at_unix_ms = ?1 WHERE id = ?2"));
  s.Bind(1, at_unix_ms).Bind(2, identity.memory_id);
  return s.Run();
}

absl::StatusOr<int64_t> VersionTable::InsertIdentityAt(const Identity& identity,
                                                       int64_t preferred_id,
                                                       int64_t created_at_unix_ms,
                                                       int64_t last_event_at_unix_ms) {
  // One row of VALUES: an INSERT ... SELECT would open a statement journal, and with it
  // a savepoint that flushes FTS5's pending terms into a segment per memory.
  static const std::string kSqlite =
      "INSERT INTO memories (id, category, key, workspace, created_at_unix_ms, "
      "last_event_at_unix_ms) VALUES ((SELECT CASE WHEN ?1 > CAST(value AS INTEGER) "
      "AND NOT EXISTS (SELECT 1 FROM memories WHERE id = ?1) THEN ?1 ELSE MAX("
      "COALESCE((SELECT MAX(id) FROM memories), 0), CAST(value AS INTEGER)) + 1 END "
      "FROM meta WHERE name = 'memory_id_deleted_high_water'), ?2, ?3, ?4, ?5, ?6)";
  // The same rule, with PostgreSQL's mark (pg/schema.cc migration 4). Taking an id above
  // every one the sequence has handed out moves the sequence up to it, so no later id
  // collides; one below was handed out to a transaction that rolled back.
  static const std::string kPostgres = absl::StrCat(
      "INSERT INTO memories (id, category, key, workspace, created_at_unix_ms, "
      "last_event_at_unix_ms) VALUES (CASE WHEN ?1 > (SELECT value::BIGINT FROM meta "
      "WHERE name = 'memory_id_deleted_high_water') AND NOT EXISTS (SELECT 1 FROM memories "
      "WHERE id = ?1) THEN (CASE WHEN ?1 > COALESCE(pg_sequence_last_value('",
      pg::kMemoryIdSequence, "'), 0) THEN setval('", pg::kMemoryIdSequence,
      "', ?1) ELSE ?1 END) ELSE nextval('", pg::kMemoryIdSequence,
      "') END, ?2, ?3, ?4, ?5, ?6) RETURNING id");
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare(OnSqlite(*db_) ? kSqlite : kPostgres, store::Plan::kOnce));
  s.Bind(1, preferred_id).Bind(2, identity.category).Bind(3, identity.key);
  s.Bind(4, identity.workspace).Bind(5, created_at_unix_ms).Bind(6, last_event_at_unix_ms);
  return s.RunInsert();
}

absl::Status VersionTable::InsertVersionAsIs(VersionRow& row) { return InsertVersionRow(row); }

absl::Status VersionTable::InsertRetraction(int64_t memory_id, const RetractionRow& retraction) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("INSERT INTO retractions (memory_id, retracted_at_unix_ms, "
                                "reason) VALUES (?1, ?2, ?3)"));
  s.Bind(1, memory_id).Bind(2, retraction.at_unix_ms);
  s.Bind(3, retraction.reason);
  return s.Run();
}

absl::Status VersionTable::SetIdentityState(int64_t memory_id,
                                            std::optional<int64_t> current_version_id,
                                            int64_t version_count, int64_t last_event_at_unix_ms) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("UPDATE memories SET current_version_id = ?1, version_count = ?2, "
                                "last_event_at_unix_ms = ?3 WHERE id = ?4",
                                store::Plan::kOnce));
  s.Bind(1, current_version_id).Bind(2, version_count).Bind(3, last_event_at_unix_ms);
  s.Bind(4, memory_id);
  return s.RunLater();
}

absl::StatusOr<std::vector<RetractionRow>> VersionTable::LoadRetractionRows(int64_t memory_id) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT retracted_at_unix_ms, reason FROM retractions "
                                "WHERE memory_id = ?1 ORDER BY retracted_at_unix_ms"));
  s.Bind(1, memory_id);
  std::vector<RetractionRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    RetractionRow r{.at_unix_ms = s.Int(0)};
    if (!s.IsNull(1)) r.reason = std::string(s.Text(1));
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<ScopeCounts> VersionTable::Count(const Scope& scope) {
  ASSIGN_OR_RETURN(
      store::Stmt s,
      db_->Prepare("SELECT count(*), coalesce(sum(version_count), 0), coalesce(sum((SELECT "
                   "count(*) FROM retractions r WHERE r.memory_id = m.id)), 0) FROM memories m "
                   "WHERE (m.workspace = ?1 OR ?1 IS NULL) AND (m.category = ?2 OR ?2 IS NULL)"));
  BindScope(s, scope);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return absl::InternalError("count(*) returned no row");
  return ScopeCounts{.memories = s.Int(0), .versions = s.Int(1), .retractions = s.Int(2)};
}

absl::StatusOr<StoreCounts> VersionTable::CountAll() {
  StoreCounts counts;
  {
    ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT count(*), count(current_version_id), "
                                                 "coalesce(sum(version_count), 0) FROM memories"));
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (row) {
      counts.memories = s.Int(0);
      counts.active = s.Int(1);
      counts.versions = s.Int(2);
    }
  }
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT category, count(*) FROM memories WHERE "
                                               "current_version_id IS NOT NULL GROUP BY category"));
  while (true) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    counts.active_by_category[std::string(s.Text(0))] = s.Int(1);
  }
  return counts;
}

absl::StatusOr<bool> VersionTable::AnyCurrent() {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT EXISTS (SELECT 1 FROM memories WHERE "
                                               "current_version_id IS NOT NULL)"));
  ASSIGN_OR_RETURN(const bool row, s.Step());
  return row && s.Int(0) != 0;
}

absl::StatusOr<std::vector<int64_t>> VersionTable::CurrentVersionsNotSuperseded() {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT m.current_version_id FROM memories m "
                                               "JOIN versions v ON v.id = m.current_version_id "
                                               "WHERE NOT EXISTS (SELECT 1 FROM supersessions s "
                                               "WHERE s.predecessor_id = m.id "
                                               "AND s.at_unix_ms >= v.recorded_at_unix_ms)"));
  return s.Ints();
}

absl::StatusOr<IdentityScan> IdentityScan::Start(store::Db& db, const Scope& scope,
                                                 int64_t page_identities) {
  IdentityScan scan(db, scope, page_identities);
  RETURN_IF_ERROR(scan.StartPage());
  return scan;
}

absl::Status IdentityScan::StartPage() {
  // The page's identities by primary key, their versions by the (memory_id, version) index.
  static const std::string sql = absl::StrCat(
      "SELECT m.id, m.category, m.key, m.workspace, m.last_event_at_unix_ms, "
      "m.current_version_id, m.version_count, m.created_at_unix_ms, ",
      kVersionColumns,
      " FROM (SELECT * FROM memories WHERE id > ?3 AND (workspace = ?1 OR ?1 IS NULL) "
      "AND (category = ?2 OR ?2 IS NULL) ORDER BY id LIMIT ?4) AS m "
      "LEFT JOIN versions v ON v.memory_id = m.id ORDER BY m.id, v.version");
  stmt_.reset();
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql));
  BindScope(s, scope_);
  s.Bind(3, after_id_).Bind(4, page_identities_);
  stmt_.emplace(std::move(s));
  page_returned_ = 0;
  has_row_ = page_done_ = false;
  return absl::OkStatus();
}

absl::StatusOr<bool> IdentityScan::Next(ScannedIdentity& out) {
  while (!has_row_ && !done_) {
    if (page_done_) {
      // A page short of full was the last.
      if (page_returned_ < page_identities_) {
        done_ = true;
        break;
      }
      RETURN_IF_ERROR(StartPage());
    }
    ASSIGN_OR_RETURN(has_row_, stmt_->Step());
    page_done_ = !has_row_;
  }
  if (done_) return false;
  out.row = ReadIdentity(*stmt_);
  out.created_at_unix_ms = stmt_->Int(7);
  out.versions.clear();
  const int64_t memory_id = out.row.memory_id;
  while (has_row_ && stmt_->Int(0) == memory_id) {
    if (!stmt_->IsNull(8)) out.versions.push_back(ReadVersion(*stmt_, 8));
    ASSIGN_OR_RETURN(has_row_, stmt_->Step());
    page_done_ = !has_row_;
  }
  after_id_ = memory_id;
  ++page_returned_;
  return true;
}

absl::Status VersionTable::DeleteIdentity(int64_t memory_id) {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("DELETE FROM memories WHERE id = ?1"));
  s.Bind(1, memory_id);
  return s.Run();
}

std::vector<std::string> ParseTags(std::string_view tags_json) {
  std::vector<std::string> tags;
  if (tags_json == "[]") return tags;  // Most memories: no parse.
  nlohmann::json parsed = nlohmann::json::parse(tags_json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return tags;
  for (const auto& t : parsed) {
    if (t.is_string()) tags.push_back(t.get<std::string>());
  }
  return tags;
}

std::string TagsToJson(const std::vector<std::string>& tags) {
  return JsonText(nlohmann::json(tags));
}

}  // namespace strata::temporal
