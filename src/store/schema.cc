#include "store/schema.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace strata::store {
namespace {

// Append only: a released migration is never edited, a change is a new entry.
const std::vector<const char*>& Migrations() {
  static const auto* const kMigrations = new std::vector<const char*>{
      // 1: identities, versions on two time axes, retractions, keyword index.
      R"sql(
CREATE TABLE memories (
  id INTEGER PRIMARY KEY,
  category TEXT NOT NULL,
  key TEXT NOT NULL,
  workspace TEXT NOT NULL DEFAULT '',
  created_at_unix_ms INTEGER NOT NULL,
  -- The latest recorded_at or retraction of this identity; the next event must be later.
  last_event_at_unix_ms INTEGER NOT NULL,
  -- NULL while the identity is retracted (forgotten).
  current_version_id INTEGER,
  version_count INTEGER NOT NULL DEFAULT 0,
  UNIQUE (category, key, workspace)
);
CREATE TABLE versions (
  id INTEGER PRIMARY KEY,
  memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  body_json TEXT NOT NULL,
  -- FNV-1a 64 of the body in normal form (compact JSON); detects unchanged rewrites.
  body_hash INTEGER NOT NULL,
  type TEXT NOT NULL,
  tags_json TEXT NOT NULL DEFAULT '[]',
  source TEXT,
  importance REAL,
  valid_from_unix_ms INTEGER NOT NULL,
  valid_to_unix_ms INTEGER,
  recorded_at_unix_ms INTEGER NOT NULL,
  superseded_at_unix_ms INTEGER,
  UNIQUE (memory_id, version)
);
CREATE TABLE retractions (
  memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  retracted_at_unix_ms INTEGER NOT NULL,
  reason TEXT,
  PRIMARY KEY (memory_id, retracted_at_unix_ms)
) WITHOUT ROWID;
-- Contentless: the text lives in versions.body_json; rowid = versions.id.
CREATE VIRTUAL TABLE fts USING fts5(
  text, key, category,
  content = '',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
)sql",
      // 2: near-duplicate detection: band keys of current versions, aliases, settings.
      R"sql(
CREATE TABLE meta (
  name TEXT PRIMARY KEY,
  value TEXT
) WITHOUT ROWID;
-- One row per (band key, memory) of each memory's current version; see dedup/signature.h.
CREATE TABLE dedup_bands (
  band_key INTEGER NOT NULL,
  memory_id INTEGER NOT NULL,
  PRIMARY KEY (band_key, memory_id)
) WITHOUT ROWID;
-- Identities merged into another memory on write; reads by the alias find that memory.
CREATE TABLE aliases (
  category TEXT NOT NULL,
  key TEXT NOT NULL,
  workspace TEXT NOT NULL,
  memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  similarity REAL NOT NULL,
  created_at_unix_ms INTEGER NOT NULL,
  PRIMARY KEY (category, key, workspace)
) WITHOUT ROWID;
CREATE INDEX aliases_by_memory ON aliases (memory_id);
-- Merge level-0 segments 8 at a time rather than 4: single-memory commits each write one,
-- and measured at 100K memories this made single writes 28% faster.
INSERT INTO fts (fts, rank) VALUES ('automerge', 8);
)sql",
      // 3: embeddings. Each embedder configuration is a space; vectors of different spaces
      // are never compared. Rowid order is the order vectors were written, so a process
      // catches its vector index up with what another process embedded.
      R"sql(
CREATE TABLE embed_spaces (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,  -- embed::EmbedderInfo::Fingerprint()
  dimension INTEGER NOT NULL,
  created_at_unix_ms INTEGER NOT NULL
);
CREATE TABLE embeddings (
  -- Never reused (a purge deletes rows): the index's watermark relies on it.
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  space_id INTEGER NOT NULL REFERENCES embed_spaces(id) ON DELETE CASCADE,
  version_id INTEGER NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
  vec BLOB NOT NULL,  -- vector/codec.h
  UNIQUE (space_id, version_id)
);
CREATE INDEX embeddings_by_version ON embeddings (version_id);
)sql",
      // 4: a memory id is never given to another memory. SQLite hands out the largest rowid
      // + 1, so after a purge of the newest memory its id came back; new memories now take
      // the high-water mark + 1 (temporal/version_table.cc), which only rises.
      R"sql(
INSERT OR REPLACE INTO meta (name, value)
  VALUES ('memory_id_high_water', (SELECT COALESCE(MAX(id), 0) FROM memories));
CREATE TRIGGER memories_id_high_water AFTER INSERT ON memories
BEGIN
  UPDATE meta SET value = NEW.id
    WHERE name = 'memory_id_high_water' AND CAST(value AS INTEGER) < NEW.id;
END;
)sql",
      // 5: nor is a version id, which labels the version's vector in the index: a purged
      // version's label, reused, would have the index update a vector in place. Deletes
      // (purges) are rare and inserts are the write path, so the mark is kept on delete: the
      // largest id ever deleted (at migration, the largest id there is, as ids deleted
      // before cannot be known); a new version takes the larger of it and the largest id
      // present, + 1 (temporal/version_table.cc).
      R"sql(
INSERT OR REPLACE INTO meta (name, value)
  VALUES ('version_id_deleted_high_water', (SELECT COALESCE(MAX(id), 0) FROM versions));
CREATE TRIGGER versions_id_deleted_high_water AFTER DELETE ON versions
BEGIN
  UPDATE meta SET value = OLD.id
    WHERE name = 'version_id_deleted_high_water' AND CAST(value AS INTEGER) < OLD.id;
END;
)sql",
      // 6: explicit corrections (`remember` with `supersedes`): temporal/supersession_table.h.
      // Each correction of a memory is at a distinct instant, its own next event time.
      R"sql(
CREATE TABLE supersessions (
  predecessor_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  successor_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  at_unix_ms INTEGER NOT NULL,
  -- The successor's valid_from: the predecessor is not true from here on.
  valid_from_unix_ms INTEGER NOT NULL,
  PRIMARY KEY (predecessor_id, at_unix_ms)
) WITHOUT ROWID;
CREATE INDEX supersessions_by_successor ON supersessions (successor_id);
)sql",
      // 7: the memory id's mark moves on delete, as the version id's does (5), not on every
      // insert: a new memory no longer dirties the meta page (one WAL frame of the ~22 a
      // single write appended). A new memory takes the larger of the largest id present and
      // the largest deleted, + 1; the mark starts at 4's, the largest id ever given.
      R"sql(
DROP TRIGGER memories_id_high_water;
INSERT OR REPLACE INTO meta (name, value)
  VALUES ('memory_id_deleted_high_water',
          (SELECT MAX(COALESCE((SELECT CAST(value AS INTEGER) FROM meta
                                WHERE name = 'memory_id_high_water'), 0),
                      COALESCE((SELECT MAX(id) FROM memories), 0))));
DELETE FROM meta WHERE name = 'memory_id_high_water';
CREATE TRIGGER memories_id_deleted_high_water AFTER DELETE ON memories
BEGIN
  UPDATE meta SET value = OLD.id
    WHERE name = 'memory_id_deleted_high_water' AND CAST(value AS INTEGER) < OLD.id;
END;
)sql",
      // 8: band keys one row per memory (dedup/index.h), so a write dirties one page of them,
      // not one per key at random places (9 of a single write's 21 WAL frames at 10K). The
      // rows of dedup_bands are moved over, and the table dropped, by the dedup module on its
      // first use (SQL alone cannot pack them into a blob).
      R"sql(
CREATE TABLE dedup_keys (
  -- No foreign key: each write would pay its lookup. Who deletes a memory removes its keys;
  -- a row left behind only names a candidate that is verified and skipped.
  memory_id INTEGER PRIMARY KEY,
  keys BLOB NOT NULL  -- 8-byte little-endian integers
);
)sql",
      // 9: the keyword index in every script: tokenizer "strata" (text/tokenizer.h: bigrams
      // of Han, kana and Hangul; Snowball stems in the text's language). Every version the
      // old index held is indexed again, as text/fts_index.h indexes it; strata_body_text is
      // text::BodyText (text/fts5_extensions.h).
      R"sql(
CREATE TEMP TABLE fts_reindex (version_id INTEGER PRIMARY KEY);
INSERT INTO temp.fts_reindex SELECT rowid FROM fts;
DROP TABLE fts;
CREATE VIRTUAL TABLE fts USING fts5(
  text, key, category,
  content = '',
  tokenize = 'strata'
);
INSERT INTO fts (fts, rank) VALUES ('automerge', 8);
INSERT INTO fts (rowid, text, key, category)
  SELECT v.id, strata_body_text(v.body_json), m.key, m.category
  FROM temp.fts_reindex r JOIN versions v ON v.id = r.version_id
  JOIN memories m ON m.id = v.memory_id
  ORDER BY v.id;
DROP TABLE temp.fts_reindex;
)sql",
      // 10: a vector's links in the index (vector/hnsw_index.h, Links): the version ids its
      // entry in the lowest layer of the graph of the process that embedded it links to, so that
      // another process indexes it without searching its graph. NULL: none given (embedded by
      // an older build, or with no index at hand); that vector is inserted by a search.
      R"sql(
ALTER TABLE embeddings ADD COLUMN links BLOB;  -- 8-byte little-endian integers
)sql",
  };
  return *kMigrations;
}

// From this version on the keyword index is tokenized by "strata", which lives in text/ (it is
// text analysis: Snowball, language detection, the analyzer's words), a module above this
// one. The store names it only in SQL; the binding happens per connection, at open, through
// sqlite3_auto_extension, which text::InstallFts5Extensions() installs. So neither module
// links the other the wrong way, and a program that forgot the call is told so here, before
// any statement on the index fails with SQLite's "no such tokenizer".
constexpr int kFirstStrataTokenizerVersion = 9;
constexpr char kTokenizer[] = "strata";

absl::Status RequireTokenizer(SqliteDb& db) {
  if (db.HasFts5Tokenizer(kTokenizer)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      db.path(), ": the keyword index needs the FTS5 tokenizer \"", kTokenizer,
      "\", which this process has not registered (call text::InstallFts5Extensions() before "
      "opening a database)"));
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(Migrations().size()); }

absl::StatusOr<int> SchemaVersion(Db& db) {
  ASSIGN_OR_RETURN(Stmt stmt, db.Prepare("PRAGMA user_version"));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::InternalError("PRAGMA user_version returned no row");
  return static_cast<int>(stmt.Int(0));
}

absl::Status Migrate(Db& db) { return Migrate(db, LatestSchemaVersion()); }

absl::Status Migrate(Db& db, int target) {
  if (db.dialect() != Dialect::kSqlite) {
    return absl::FailedPreconditionError(
        "store::Migrate applies SQLite's schema; a PostgreSQL store has pg::Migrate");
  }
  ASSIGN_OR_RETURN(const int current, SchemaVersion(db));
  const int latest = LatestSchemaVersion();
  if (current > latest) {
    return absl::DataLossError(
        absl::StrCat(db.path(), " was written by a newer strata (schema version ", current,
                     "; this build understands up to ", latest, "); upgrade strata to open it"));
  }
  if (std::max(current, std::min(target, latest)) >= kFirstStrataTokenizerVersion) {
    RETURN_IF_ERROR(RequireTokenizer(static_cast<SqliteDb&>(db)));
  }
  for (int v = current; v < std::min(target, latest); ++v) {
    ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
    // Another process may have migrated while we waited for the lock.
    ASSIGN_OR_RETURN(const int now, SchemaVersion(db));
    if (now > v) continue;
    RETURN_IF_ERROR(db.Exec(Migrations()[v]));
    RETURN_IF_ERROR(db.Exec(absl::StrCat("PRAGMA user_version = ", v + 1)));
    RETURN_IF_ERROR(txn.Commit());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> ReadMeta(Db& db, std::string_view name) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT value FROM meta WHERE name = ?1"));
  s.Bind(1, name);
  ASSIGN_OR_RETURN(const bool row, s.Step());
  if (!row || s.IsNull(0)) return std::nullopt;
  return std::string(s.Text(0));
}

absl::Status WriteMeta(Db& db, std::string_view name, std::string_view value) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("INSERT INTO meta (name, value) VALUES (?1, ?2) "
                                      "ON CONFLICT (name) DO UPDATE SET value = excluded.value"));
  s.Bind(1, name).Bind(2, value);
  return s.Run();
}

}  // namespace strata::store
