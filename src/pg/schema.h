#pragma once
// strata's tables in PostgreSQL, as numbered migrations recorded in schema_migrations and
// applied under an advisory lock, so that nodes starting together apply each once.
// docs/decisions.md, "PostgreSQL schema", maps them to the SQLite schema (store/schema.cc).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pg/connection.h"

namespace strata::pg {

// The schema version this build writes: the number of its migrations.
int LatestSchemaVersion();

// Applies the migrations the database has not recorded, up to `target` (at most
// LatestSchemaVersion()), each in its own transaction with its schema_migrations row. Holds
// the session advisory lock kMigrationLock throughout: a second connection migrating at the
// same time waits, then finds the work done. A database that records a migration newer than
// this build knows is refused with DataLoss and not modified.
absl::Status Migrate(Connection& conn);
absl::Status Migrate(Connection& conn, int target);

// What the database records, without changing it (no lock, no table created).
struct SchemaState {
  std::vector<int> applied;  // Ascending.
  int latest = 0;            // LatestSchemaVersion().
  int current() const { return applied.empty() ? 0 : applied.back(); }
  int pending() const { return current() < latest ? latest - current() : 0; }
};
absl::StatusOr<SchemaState> ReadSchemaState(Connection& conn);

// The database's store id: a random UUID given once, by the first node to ask (the meta row
// `store_id`). A node keys what it keeps locally (its saved vector index) by it, so that a
// database dropped and created again under the same URI is never mistaken for the old one.
// Needs the latest schema.
absl::StatusOr<std::string> StoreId(Connection& conn);

// The database's size on disk (pg_database_size): what the store takes, as a SQLite file's
// size says for SQLite.
absl::StatusOr<int64_t> DatabaseBytes(Connection& conn);

// The tables of the latest schema.
const std::vector<const char*>& TableNames();
// Each table's name and row count, in TableNames() order (strata doctor). Errors: as Query
// (a table missing when the schema is not the latest).
absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> CountRows(Connection& conn);

// pg_advisory_lock keys. Migrations hold the first for the session; every write that records
// a change holds the second for its transaction, so the change sequence commits in order.
// The third is held shared by a write's keyword rows written beside the writers
// (text::PgKeywordIndex::AddBeside) and exclusively by whatever unindexes, so that no keyword
// rows are written for a version purged meanwhile.
inline constexpr int64_t kMigrationLock = 0x5374726174610001;  // "Strata" 1
inline constexpr int64_t kChangeLock = 0x5374726174610002;
inline constexpr int64_t kKeywordLock = 0x5374726174610003;
// Held for its transaction by the node building the keyword index's next segments
// (text::PgKeywordIndex::BuildSegments), tried, not waited for: one node builds at a time.
inline constexpr int64_t kSegmentLock = 0x5374726174610004;

// The sequences of the identity columns memories.id and versions.id, by the names PostgreSQL
// gives them (table_column_seq), for the statements that draw or move ids themselves.
inline constexpr char kMemoryIdSequence[] = "memories_id_seq";
inline constexpr char kVersionIdSequence[] = "versions_id_seq";

}  // namespace strata::pg
