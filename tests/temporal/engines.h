#pragma once
// Tests that run on both engines (temporal, dedup, vector, and the public API's in api/): a
// migrated, empty store on each.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "store/db.h"
#include "testing/temp_dir.h"

namespace strata::temporal::testing {

// Where a new, empty store goes: the SQLite file `file` in `dir`, or the URI of a new database
// on the PostgreSQL cluster tests/pg/with_cluster started ("" and a test failure without one).
std::string NewStorePath(store::Dialect dialect, strata::testing::TempDir& dir,
                         const std::string& file = "temporal.db");

// A new store with the latest schema: a SQLite file in `dir`, or a new database on the
// PostgreSQL cluster tests/pg/with_cluster started.
absl::StatusOr<std::unique_ptr<store::Db>> OpenMigrated(store::Dialect dialect,
                                                        strata::testing::TempDir& dir);

// A connection to the store at `path` (as NewStorePath gives) on `dialect`.
absl::StatusOr<std::unique_ptr<store::Db>> Connect(store::Dialect dialect, const std::string& path);

// Another connection to the store `db` is connected to.
absl::StatusOr<std::unique_ptr<store::Db>> OpenAgain(const store::Db& db);

// Both engines, and their names in test names ("Sqlite", "Postgres"), for
// INSTANTIATE_TEST_SUITE_P(Engines, SuiteName, Engines(), EngineName).
inline auto Engines() {
  return ::testing::Values(store::Dialect::kSqlite, store::Dialect::kPostgres);
}
std::string EngineName(const ::testing::TestParamInfo<store::Dialect>& info);

}  // namespace strata::temporal::testing
