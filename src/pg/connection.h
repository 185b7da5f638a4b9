#pragma once
// A PostgreSQL connection (libpq): parameterized statements returning rows as text, prepared
// statements, transactions, and reconnecting after the server closed the session.
// docs/decisions.md, "PostgreSQL schema" and "The storage seam".

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/db.h"

struct pg_conn;
struct pg_result;

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

// A statement's result, owned: the rows in text format, read in place.
// Thread safety: none.
class Result {
 public:
  Result() = default;
  Result(Result&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  Result& operator=(Result&& other) noexcept;
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result();

  int rows() const;
  // REQUIRES: row < rows(), and col less than the statement's column count.
  bool IsNull(int row, int col) const;
  // Empty for NULL; valid while this Result lives.
  std::string_view Value(int row, int col) const;
  // Rows the statement inserted, updated or deleted.
  int64_t affected() const;
  // Holds no result (default-constructed, or moved from).
  bool empty() const { return result_ == nullptr; }

 private:
  friend class Connection;
  explicit Result(pg_result* result) : result_(result) {}
  pg_result* result_ = nullptr;  // Owned; null when empty.
};

// A statement parsed by the server once per session (PQprepare) and run by name after that,
// planned as `plan` says in a transaction (outside one, always for each run): for its
// parameters' values at each run (the session's plan_cache_mode force_custom_plan), once
// its plan for any values costs no more than those (kOnce: auto, after five runs), or once
// for any values (kGeneric: force_generic_plan). Owned by its user, who passes it to one
// Connection.
struct PreparedStatement {
  std::string name;      // Unique among the connection's prepared statements.
  std::string sql;       // With $1.. parameters.
  store::Plan plan = store::Plan::kForEachRun;
  int64_t session = -1;  // The Connection::session() it was prepared in; -1 before.
};

// A parameter for RunPrepared: a text value, NULL, or bytes sent as they are (binary, for a
// BYTEA parameter).
struct Param {
  std::string value;
  bool null = true;
  bool binary = false;
};

// One session with the server. Errors of every call carry libpq's or the server's message;
// a lost connection is Unavailable, a serialization failure or deadlock Aborted, a
// constraint violation FailedPrecondition, bad SQL InvalidArgument, a lock held past
// lock_timeout or a statement past statement_timeout Unavailable, the rest Internal.
// When the server closes the session (a restart, pg_terminate_backend), the statement in
// flight fails with Unavailable and the next one reconnects (PQreset); a session that ended
// while idle is noticed, and reconnected, before the next statement runs. A transaction open
// when it closed is gone with it: until the caller ends it (ROLLBACK, or COMMIT, which fails)
// every statement fails, so that none runs outside the transaction it was written for.
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
  // Runs `stmt` with parameters $1.. bound to `params`, preparing it first when this session
  // has not (a new statement, or a new session after a reconnect).
  absl::StatusOr<Result> RunPrepared(PreparedStatement& stmt, std::span<const Param> params);
  // Runs `sql`, which may hold several statements and no parameters (a migration's script);
  // one statement while statements are queued.
  absl::Status Exec(std::string_view sql);
  // Sends `stmt` with `params` ahead without waiting for its outcome: its result is read
  // with the next statement's, in that statement's round trip (libpq's pipeline mode). If it
  // fails, the statements queued after it and that next one do not run, and the next one
  // returns its error; the transaction can then only be rolled back. REQUIRES: in a
  // transaction (a queued statement ends with it at the latest, at COMMIT).
  // With `keep`, the statement's result is moved there when it is read; until then
  // Waiting(keep) holds, and Flush reads it at once. REQUIRES: `keep` stays valid until it is
  // read, the statement fails, or Forget(keep).
  absl::Status Queue(PreparedStatement& stmt, std::span<const Param> params,
                     Result* keep = nullptr);
  // A statement queued with `keep` whose result is not read yet.
  bool Waiting(const Result* keep) const;
  // Its result is no longer wanted: read, when it comes, as that of a statement without one.
  void Forget(const Result* keep);
  // Reads the outcome of every queued statement now, in one round trip. Errors: the first
  // queued statement's that failed.
  absl::Status Flush();
  // Queue, for one statement without parameters. REQUIRES: in a transaction, or `sql` begins
  // one.
  absl::Status QueueSql(std::string_view sql);
  // Sends COMMIT behind the queued statements without waiting for its outcome: a next
  // transaction's statements (from its BEGIN) may be queued behind it, to be read in the
  // same round trip, and run whether or not it commits (after a statement of its
  // transaction failed, only from the next round trip on). Its outcome is read by the next
  // round trip, or by CommitOutcome. REQUIRES: in a transaction, no COMMIT sent by
  // QueueCommit unread.
  absl::Status QueueCommit();
  // The outcome of the COMMIT QueueCommit sent, read now unless a round trip has read it:
  // OK when the transaction committed; else the error of its first statement that failed,
  // or of the session lost before the outcome came (not committed, as Exec("COMMIT") says).
  absl::Status CommitOutcome();
  // The first column of the first row as an integer. NotFound when there is no row or it is
  // NULL.
  absl::StatusOr<int64_t> QueryInt(std::string_view sql, const std::vector<Value>& params = {});

  // The server's version as PQserverVersion gives it (150018 for 15.18).
  int server_version() const;
  // Round trips to the server so far: statements run alone and pipelines synced.
  int64_t round_trips() const { return round_trips_; }
  // Counts the sessions: 0 for the first, one more after each reconnect.
  int64_t session() const { return session_; }
  // In a transaction, or lost in one not yet ended by the caller.
  bool in_transaction() const;
  // In a transaction one of whose statements failed: it can only be rolled back.
  bool transaction_failed() const;

 private:
  explicit Connection(pg_conn* conn) : conn_(conn) {}
  // Before a statement: whether to run `sql` (false: a ROLLBACK of a transaction the server
  // already ended with the session). Reconnects when the session was lost. Errors:
  // Unavailable when the server cannot be reached, or `sql` would run outside the lost
  // transaction it belongs to.
  absl::StatusOr<bool> Ready(std::string_view sql);
  // Sets what every session runs with (after connecting and after each reconnect).
  absl::Status Configure();
  // The error of a statement that failed (result may be null), noting a lost session.
  absl::Status Failed(const pg_result* result, bool was_in_transaction);
  // Before sending ahead: in pipeline mode.
  absl::Status EnterPipeline(bool in_transaction);
  // Prepares `stmt` unless this session has (a new statement, or a new session after a
  // reconnect).
  absl::Status Prepare(PreparedStatement& stmt, bool in_transaction);
  // Ends the pipeline: a sync, then every result sent since; the last one's when
  // `keep_last`. Errors: the first command's that failed.
  absl::StatusOr<Result> Sync(bool keep_last, bool was_in_transaction);
  // Counts a command sent in pipeline mode, `sent` being what PQsend* returned; when that
  // failed, reads the results of those sent before it and fails.
  absl::Status Sent(int sent, bool in_transaction);
  // Sends `sql` (no parameters) in pipeline mode: Sent.
  absl::Status SendSql(std::string_view sql, bool in_transaction);
  // Before running `stmt` with `params` parameters: prepares it (Prepare), notes what it
  // does to the plan mode (NotePlanMode) and, in a transaction, sends ahead the
  // plan_cache_mode it asks for unless the transaction has it already. No mode for a
  // statement without parameters, which PostgreSQL plans once whatever the mode: so never
  // before a ROLLBACK (TO SAVEPOINT), which must run in a failed transaction.
  absl::Status BeforeRun(PreparedStatement& stmt, int params, bool in_transaction);
  // Notes what `sql`, about to run, does to the transaction's plan_cache_mode.
  void NotePlanMode(std::string_view sql);

  pg_conn* conn_;  // Owned.
  int64_t session_ = 0;
  int64_t round_trips_ = 0;
  bool lost_in_transaction_ = false;  // The session closed with a transaction open.
  int sent_ = 0;  // Commands sent in pipeline mode whose results are not read yet.
  // The open transaction's plan_cache_mode: the session's, SET LOCAL's, or not known (after
  // a ROLLBACK TO SAVEPOINT, which may undo a SET LOCAL): empty when not known.
  std::optional<store::Plan> plan_mode_ = store::Plan::kForEachRun;
  // Where the results of those queued with `keep` go: (position among the sent_, keep).
  std::vector<std::pair<int, Result*>> keeps_;
  // The position among the sent_ of a COMMIT sent by QueueCommit, until its outcome is read
  // (into commit_outcome_); -1 when there is none.
  int commit_at_ = -1;
  absl::Status commit_outcome_;
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
