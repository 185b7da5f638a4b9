#include "dedup/index.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "dedup/band_map.h"
#include "dedup/content.h"
#include "dedup/signature.h"
#include "store/schema.h"
#include "temporal/version_table.h"
#include "text/body_text.h"
#include "util/int64_blob.h"
#include "util/status_macros.h"

namespace strata::dedup {
namespace {

// The meta row naming the signature scheme the dedup keys were made with.
constexpr char kSchemeName[] = "dedup_scheme";

absl::StatusOr<std::vector<int64_t>> DecodeKeys(std::string_view blob, int64_t memory_id) {
  std::optional<std::vector<int64_t>> keys = DecodeInt64s(blob);
  if (!keys) {
    return absl::DataLossError(absl::StrCat("dedup_keys of memory ", memory_id, ": ", blob.size(),
                                            " bytes, not a multiple of 8"));
  }
  return *std::move(keys);
}

}  // namespace

std::vector<int64_t> StoredVersionKeys(const temporal::VersionRow& row) {
  absl::StatusOr<text::ParsedBody> body = text::ParseBody(row.version.body_json);
  const Identity& id = row.version.identity;
  return BandKeys(body.ok() ? Analyze(*body) : ContentUnits{}, row.body_hash,
                  ScopeHash(id.category, id.workspace));
}

std::vector<int64_t> BodyKeys(const text::ParsedBody& body, const Identity& identity) {
  return BandKeys(Analyze(body), body.normal_hash,
                  ScopeHash(identity.category, identity.workspace));
}

struct DedupIndex::Loaded {
  BandMap map;
  int64_t versions_seen = 0;  // The newest version id whose memory's keys are in `map`.
  int64_t generation = 0;     // Of the table `map` was loaded from (Clear counts them).
};

DedupIndex::DedupIndex(store::Db* db, int64_t load_page_rows)
    : db_(db), load_page_rows_(load_page_rows) {}
DedupIndex::~DedupIndex() = default;
DedupIndex::DedupIndex(DedupIndex&&) noexcept = default;
DedupIndex& DedupIndex::operator=(DedupIndex&&) noexcept = default;

absl::Status DedupIndex::MoveBandRows() {
  ASSIGN_OR_RETURN(store::Stmt rows, db_->Prepare("SELECT memory_id, band_key FROM "
                                                  "dedup_bands ORDER BY memory_id"));
  ASSIGN_OR_RETURN(store::Stmt put,
                   db_->Prepare("INSERT OR IGNORE INTO dedup_keys (memory_id, keys) "
                                "VALUES (?1, ?2)"));
  int64_t memory_id = 0;
  std::vector<int64_t> keys;
  auto flush = [&]() -> absl::Status {
    if (keys.empty()) return absl::OkStatus();
    const std::string blob = EncodeInt64s(keys);
    put.Bind(1, memory_id).BindBlob(2, blob);
    keys.clear();
    return put.Run();
  };
  while (true) {
    ASSIGN_OR_RETURN(bool more, rows.Step());
    if (!more) break;
    if (rows.Int(0) != memory_id) {
      RETURN_IF_ERROR(flush());
      memory_id = rows.Int(0);
    }
    keys.push_back(rows.Int(1));
  }
  return flush();
}

absl::Status DedupIndex::EnsureUpgraded() {
  // PostgreSQL's schema began with dedup_keys.
  if (upgraded_ || db_->dialect() != store::Dialect::kSqlite) return absl::OkStatus();
  bool old_table = false;
  {
    ASSIGN_OR_RETURN(store::Stmt exists,
                     db_->Prepare("SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = "
                                  "'table' AND name = 'dedup_bands')"));
    ASSIGN_OR_RETURN(bool row, exists.Step());
    old_table = row && exists.Int(0) != 0;
  }
  if (old_table) {
    // Stores before schema version 8 kept one row per (band key, memory): gathered per
    // memory, in one savepoint (inside the caller's transaction, or its own).
    RETURN_IF_ERROR(db_->Exec("SAVEPOINT dedup_upgrade"));
    absl::Status status = [&]() -> absl::Status {
      RETURN_IF_ERROR(MoveBandRows());
      return db_->Exec("DROP TABLE dedup_bands");
    }();
    if (!status.ok()) {
      db_->Exec("ROLLBACK TO dedup_upgrade").IgnoreError();
      db_->Exec("RELEASE dedup_upgrade").IgnoreError();
      return status;
    }
    RETURN_IF_ERROR(db_->Exec("RELEASE dedup_upgrade"));
  }
  upgraded_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> DedupIndex::StoredKeys(int64_t memory_id) {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT keys FROM dedup_keys WHERE memory_id = ?1"));
  s.Bind(1, memory_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::vector<int64_t>{};
  return DecodeKeys(s.Blob(0), memory_id);
}

absl::Status DedupIndex::Set(int64_t memory_id, const std::vector<int64_t>& keys) {
  return Write(memory_id, keys, /*replace=*/true);
}

absl::Status DedupIndex::Add(int64_t memory_id, const std::vector<int64_t>& keys) {
  return Write(memory_id, keys, /*replace=*/false);
}

absl::Status DedupIndex::Write(int64_t memory_id, const std::vector<int64_t>& keys,
                               bool replace) {
  if (memory_id <= 0 || memory_id > BandMap::kMaxMemoryId) {
    return absl::OutOfRangeError(
        absl::StrCat("dedup index: memory id ", memory_id, " is beyond ", BandMap::kMaxMemoryId));
  }
  if (keys.empty()) return Remove(memory_id);
  RETURN_IF_ERROR(EnsureUpgraded());
  if (loaded_ && replace) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> old, StoredKeys(memory_id));
    for (int64_t key : old) loaded_->map.Erase(key, memory_id);
  }
  const std::string blob = EncodeInt64s(keys);
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("INSERT INTO dedup_keys (memory_id, keys) VALUES (?1, ?2) "
                                "ON CONFLICT (memory_id) DO UPDATE SET keys = excluded.keys",
                                store::Plan::kOnce));
  s.Bind(1, memory_id).BindBlob(2, blob);
  RETURN_IF_ERROR(s.RunLater());
  if (loaded_) {
    for (int64_t key : keys) loaded_->map.Insert(key, memory_id);
  }
  return absl::OkStatus();
}

absl::Status DedupIndex::Remove(int64_t memory_id) {
  RETURN_IF_ERROR(EnsureUpgraded());
  if (loaded_) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> old, StoredKeys(memory_id));
    for (int64_t key : old) loaded_->map.Erase(key, memory_id);
  }
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("DELETE FROM dedup_keys WHERE memory_id = ?1"));
  s.Bind(1, memory_id);
  return s.Run();
}

absl::StatusOr<DedupIndex::Loaded*> DedupIndex::Current() {
  RETURN_IF_ERROR(EnsureUpgraded());
  int64_t generation = 0;
  // Page after page of versions since the map last looked, while pages come full.
  for (int64_t rows = load_page_rows_; rows == load_page_rows_;) {
    ASSIGN_OR_RETURN(store::Stmt since, CatchUpRead());
    ASSIGN_OR_RETURN(bool more, since.Step());
    generation = more ? since.Int(0) : 0;
    if (!loaded_ || loaded_->generation != generation) break;
    for (rows = 0; more && !since.IsNull(1); ++rows) {  // NULL: no version since.
      loaded_->versions_seen = since.Int(1);
      if (!since.IsNull(3)) {
        const int64_t memory_id = since.Int(2);
        ASSIGN_OR_RETURN(const std::vector<int64_t> keys, DecodeKeys(since.Blob(3), memory_id));
        for (int64_t key : keys) loaded_->map.Insert(key, memory_id);
      }
      ASSIGN_OR_RETURN(more, since.Step());
    }
    if (rows < load_page_rows_) return loaded_.get();
  }
  auto fresh = std::make_unique<Loaded>();
  fresh->generation = generation;
  ASSIGN_OR_RETURN(fresh->versions_seen, temporal::VersionTable(db_).NewestVersionId());
  int64_t after = 0;
  for (int64_t rows = load_page_rows_; rows == load_page_rows_;) {
    ASSIGN_OR_RETURN(store::Stmt page,
                     db_->Prepare("SELECT memory_id, keys FROM dedup_keys WHERE memory_id > ?1 "
                                  "ORDER BY memory_id LIMIT ?2"));
    page.Bind(1, after).Bind(2, load_page_rows_);
    for (rows = 0;; ++rows) {
      ASSIGN_OR_RETURN(bool more, page.Step());
      if (!more) break;
      after = page.Int(0);
      ASSIGN_OR_RETURN(const std::vector<int64_t> keys, DecodeKeys(page.Blob(1), after));
      for (int64_t key : keys) fresh->map.Insert(key, after);
    }
  }
  loaded_ = std::move(fresh);
  return loaded_.get();
}

absl::StatusOr<store::Stmt> DedupIndex::CatchUpRead() {
  if (sent_) {
    store::Stmt since = std::move(*sent_);
    sent_.reset();
    return since;
  }
  // The generation, and a page of the versions written since the map was (by any
  // connection, this one's own included: their keys are already in, and inserting is
  // idempotent): one round trip. The keys by a subquery on their primary key, not a join:
  // without statistics (a table that grew since its last ANALYZE) PostgreSQL takes "id > ?1"
  // for a third of the table and hashes all of dedup_keys for a join that meets one or two
  // rows (0.8 ms a write at 3,000 versions, growing with the table). The page's LIMIT makes
  // the plan for any values the primary key walked from the bound, so it is planned once:
  // planned at each run it cost 0.13 ms of a write's server CPU.
  ASSIGN_OR_RETURN(
      store::Stmt since,
      db_->Prepare("SELECT g.generation, v.id, v.memory_id, (SELECT d.keys FROM dedup_keys d "
                   "WHERE d.memory_id = v.memory_id) FROM (SELECT COALESCE((SELECT "
                   "CAST(value AS BIGINT) FROM meta WHERE name = 'dedup_generation'), 0) AS "
                   "generation) AS g LEFT JOIN (SELECT id, memory_id FROM versions WHERE "
                   "id > ?1 ORDER BY id LIMIT ?2) AS v ON 1 = 1 ORDER BY v.id",
                   store::Plan::kGeneric));
  since.Bind(1, loaded_ ? loaded_->versions_seen : std::numeric_limits<int64_t>::max())
      .Bind(2, load_page_rows_);
  return since;
}

absl::Status DedupIndex::SendCatchUp() {
  if (!loaded_ || sent_) return absl::OkStatus();
  ASSIGN_OR_RETURN(store::Stmt since, CatchUpRead());
  RETURN_IF_ERROR(since.Send());
  sent_.emplace(std::move(since));
  return absl::OkStatus();
}

void DedupIndex::DropCatchUp() { sent_.reset(); }

absl::StatusOr<std::vector<int64_t>> DedupIndex::Candidates(const std::vector<int64_t>& keys,
                                                            size_t max) {
  std::vector<int64_t> out;
  if (keys.empty()) return out;
  ASSIGN_OR_RETURN(Loaded * loaded, Current());
  absl::flat_hash_map<int64_t, int> hits;
  for (int64_t key : keys) loaded->map.ForEach(key, [&](int64_t id) { ++hits[id]; });
  std::vector<std::pair<int, int64_t>> ranked;
  ranked.reserve(hits.size());
  for (const auto& [id, count] : hits) ranked.emplace_back(-count, id);
  std::sort(ranked.begin(), ranked.end());
  for (size_t i = 0; i < ranked.size() && i < max; ++i) out.push_back(ranked[i].second);
  return out;
}

absl::Status DedupIndex::Clear() {
  RETURN_IF_ERROR(EnsureUpgraded());
  sent_.reset();
  RETURN_IF_ERROR(db_->Exec("DELETE FROM dedup_keys"));
  // Other connections' maps reload when they see the generation change.
  RETURN_IF_ERROR(db_->Exec(
      "INSERT INTO meta (name, value) VALUES ('dedup_generation', '1') ON CONFLICT (name) "
      "DO UPDATE SET value = CAST(CAST(meta.value AS BIGINT) + 1 AS TEXT)"));
  loaded_.reset();
  return absl::OkStatus();
}

absl::StatusOr<std::optional<int64_t>> DedupIndex::FindAlias(const Identity& identity) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT memory_id FROM aliases WHERE category = ?1 AND key = ?2 "
                                "AND workspace = ?3",
                                store::Plan::kOnce));
  s.Bind(1, identity.category).Bind(2, identity.key).Bind(3, identity.workspace);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::nullopt;
  return s.Int(0);
}

absl::Status DedupIndex::PutAlias(const Identity& identity, int64_t memory_id, double similarity,
                                  int64_t now_unix_ms) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("INSERT INTO aliases (category, key, workspace, memory_id, "
                                "similarity, created_at_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
                                "ON CONFLICT (category, key, workspace) DO UPDATE SET "
                                "memory_id = excluded.memory_id, similarity = excluded.similarity, "
                                "created_at_unix_ms = excluded.created_at_unix_ms"));
  s.Bind(1, identity.category).Bind(2, identity.key).Bind(3, identity.workspace);
  s.Bind(4, memory_id).Bind(5, similarity).Bind(6, now_unix_ms);
  return s.Run();
}

absl::Status DedupIndex::RemoveAlias(const Identity& identity) {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("DELETE FROM aliases WHERE category = ?1 AND "
                                               "key = ?2 AND workspace = ?3",
                                               store::Plan::kOnce));
  s.Bind(1, identity.category).Bind(2, identity.key).Bind(3, identity.workspace);
  return s.RunLater();
}

absl::StatusOr<std::vector<AliasRow>> DedupIndex::AliasesOf(int64_t memory_id) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT category, key, workspace, similarity, created_at_unix_ms "
                                "FROM aliases WHERE memory_id = ?1"));
  s.Bind(1, memory_id);
  std::vector<AliasRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({.identity = {.category = std::string(s.Text(0)),
                                .key = std::string(s.Text(1)),
                                .workspace = std::string(s.Text(2))},
                   .memory_id = memory_id,
                   .similarity = s.Double(3),
                   .created_at_unix_ms = s.Int(4)});
  }
  // Sorted here, byte by byte as SQLite's BINARY collation: a PostgreSQL database's own
  // collation (en_US, ...) would order them otherwise.
  std::sort(out.begin(), out.end(), [](const AliasRow& a, const AliasRow& b) {
    return std::tie(a.identity.category, a.identity.key, a.identity.workspace) <
           std::tie(b.identity.category, b.identity.key, b.identity.workspace);
  });
  return out;
}

absl::StatusOr<int64_t> DedupIndex::CountAliases(const temporal::Scope& scope) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT count(*) FROM aliases a JOIN memories m ON m.id = "
                                "a.memory_id WHERE (m.workspace = ?1 OR ?1 IS NULL) AND "
                                "(m.category = ?2 OR ?2 IS NULL)"));
  temporal::BindScope(s, scope);
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

absl::StatusOr<std::string> DedupIndex::StoredScheme() {
  ASSIGN_OR_RETURN(const std::optional<std::string> scheme, store::ReadMeta(*db_, kSchemeName));
  return scheme.value_or(std::string());
}

absl::Status DedupIndex::SetStoredScheme(const std::string& scheme) {
  return store::WriteMeta(*db_, kSchemeName, scheme);
}

}  // namespace strata::dedup
