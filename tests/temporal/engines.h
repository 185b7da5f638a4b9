#pragma once
// The temporal tests run on both engines: a migrated, empty store on each.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "store/db.h"
#include "testing/temp_dir.h"

namespace strata::temporal::testing {

// A new store with the latest schema: a SQLite file in `dir`, or a new database on the
// PostgreSQL cluster tests/pg/with_cluster started.
absl::StatusOr<std::unique_ptr<store::Db>> OpenMigrated(store::Dialect dialect,
                                                        strata::testing::TempDir& dir);

// "Sqlite" or "Postgres", for test names.
std::string DialectName(store::Dialect dialect);

}  // namespace strata::temporal::testing
