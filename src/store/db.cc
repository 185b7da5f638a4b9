#include "store/db.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include <sqlite3.h>
#include <unistd.h>

#include "absl/algorithm/container.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "store/wal_vfs.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::store {

namespace {

// A statement compiled by SQLite.
class SqliteStmt final : public EngineStmt {
 public:
  SqliteStmt(sqlite3_stmt* stmt, const SqliteDb* db) : stmt_(stmt), db_(db) {}
  ~SqliteStmt() override { sqlite3_finalize(stmt_); }

  void BindInt(int index, int64_t value) override {
    CheckBind(sqlite3_bind_int64(stmt_, index, value), index);
  }
  void BindText(int index, std::string_view value) override {
    CheckBind(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                SQLITE_TRANSIENT),
              index);
  }
  void BindDouble(int index, double value) override {
    CheckBind(sqlite3_bind_double(stmt_, index, value), index);
  }
  void BindNull(int index) override { CheckBind(sqlite3_bind_null(stmt_, index), index); }
  void BindBlob(int index, std::string_view bytes) override {
    CheckBind(sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()),
                                SQLITE_TRANSIENT),
              index);
  }
  int ParameterIndex(const char* name) const override {
    return sqlite3_bind_parameter_index(stmt_, name);
  }

  absl::StatusOr<bool> Step() override {
    if (bind_rc_ != SQLITE_OK) {
      // Running with a parameter left unbound (NULL) or stale would answer wrongly, silently.
      return absl::InternalError(absl::StrCat(
          "sqlite: binding parameter ", bind_index_, " of ", sqlite3_bind_parameter_count(stmt_),
          " failed: ", sqlite3_errstr(bind_rc_), " [", bind_rc_,
          "] in: ", ToAbsl(std::string_view(sqlite3_sql(stmt_)).substr(0, 120))));
    }
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) {
      // Ready to run again: binding a statement that is not reset fails (SQLITE_MISUSE), and
      // the next step would run it with the old values.
      sqlite3_reset(stmt_);
      return false;
    }
    return db_->ErrorStatus(rc, sqlite3_sql(stmt_));
  }

  absl::StatusOr<int64_t> RunInsert() override {
    while (true) {
      ASSIGN_OR_RETURN(const bool row, Step());
      if (!row) break;
    }
    return sqlite3_last_insert_rowid(sqlite3_db_handle(stmt_));
  }

  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    bind_rc_ = SQLITE_OK;
  }

  bool IsNull(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t Int(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const override { return sqlite3_column_double(stmt_, col); }
  std::string_view Text(int col) const override {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (p == nullptr) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
  }
  std::string_view Blob(int col) const override {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    if (p == nullptr) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
  }

 private:
  // Remembers `rc` from binding parameter `index` when it is the first failure.
  void CheckBind(int rc, int index) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) {
      bind_rc_ = rc;
      bind_index_ = index;
    }
  }

  sqlite3_stmt* stmt_;       // Owned.
  const SqliteDb* db_;       // Not owned; outlives this.
  int bind_rc_ = SQLITE_OK;  // The first failed bind's result code.
  int bind_index_ = 0;       // The parameter whose bind failed first.
};

}  // namespace

std::string IdListOf(const Db& db, std::span<const int64_t> ids) {
  const bool json = db.dialect() == Dialect::kSqlite;
  std::string out = json ? "[" : "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    absl::StrAppend(&out, ids[i]);
  }
  out += json ? ']' : '}';
  return out;
}

absl::StatusOr<std::vector<int64_t>> Stmt::Ints(int col) {
  std::vector<int64_t> out;
  while (true) {
    ASSIGN_OR_RETURN(const bool row, Step());
    if (!row) return out;
    out.push_back(Int(col));
  }
}

absl::Status EngineStmt::RunLater() {
  while (true) {
    ASSIGN_OR_RETURN(const bool row, Step());
    if (!row) return absl::OkStatus();
  }
}

absl::Status Stmt::Run() { return impl_->EngineStmt::RunLater(); }

absl::StatusOr<Stmt> Db::Prepare(std::string_view sql, Plan plan) {
  auto& cache = cache_[static_cast<int>(plan)];
  auto it = cache.find(ToAbsl(sql));
  if (it == cache.end()) {
    ASSIGN_OR_RETURN(std::unique_ptr<EngineStmt> stmt, Compile(sql, plan));
    it = cache.emplace(std::string(sql), std::move(stmt)).first;
  }
  return Stmt(it->second.get());
}

absl::Status Db::RunCached(std::string_view sql) {
  ASSIGN_OR_RETURN(Stmt s, Prepare(sql));
  return s.Run();
}

namespace {

// One mutex per database file in this process (see Db::write_mutex).
std::timed_mutex* WriteMutexFor(const std::string& path) {
  // Never destroyed, nor are its mutexes: a connection may close while the process exits.
  struct Registry {
    absl::Mutex mu;
    absl::flat_hash_map<std::string, std::unique_ptr<std::timed_mutex>> mutexes ABSL_GUARDED_BY(mu);
  };
  static Registry* const registry = new Registry();
  std::error_code ec;
  std::string key = std::filesystem::weakly_canonical(path, ec).string();
  if (ec) key = path;
  absl::MutexLock lock(&registry->mu);
  std::unique_ptr<std::timed_mutex>& m = registry->mutexes[key];
  if (m == nullptr) m = std::make_unique<std::timed_mutex>();
  return m.get();
}

// Switches the file to WAL (a no-op when it already is). Leaving rollback mode needs the
// file to itself, and SQLite fails that at once, without its busy handler, while another
// process has the file open (two hosts starting strata on a new database at the same
// moment): so retry here, for the same bound a write waits.
absl::Status EnterWal(SqliteDb& db, int busy_timeout_ms) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    absl::StatusOr<Stmt> stmt = db.Prepare("PRAGMA journal_mode=WAL");
    absl::StatusOr<bool> row = stmt.ok() ? stmt->Step() : stmt.status();
    if (row.ok()) {
      // An in-memory database (":memory:": the fuzzers') has no file to journal.
      if (*row && (stmt->Text(0) == "wal" || stmt->Text(0) == "memory")) return absl::OkStatus();
      return absl::UnavailableError(absl::StrCat(
          "cannot put ", db.path(), " in WAL mode (it stayed in ",
          *row ? std::string(stmt->Text(0)) : std::string("an unknown mode"), " mode)"));
    }
    if (!absl::IsUnavailable(row.status()) || std::chrono::steady_clock::now() >= deadline) {
      return row.status();
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteDb>> Db::Open(const std::string& path,
                                                   const DbOptions& options) {
  sqlite3* handle = nullptr;
  const int flags =
      (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &handle, flags, CoalescingWalVfs());
  if (rc != SQLITE_OK) {
    std::string message = handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
    sqlite3_close_v2(handle);
    return absl::UnavailableError(absl::StrCat("cannot open database ", path, ": ", message));
  }
  sqlite3_extended_result_codes(handle, 1);
  sqlite3_busy_timeout(handle, options.busy_timeout_ms);
  auto db = std::unique_ptr<SqliteDb>(
      new SqliteDb(handle, path, WriteMutexFor(path), options.busy_timeout_ms));
  // Reads the header, so a file that is not a database fails here.
  if (!options.read_only) RETURN_IF_ERROR(EnterWal(*db, options.busy_timeout_ms));
  std::string pragmas = absl::StrCat(
      "PRAGMA synchronous=", options.durability == Durability::kFull ? "FULL" : "NORMAL", ";",
      "PRAGMA foreign_keys=ON;"
      "PRAGMA temp_store=MEMORY;"
      "PRAGMA cache_size=-65536;"
      "PRAGMA journal_size_limit=67108864;");
  if (absl::Status s = db->Exec(pragmas); !s.ok()) return s;
  return db;
}

SqliteDb::~SqliteDb() {
  ClearCache();
  sqlite3_close_v2(handle_);
}

absl::StatusOr<std::vector<std::string>> SqliteDb::IntegrityProblems(int max_problems) {
  ASSIGN_OR_RETURN(Stmt stmt, Prepare(absl::StrCat("PRAGMA integrity_check(", max_problems, ")")));
  std::vector<std::string> problems;
  for (;;) {
    ASSIGN_OR_RETURN(const bool row, stmt.Step());
    if (!row) break;
    if (stmt.Text(0) != "ok") problems.emplace_back(stmt.Text(0));
  }
  return problems;
}

absl::Status SqliteDb::Exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(handle_, text.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return absl::OkStatus();
  sqlite3_free(error);
  return ErrorStatus(rc, sql);
}

absl::StatusOr<std::unique_ptr<EngineStmt>> SqliteDb::Compile(std::string_view sql, Plan) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(handle_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return ErrorStatus(rc, sql);
  return std::make_unique<SqliteStmt>(stmt, this);
}

void SqliteDb::SetWalHook(std::function<void(int)> hook) {
  wal_hook_ = std::move(hook);
  sqlite3_wal_hook(
      handle_,
      [](void* self, sqlite3*, const char*, int pages) {
        static_cast<SqliteDb*>(self)->wal_hook_(pages);
        return SQLITE_OK;
      },
      this);
}

absl::Status SqliteDb::CheckpointRestart() {
  const int rc =
      sqlite3_wal_checkpoint_v2(handle_, nullptr, SQLITE_CHECKPOINT_RESTART, nullptr, nullptr);
  if (rc == SQLITE_OK) return absl::OkStatus();
  return ErrorStatus(rc, "wal_checkpoint(RESTART)");
}

namespace {

// A connection opened outside Db (the copies of BackupTo and RestoreDatabase), closed when
// this ends.
struct RawHandle {
  sqlite3* handle = nullptr;
  ~RawHandle() { sqlite3_close_v2(handle); }
  std::string Error() const { return handle ? sqlite3_errmsg(handle) : "out of memory"; }
};

// Copies every page of `source` into `dest` in one step: one read transaction on `source`,
// so the copy is a consistent snapshot however long it takes.
int CopyPages(sqlite3* source, sqlite3* dest) {
  sqlite3_backup* backup = sqlite3_backup_init(dest, "main", source, "main");
  if (backup == nullptr) return sqlite3_errcode(dest);
  const int step = sqlite3_backup_step(backup, -1);
  const int finish = sqlite3_backup_finish(backup);
  return step == SQLITE_DONE ? finish : step;
}

}  // namespace

absl::Status SqliteDb::BackupTo(const std::string& path, bool overwrite) {
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(path, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat(path, " exists; give another path, or --force to replace it"));
  }
  const std::string partial = absl::StrCat(path, ".partial-", getpid());
  std::filesystem::remove(partial, ec);
  {
    RawHandle dest;
    int rc = sqlite3_open_v2(partial.c_str(), &dest.handle,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc == SQLITE_OK) rc = CopyPages(handle_, dest.handle);
    // The copy takes the source's WAL mode; a backup is one file, without -wal or -shm.
    if (rc == SQLITE_OK) {
      rc = sqlite3_exec(dest.handle, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
    }
    if (rc != SQLITE_OK) {
      const std::string message = dest.Error();
      std::filesystem::remove(partial, ec);
      if ((rc & 0xff) == SQLITE_BUSY) return BusyError("copying the database");
      return absl::UnavailableError(absl::StrCat("cannot write the backup ", path, ": ", message));
    }
  }
  // A WAL beside an older file at `path` would be replayed into the new one.
  std::filesystem::remove(path + "-wal", ec);
  std::filesystem::remove(path + "-shm", ec);
  std::filesystem::rename(partial, path, ec);
  if (ec) {
    std::filesystem::remove(partial, ec);
    return absl::UnavailableError(absl::StrCat("cannot move the backup into ", path));
  }
  return absl::OkStatus();
}

absl::Status RestoreDatabase(const std::string& source_path, const std::string& target_path,
                             const std::function<void()>& while_locked) {
  RawHandle source;
  if (sqlite3_open_v2(source_path.c_str(), &source.handle, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    return absl::UnavailableError(
        absl::StrCat("cannot open the backup ", source_path, ": ", source.Error()));
  }
  {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(source.handle, "PRAGMA quick_check", -1, &stmt, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    const bool sound =
        rc == SQLITE_ROW &&
        std::string_view(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))) == "ok";
    sqlite3_finalize(stmt);
    if (!sound) {
      return absl::DataLossError(absl::StrCat(source_path, " is not a sound database (",
                                              source.Error(), "); nothing was restored"));
    }
  }
  RawHandle target;
  if (sqlite3_open_v2(target_path.c_str(), &target.handle,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    return absl::UnavailableError(absl::StrCat("cannot open ", target_path, ": ", target.Error()));
  }
  // Exclusive locking mode keeps the lock after COMMIT, until the connection closes. Every
  // open WAL connection holds a shared lock on the file, so taking it fails while a server
  // has the file open, and a server starting meanwhile waits.
  const int rc =
      sqlite3_exec(target.handle, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;",
                   nullptr, nullptr, nullptr);
  if ((rc & 0xff) == SQLITE_BUSY) {
    return absl::FailedPreconditionError(
        absl::StrCat(target_path,
                     " is open in another process (a running strata server?); stop it and "
                     "retry; nothing was restored"));
  }
  if (rc != SQLITE_OK) {
    return absl::UnavailableError(
        absl::StrCat("cannot lock ", target_path, ": ", target.Error(), "; nothing was restored"));
  }
  if (const int copy = CopyPages(source.handle, target.handle); copy != SQLITE_OK) {
    return absl::UnavailableError(
        absl::StrCat("cannot copy ", source_path, " over ", target_path, ": ", target.Error()));
  }
  if (while_locked) while_locked();
  return absl::OkStatus();
}

int64_t SqliteDb::LastInsertRowId() const { return sqlite3_last_insert_rowid(handle_); }
int64_t SqliteDb::Changes() const { return sqlite3_changes64(handle_); }

bool SqliteDb::HasFts5Tokenizer(const std::string& name) const {
  fts5_api* fts5 = Fts5ApiOf(handle_);
  void* context = nullptr;
  fts5_tokenizer tokenizer;
  return fts5 != nullptr &&
         fts5->xFindTokenizer(fts5, name.c_str(), &context, &tokenizer) == SQLITE_OK;
}

fts5_api* Fts5ApiOf(sqlite3* handle) {
  // FTS5 hands its API out only through SQL: a pointer bound to its fts5() function.
  fts5_api* fts5 = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(handle, "SELECT fts5(?1)", -1, &stmt, nullptr) != SQLITE_OK) {
    return nullptr;
  }
  sqlite3_bind_pointer(stmt, 1, &fts5, "fts5_api_ptr", nullptr);
  sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  return fts5;
}

absl::Status SqliteDb::ErrorStatus(int rc, std::string_view context) const {
  std::string message = absl::StrCat("sqlite: ", sqlite3_errmsg(handle_), " [", rc,
                                     "] in: ", ToAbsl(context.substr(0, 120)));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
      return BusyError(message);
    case SQLITE_LOCKED:
      // Without shared cache this is a conflict inside this connection (a table in use by
      // one of its own statements), never another process: our bug.
      return absl::InternalError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_FULL:
    case SQLITE_IOERR:
      return absl::UnavailableError(message);
    case SQLITE_CONSTRAINT:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status SqliteDb::BusyError(std::string_view detail) const {
  return absl::UnavailableError(
      absl::StrCat("the database is busy: another writer has held its lock for more than ",
                   busy_timeout_ms_, " ms; nothing was written, try again (", ToAbsl(detail), ")"));
}

bool SqliteDb::InTransaction() const { return sqlite3_get_autocommit(handle_) == 0; }

absl::StatusOr<std::unique_lock<std::timed_mutex>> SqliteDb::BeginWrite(bool /*take_turns*/) {
  // One deadline for both waits. The connection of this process that holds the mutex may
  // itself be waiting for another process's lock (the embedding worker storing vectors):
  // waiting a full timeout for it and then another for SQLite would double the bound.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms_);
  std::unique_lock lock(write_mutex(), std::defer_lock);
  if (!lock.try_lock_until(deadline)) {
    return BusyError("another connection of this process is writing or waiting to");
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  // What is left of the wait, but at least 1 ms unless no wait was asked for (0 turns the
  // busy handler off).
  const int64_t at_least = busy_timeout_ms_ > 0 ? 1 : 0;
  sqlite3_busy_timeout(handle_, static_cast<int>(std::max(at_least, int64_t{left.count()})));
  absl::Status s = RunCached("BEGIN IMMEDIATE");
  sqlite3_busy_timeout(handle_, busy_timeout_ms_);
  if (!s.ok()) return s;
  return lock;
}

absl::Status SqliteDb::BeginRead() { return RunCached("BEGIN"); }

absl::StatusOr<Transaction> Transaction::Begin(Db& db) { return Open(db, true); }

absl::StatusOr<Transaction> Transaction::BeginBeside(Db& db) { return Open(db, false); }

absl::StatusOr<Transaction> Transaction::Open(Db& db, bool take_turns) {
  // A second Begin on one connection would wait for the mutex its own thread holds.
  if (db.InTransaction()) {
    return absl::FailedPreconditionError(
        "a transaction is already open on this connection; transactions do not nest");
  }
  ASSIGN_OR_RETURN(std::unique_lock<std::timed_mutex> lock, db.BeginWrite(take_turns));
  return Transaction(&db, std::move(lock));
}

Transaction::~Transaction() {
  if (db_ == nullptr) return;
  for (CommitHook* hook : std::exchange(db_->commit_hooks_, {})) hook->Dropped();
  db_->RunCached("ROLLBACK").IgnoreError();
}

absl::Status Transaction::Commit(const std::function<void()>& then) {
  Db* db = db_;
  for (CommitHook* hook : db->commit_hooks_) RETURN_IF_ERROR(hook->BeforeCommit());
  absl::Status s = db->Commit(then);
  if (s.ok()) {
    db->commit_hooks_.clear();
    db_ = nullptr;
    lock_ = {};
  }
  return s;
}

absl::Status Db::Commit(const std::function<void()>& then) {
  RETURN_IF_ERROR(RunCached("COMMIT"));
  if (then) then();
  return absl::OkStatus();
}

void Db::OnCommit(CommitHook* hook) {
  if (!absl::c_linear_search(commit_hooks_, hook)) commit_hooks_.push_back(hook);
}

void Db::ForgetCommitHook(CommitHook* hook) { std::erase(commit_hooks_, hook); }

absl::Status Transaction::Savepoint() { return db_->Exec("SAVEPOINT item"); }
absl::Status Transaction::RollbackToSavepoint() {
  absl::Status s = db_->Exec("ROLLBACK TO item");
  if (!s.ok()) return s;
  return db_->Exec("RELEASE item");
}
absl::Status Transaction::ReleaseSavepoint() { return db_->Exec("RELEASE item"); }

absl::StatusOr<ReadSnapshot> ReadSnapshot::Begin(Db& db) {
  if (db.InTransaction()) return ReadSnapshot(nullptr);
  RETURN_IF_ERROR(db.BeginRead());
  return ReadSnapshot(&db);
}

ReadSnapshot::~ReadSnapshot() {
  // A read transaction has nothing to lose: COMMIT only ends it (ROLLBACK would too).
  if (db_ != nullptr) db_->RunCached("COMMIT").IgnoreError();
}

}  // namespace strata::store
