#include "temporal/engines.h"

#include "pg/db.h"
#include "pg/pg_test_db.h"
#include "pg/schema.h"
#include "store/schema.h"
#include "text/fts5_extensions.h"
#include "util/status_macros.h"

namespace strata::temporal::testing {

std::string NewStorePath(store::Dialect dialect, strata::testing::TempDir& dir,
                         const std::string& file) {
  return dialect == store::Dialect::kSqlite ? dir.File(file) : pg::testing::FreshDatabaseUri();
}

absl::StatusOr<std::unique_ptr<store::Db>> OpenMigrated(store::Dialect dialect,
                                                        strata::testing::TempDir& dir) {
  if (dialect == store::Dialect::kSqlite) {
    RETURN_IF_ERROR(text::InstallFts5Extensions());
    ASSIGN_OR_RETURN(std::unique_ptr<store::SqliteDb> db,
                     store::Db::Open(NewStorePath(dialect, dir), {}));
    RETURN_IF_ERROR(store::Migrate(*db));
    return db;
  }
  const std::string uri = NewStorePath(dialect, dir);
  if (uri.empty()) return absl::FailedPreconditionError("no PostgreSQL cluster");
  ASSIGN_OR_RETURN(std::unique_ptr<pg::PgDb> db, pg::PgDb::Open(uri));
  RETURN_IF_ERROR(pg::Migrate(db->connection()));
  return db;
}

absl::StatusOr<std::unique_ptr<store::Db>> Connect(store::Dialect dialect,
                                                   const std::string& path) {
  if (dialect == store::Dialect::kSqlite) {
    ASSIGN_OR_RETURN(std::unique_ptr<store::SqliteDb> db, store::Db::Open(path, {}));
    return db;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<pg::PgDb> db, pg::PgDb::Open(path));
  return db;
}

absl::StatusOr<std::unique_ptr<store::Db>> OpenAgain(const store::Db& db) {
  return Connect(db.dialect(), db.path());
}

std::string EngineName(const ::testing::TestParamInfo<store::Dialect>& info) {
  return info.param == store::Dialect::kSqlite ? "Sqlite" : "Postgres";
}

}  // namespace strata::temporal::testing
