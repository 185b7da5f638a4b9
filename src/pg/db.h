#pragma once
// store::Db on PostgreSQL: the owners' statements (written with SQLite's `?1` and `:name`
// parameters) run on a pg::Connection. docs/decisions.md, "The storage seam".

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "pg/connection.h"
#include "pg/schema.h"
#include "store/db.h"

namespace strata::pg {

// `sql` with its parameters renumbered for PostgreSQL: `?N` becomes `$N`, a bare `?` the next
// number, and each `:name` the number SQLite gives it (one past the largest before its first
// use), the same at every use. Quoted strings and identifiers, comments and `::` casts are
// left as they are.
struct Placeholders {
  std::string sql;
  std::vector<std::string> names;  // names[i]: parameter i + 1's ":name", or "" when numbered.
  int count = 0;                   // The largest parameter number.
};
Placeholders TranslatePlaceholders(std::string_view sql);

// One PostgreSQL session as a store::Db. Each statement is prepared by the server once per
// session (and again after a reconnect); its rows are read whole when it is first stepped
// (text format) and held until it is reset. A write transaction waits for locks at most
// DbOptions::busy_timeout_ms (lock_timeout), then fails with Unavailable.
// Thread safety: none, as store::Db.
class PgDb final : public store::Db {
 public:
  // Connects to `uri`. Errors: as Connection::Open.
  static absl::StatusOr<std::unique_ptr<PgDb>> Open(const std::string& uri,
                                                    const store::DbOptions& options = {});
  ~PgDb() override;

  store::Dialect dialect() const override { return store::Dialect::kPostgres; }
  absl::Status Exec(std::string_view sql) override;
  int64_t Changes() const override { return changes_; }

  Connection& connection() { return *conn_; }

 private:
  friend class PgStmt;
  PgDb(std::unique_ptr<Connection> conn, std::string uri, int lock_timeout_ms)
      : store::Db(std::move(uri)),
        conn_(std::move(conn)),
        lock_timeout_(absl::StrCat("SET LOCAL lock_timeout = ", lock_timeout_ms)) {}

  absl::StatusOr<std::unique_ptr<store::EngineStmt>> Compile(std::string_view sql,
                                                              store::Plan plan) override;
  bool InTransaction() const override { return conn_->in_transaction(); }
  absl::StatusOr<std::unique_lock<std::timed_mutex>> BeginWrite(bool take_turns) override;
  absl::Status BeginRead() override;
  absl::Status Commit(const std::function<void()>& then) override;

  std::unique_ptr<Connection> conn_;
  const std::string lock_timeout_;  // A write transaction's SET LOCAL lock_timeout.
  const std::string change_lock_ = absl::StrCat("SELECT pg_advisory_xact_lock(", kChangeLock, ")");
  int64_t changes_ = 0;            // Rows the last statement inserted, updated or deleted.
  int64_t statements_ = 0;         // Statements compiled: the last one's name is strata_<n>.
};

}  // namespace strata::pg
