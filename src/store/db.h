#pragma once
// A connection to the store on either engine (Db, Stmt, transactions), and SQLite's
// (SqliteDb): opening with our pragmas, cached prepared statements.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;
struct fts5_api;

namespace strata::store {

enum class Durability {
  kNormal,  // WAL + synchronous=NORMAL: an acknowledged write survives a process crash.
  kFull,    // WAL + synchronous=FULL: it also survives power loss.
};

struct DbOptions {
  Durability durability = Durability::kNormal;
  bool read_only = false;
  // How long a write waits for the lock (held by another process, or by another connection
  // of this one) before failing with Unavailable; 0 fails at once.
  int busy_timeout_ms = 5000;
};

class Db;

// `ids` as one parameter (a list of any length): a JSON array, which SQLite reads with
// json_each, or an array literal, which PostgreSQL reads with unnest(CAST(... AS bigint[]))
// (its planner knows how many rows that gives, which it does not know of a JSON array, and
// without a table's statistics joins such a list to it by a scan).
std::string IdListOf(const Db& db, std::span<const int64_t> ids);

// Which SQL a Db speaks. Owners write one statement for both where the SQL is portable and
// keep the two texts side by side where it is not (docs/decisions.md, "The storage seam").
enum class Dialect { kSqlite, kPostgres };

// How PostgreSQL plans a statement; SQLite plans each once, when it compiles it.
enum class Plan {
  // For its parameters' values, at every run: a statement whose best plan depends on them (a
  // range from a watermark, "id > ?1", is a few rows or a third of the table).
  kForEachRun,
  // Once per connection, whatever the values: a statement their values cannot change the
  // plan of (rows by a primary or unique key, an insert of the values given). It then costs
  // no planning, 10-90 us a run on the write path.
  kOnce,
  // Once per connection, as PostgreSQL plans it for values it does not know: a read of a key
  // range in key order with a LIMIT ("id > ?1 ORDER BY id LIMIT ?2"), whose plan for any
  // values is the key's index walked from the bound. kOnce would not do for it: PostgreSQL
  // keeps planning a statement for each run while those plans look cheaper than the plan
  // for any values, which a range's always do (0.13 ms a run for the dedup catch-up). Also
  // rows by a list of keys (unnest of an array joined by primary key): a key lookup each,
  // however long the list, where planning for each run cost a recall 0.1-0.3 ms a read.
  kGeneric,
};
// How many Plans there are (kGeneric the last).
inline constexpr int kPlans = static_cast<int>(Plan::kGeneric) + 1;

// One engine's compiled statement (SQLite's in this module, PostgreSQL's in pg/), owned by
// its Db's cache and borrowed by Stmt, which documents the operations. An engine remembers
// its first failed bind and returns it from the next Step (Internal, naming the index)
// without running the statement.
class EngineStmt {
 public:
  virtual ~EngineStmt() = default;
  virtual void BindInt(int index, int64_t value) = 0;
  virtual void BindText(int index, std::string_view value) = 0;
  virtual void BindDouble(int index, double value) = 0;
  virtual void BindNull(int index) = 0;
  virtual void BindBlob(int index, std::string_view bytes) = 0;
  virtual int ParameterIndex(const char* name) const = 0;
  virtual absl::StatusOr<bool> Step() = 0;
  // Runs an INSERT of one row and returns the row's id (see Stmt::RunInsert).
  virtual absl::StatusOr<int64_t> RunInsert() = 0;
  // Runs a statement without rows, or sends it ahead (see Stmt::RunLater). Here: steps it
  // until done, as Stmt::Run.
  virtual absl::Status RunLater();
  // Sends the statement ahead (see Stmt::Send). Here: nothing; the first Step runs it.
  virtual absl::Status Send() { return absl::OkStatus(); }
  // Back to before the first Step, every parameter NULL, the read snapshot released.
  virtual void Reset() = 0;
  virtual bool IsNull(int col) const = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual std::string_view Text(int col) const = 0;
  virtual std::string_view Blob(int col) const = 0;
};

// A borrowed, cached prepared statement. Binds, steps and reads columns; resets itself
// (releasing any read snapshot) when destroyed. Column and parameter indexes: Bind is
// 1-based like SQLite, Column* are 0-based. Parameters are written `?1` or `:name` on both
// engines. A failed Bind (an index out of range, a value too big) is remembered: the next
// Step, Run or Ints returns it (Internal, naming the index) without running the statement.
// Thread safety: none; used by the thread that owns the Db.
class Stmt {
 public:
  Stmt(Stmt&& other) noexcept : impl_(other.impl_) { other.impl_ = nullptr; }
  Stmt& operator=(Stmt&& other) noexcept {
    if (this != &other) {
      if (impl_ != nullptr) impl_->Reset();
      impl_ = other.impl_;
      other.impl_ = nullptr;
    }
    return *this;
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() {
    if (impl_ != nullptr) impl_->Reset();
  }

  Stmt& Bind(int index, int64_t value) {
    impl_->BindInt(index, value);
    return *this;
  }
  Stmt& Bind(int index, std::string_view value) {
    impl_->BindText(index, value);
    return *this;
  }
  Stmt& Bind(int index, const std::string& value) { return Bind(index, std::string_view(value)); }
  Stmt& Bind(int index, double value) {
    impl_->BindDouble(index, value);
    return *this;
  }
  // An empty optional binds NULL.
  Stmt& Bind(int index, std::optional<int64_t> value) {
    return value ? Bind(index, *value) : BindNull(index);
  }
  Stmt& Bind(int index, const std::optional<std::string>& value) {
    return value ? Bind(index, std::string_view(*value)) : BindNull(index);
  }
  Stmt& Bind(int index, std::optional<double> value) {
    return value ? Bind(index, *value) : BindNull(index);
  }
  Stmt& BindNull(int index) {
    impl_->BindNull(index);
    return *this;
  }
  Stmt& BindBlob(int index, std::string_view bytes) {
    impl_->BindBlob(index, bytes);
    return *this;
  }
  // 1-based index of the named parameter (":name"), or 0 when the statement has none.
  int ParameterIndex(const char* name) const { return impl_->ParameterIndex(name); }

  // Advances: true when a row is available, false when done.
  absl::StatusOr<bool> Step() { return impl_->Step(); }
  // Steps until done (for statements that return no rows).
  absl::Status Run();
  // Run, for a statement without rows whose outcome the caller does not wait for: on
  // PostgreSQL, in a transaction, it is sent ahead and its outcome read with the next
  // statement's, in one round trip (a failure fails that statement, or the COMMIT, and the
  // transaction rolls back); Db::Changes does not count it. At once on SQLite, and outside a
  // transaction.
  absl::Status RunLater() { return impl_->RunLater(); }
  // Sends a statement with rows ahead, for Step to read later: on PostgreSQL, in a
  // transaction, it runs in the round trip of the next statement that waits for its answer
  // (or at the first Step, when none does), before the statements prepared after it; on
  // SQLite, and outside a transaction, the first Step runs it. So what it reads must not
  // change between Send and Step. Bind first.
  absl::Status Send() { return impl_->Send(); }
  // Runs an INSERT of one row and returns its id: on SQLite the rowid (last_insert_rowid);
  // on PostgreSQL the statement ends in `RETURNING id` and this reads it. Not RETURNING on
  // SQLite: it opens a statement journal, whose savepoint flushes FTS5's pending terms into a
  // segment per row written, and recall then reads many small segments.
  absl::StatusOr<int64_t> RunInsert() { return impl_->RunInsert(); }
  // Steps until done, collecting column `col` of every row as an integer.
  absl::StatusOr<std::vector<int64_t>> Ints(int col = 0);

  bool IsNull(int col) const { return impl_->IsNull(col); }
  // A boolean (PostgreSQL's) reads as 1 or 0.
  int64_t Int(int col) const { return impl_->Int(col); }
  double Double(int col) const { return impl_->Double(col); }
  std::string_view Text(int col) const { return impl_->Text(col); }
  std::string_view Blob(int col) const { return impl_->Blob(col); }
  std::optional<int64_t> OptInt(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Int(col);
  }

 private:
  friend class Db;
  explicit Stmt(EngineStmt* impl) : impl_(impl) {}
  EngineStmt* impl_;  // Not owned: the Db's cache owns it.
};

class SqliteDb;

// What an owner keeps in memory during a write transaction and writes at its end (see
// Db::OnCommit).
class CommitHook {
 public:
  virtual ~CommitHook() = default;
  // Runs just before COMMIT: writes what was kept (RunLater rides with COMMIT). An error
  // fails the commit, and the transaction rolls back.
  virtual absl::Status BeforeCommit() = 0;
  // The transaction ended without committing (rolled back, or its COMMIT failed): what was
  // kept is forgotten.
  virtual void Dropped() = 0;
};

// One connection to a store, on either engine: the SQLite file (SqliteDb, below) or a
// PostgreSQL database (pg/db.h). Owners of tables take a Db and run the same code on both.
// Thread safety: none; one thread uses a Db at a time.
class Db {
 public:
  // Opens (creating if absent, unless read_only) the SQLite database at `path` with WAL
  // journaling. Errors: Unavailable (cannot open), DataLoss (not a database).
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path,
                                                        const DbOptions& options);
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  virtual ~Db() = default;

  virtual Dialect dialect() const = 0;
  // Has `hook` called when the write transaction open now ends (store::Transaction): once,
  // however often it is registered. REQUIRES: in a write transaction; `hook` outlives it.
  void OnCommit(CommitHook* hook);
  // Undoes OnCommit: `hook` is not called.
  void ForgetCommitHook(CommitHook* hook);
  // Executes one or more statements without parameters or results.
  virtual absl::Status Exec(std::string_view sql) = 0;
  // Returns the cached statement for `sql` planned as `plan` says, compiling it on first use.
  absl::StatusOr<Stmt> Prepare(std::string_view sql, Plan plan = Plan::kForEachRun);
  // Rows the last INSERT, UPDATE or DELETE changed.
  virtual int64_t Changes() const = 0;
  // Where the store is: the SQLite file's path, or the PostgreSQL URI.
  const std::string& path() const { return path_; }

 protected:
  explicit Db(std::string path) : path_(std::move(path)) {}
  virtual absl::StatusOr<std::unique_ptr<EngineStmt>> Compile(std::string_view sql,
                                                              Plan plan) = 0;
  // Whether a transaction is open on the connection.
  virtual bool InTransaction() const = 0;
  // Opens a write transaction, serialized with every other writer (of this process and of
  // others) when `take_turns`; the lock returned, when it holds one, is held until the
  // transaction ends. Without `take_turns` (Transaction::BeginBeside), writers on PostgreSQL
  // may run beside it; SQLite has one writer at a time anyway.
  virtual absl::StatusOr<std::unique_lock<std::timed_mutex>> BeginWrite(bool take_turns) = 0;
  // Opens a read transaction: one snapshot for the statements until COMMIT.
  virtual absl::Status BeginRead() = 0;
  // Ends the open transaction, keeping its writes, and then runs `then` unless it is empty
  // (Transaction::Commit). Errors: as COMMIT; Aborted on PostgreSQL when a statement of it
  // failed (PostgreSQL would end it as a rollback).
  virtual absl::Status Commit(const std::function<void()>& then);
  // Finalizes the cached statements (before the connection they belong to closes).
  void ClearCache() {
    for (auto& cache : cache_) cache.clear();
  }
  // Runs a statement without parameters or rows (BEGIN, COMMIT, ...) from the cache.
  absl::Status RunCached(std::string_view sql);

 private:
  friend class Transaction;
  friend class ReadSnapshot;

  std::string path_;
  // By Plan: a statement has its own compilation for each.
  absl::flat_hash_map<std::string, std::unique_ptr<EngineStmt>> cache_[kPlans];
  std::vector<CommitHook*> commit_hooks_;  // Of the write transaction open now.
};

// One SQLite connection, with what only SQLite has: its WAL, backups, integrity check and
// FTS5 tokenizers.
class SqliteDb final : public Db {
 public:
  ~SqliteDb() override;

  Dialect dialect() const override { return Dialect::kSqlite; }
  absl::Status Exec(std::string_view sql) override;
  int64_t Changes() const override;
  // The rowid of the last row inserted (where an owner needs the id, INSERT ... RETURNING id
  // says it on both engines).
  int64_t LastInsertRowId() const;

  // PRAGMA integrity_check: the problems it reports (at most `max_problems`), none when the
  // file is sound. Errors: as Prepare and Step (a file too damaged to read).
  absl::StatusOr<std::vector<std::string>> IntegrityProblems(int max_problems);

  // Whether FTS5 on this connection knows the tokenizer `name` (its built-ins, or one
  // registered, such as text/fts5_extensions.h's "strata").
  bool HasFts5Tokenizer(const std::string& name) const;
  // Shared by every connection this process opens to the same file: Transaction holds it, so
  // two of our own connections queue for the write lock here instead of in SQLite's busy
  // handler, which sleeps in steps of milliseconds.
  std::timed_mutex& write_mutex() const { return *write_mutex_; }

  // Calls `hook(wal_pages)` after each commit on this connection, with the WAL's size in
  // pages. The hook runs on the committing thread and must not use this connection.
  void SetWalHook(std::function<void(int)> hook);

  // Copies the whole WAL into the database and has the next writer start it afresh, waiting
  // (up to the busy timeout) for readers of older frames. Errors: Unavailable when busy.
  absl::Status CheckpointRestart();

  // Writes a copy of the whole database, as of the moment the copy starts (other connections
  // keep writing meanwhile), to a new self-contained file at `path` (rollback journal, no
  // -wal). The copy is made beside `path` and renamed into place. Errors: AlreadyExists when
  // `path` exists and !overwrite; Unavailable when it cannot be written.
  absl::Status BackupTo(const std::string& path, bool overwrite);

  // Maps the connection's last error (after result code `rc`) to a Status: SQLITE_BUSY (a
  // lock held past the busy timeout) is Unavailable with a message saying so.
  absl::Status ErrorStatus(int rc, std::string_view context) const;

 private:
  friend class Db;
  SqliteDb(sqlite3* handle, std::string path, std::timed_mutex* write_mutex, int busy_timeout_ms)
      : Db(std::move(path)),
        handle_(handle),
        write_mutex_(write_mutex),
        busy_timeout_ms_(busy_timeout_ms) {}

  absl::StatusOr<std::unique_ptr<EngineStmt>> Compile(std::string_view sql, Plan plan) override;
  bool InTransaction() const override;
  absl::StatusOr<std::unique_lock<std::timed_mutex>> BeginWrite(bool take_turns) override;
  absl::Status BeginRead() override;

  // Unavailable: the lock was held past the busy timeout; `detail` says by what.
  absl::Status BusyError(std::string_view detail) const;

  sqlite3* handle_;                // Owned.
  std::timed_mutex* write_mutex_;  // Process-wide, one per file; never freed.
  int busy_timeout_ms_;
  std::function<void(int)> wal_hook_;
};

// FTS5's extension API on the connection `handle` (for registering tokenizers and
// functions), or null when this SQLite has no FTS5.
fts5_api* Fts5ApiOf(sqlite3* handle);

// Replaces the database at `target_path` (created when absent) with a copy of the one at
// `source_path`, holding the target's exclusive lock throughout, so no other connection
// sees a half-copied file; a -wal left by a crashed process is recovered, then overwritten.
// `while_locked`, when given, runs after the copy and before the lock is released (to remove
// files derived from the old database). Errors: FailedPrecondition when another connection
// (a running server) has the target open; DataLoss when the source fails PRAGMA quick_check
// or is not a database.
absl::Status RestoreDatabase(const std::string& source_path, const std::string& target_path,
                             const std::function<void()>& while_locked = nullptr);

// A write transaction that rolls back unless committed: BEGIN IMMEDIATE on SQLite; on
// PostgreSQL, BEGIN and the change lock (pg/schema.h kChangeLock), so writers of every node
// take turns as SQLite's do.
// Thread safety: as its Db.
class Transaction {
 public:
  // Takes the write lock, waiting at most the busy timeout in all (for this process's other
  // connections, then for other processes). Errors: Unavailable when the lock stayed held,
  // FailedPrecondition when `db` is in a transaction already.
  static absl::StatusOr<Transaction> Begin(Db& db);
  // A write transaction that does not take turns with Begin's: on PostgreSQL, BEGIN without
  // the change lock, for rows outside the change sequence that follow a committed write
  // (its keyword rows: docs/decisions.md, "The keyword upkeep behind the write"); its rows'
  // own locks order it with other writers. On SQLite, as Begin.
  static absl::StatusOr<Transaction> BeginBeside(Db& db);
  Transaction(Transaction&& other) noexcept : db_(other.db_), lock_(std::move(other.lock_)) {
    other.db_ = nullptr;
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  absl::Status Commit() { return Commit(nullptr); }
  // Commits, and runs `then` (a transaction of its own on the same Db, BeginBeside) once the
  // COMMIT is sent and not refused at once: on PostgreSQL before its outcome is read, so
  // that `then`'s statements ride in COMMIT's round trip (its last round trip reads both
  // outcomes). `then` may so run when the COMMIT then fails: what it writes must be harmless
  // without this transaction's writes.
  absl::Status Commit(const std::function<void()>& then);
  // Undoes the writes since `Savepoint()`; used so one bad item fails only itself.
  absl::Status Savepoint();
  absl::Status RollbackToSavepoint();
  absl::Status ReleaseSavepoint();

 private:
  static absl::StatusOr<Transaction> Open(Db& db, bool take_turns);
  Transaction(Db* db, std::unique_lock<std::timed_mutex> lock) : db_(db), lock_(std::move(lock)) {}
  Db* db_;                                   // Not owned; null once committed or moved from.
  std::unique_lock<std::timed_mutex> lock_;  // db_->write_mutex(), until commit or rollback.
};

// A read transaction: the statements run while it lives see one snapshot of the database,
// and take SQLite's read lock once instead of once each. Inside a transaction already open
// on the connection (a write's own reads), it does nothing: that one's snapshot holds.
// Thread safety: as its Db.
class ReadSnapshot {
 public:
  // Errors: as BEGIN (none expected on SQLite, whose read lock is taken by the first read).
  static absl::StatusOr<ReadSnapshot> Begin(Db& db);
  ReadSnapshot(ReadSnapshot&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;
  ~ReadSnapshot();

 private:
  explicit ReadSnapshot(Db* db) : db_(db) {}
  Db* db_;  // Not owned; null when there is nothing to end.
};

}  // namespace strata::store
