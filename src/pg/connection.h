#pragma once
// A PostgreSQL connection (libpq): parameterized statements returning rows as text, and
// transactions. The groundwork of PostgreSQL as a shared store (docs/decisions.md,
// "PostgreSQL schema"); nothing serves from it yet.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct pg_conn;

namespace strata::pg {

// A statement's parameter or a column's value in text form; empty is SQL NULL.
using Value = std::optional<std::string>;

// What a statement returned: its column names and rows (each a value per column, in text
// format: a BIGINT is its decimal digits, a BYTEA "\x" and hex), and how many rows it
// inserted, updated or deleted.
struct Rows {
  std::vector<std::string> columns;
  std::vector<std::vector<Value>> rows;
  int64_t affected = 0;
};

// One session with the server. Errors of every call carry libpq's or the server's message;
// a lost connection is Unavailable, a serialization failure or deadlock Aborted, a
// constraint violation FailedPrecondition, bad SQL InvalidArgument, the rest Internal.
// Thread safety: none; one thread uses a Connection at a time.
class Connection {
 public:
  // Connects to `uri` (a libpq URI, postgresql://..., or key=value string). Errors:
  // InvalidArgument for a malformed URI; Unavailable for a server that cannot be reached or
  // refuses the session.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& uri);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs one statement with parameters $1.. bound to `params`.
  absl::StatusOr<Rows> Query(std::string_view sql, const std::vector<Value>& params = {});
  // Runs `sql`, which may hold several statements and no parameters (a migration's script).
  absl::Status Exec(std::string_view sql);
  // The first column of the first row as an integer. NotFound when there is no row or it is
  // NULL.
  absl::StatusOr<int64_t> QueryInt(std::string_view sql, const std::vector<Value>& params = {});

  // The server's version as PQserverVersion gives it (150018 for 15.18).
  int server_version() const;
  bool in_transaction() const;
  // In a transaction one of whose statements failed: it can only be rolled back.
  bool transaction_failed() const;

 private:
  explicit Connection(pg_conn* conn) : conn_(conn) {}
  pg_conn* conn_;
};

// A transaction on a Connection that outlives it, rolled back when destroyed uncommitted.
// Thread safety: none, as its Connection.
class Transaction {
 public:
  // Errors: as Connection::Exec; FailedPrecondition when a transaction is already open.
  static absl::StatusOr<Transaction> Begin(Connection& conn);
  Transaction(Transaction&& other) noexcept : conn_(other.conn_) { other.conn_ = nullptr; }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  // Ends the transaction; after an error it is rolled back (by the destructor).
  absl::Status Commit();

 private:
  explicit Transaction(Connection& conn) : conn_(&conn) {}
  Connection* conn_;  // Null once committed or moved from.
};

}  // namespace strata::pg
