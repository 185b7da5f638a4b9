#include "store/db.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <sqlite3.h>

#include "testing/at_once.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::store {
namespace {

using ::strata::testing::AtOnce;
using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::strata::testing::TempDir;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A fresh database in its own temporary directory with a table t(id, v).
class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, Db::Open(dir_.File("test.db"), DbOptions{}));
    ASSERT_OK(db_->Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)"));
  }

  // The v column of every row of t, by id.
  std::vector<std::string> Values() {
    std::vector<std::string> out;
    auto stmt = db_->Prepare("SELECT v FROM t ORDER BY id");
    EXPECT_OK(stmt);
    if (!stmt.ok()) return out;
    while (true) {
      auto row = stmt->Step();
      EXPECT_OK(row);
      if (!row.ok() || !*row) break;
      out.emplace_back(stmt->Text(0));
    }
    return out;
  }

  void Insert(std::string_view v) {
    ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("INSERT INTO t (v) VALUES (?1)"));
    stmt.Bind(1, v);
    ASSERT_OK(stmt.Run());
  }

  TempDir dir_;
  std::unique_ptr<SqliteDb> db_;
};

// A damaged file's problems are reported by tests/e2e/test_doctor.py, which writes over a
// table's page.
TEST_F(DbTest, SoundFileHasNoIntegrityProblems) {
  Insert("a");
  Insert("b");
  ASSERT_OK_AND_ASSIGN(const std::vector<std::string> problems, db_->IntegrityProblems(10));
  EXPECT_TRUE(problems.empty());
}

TEST(DbOpen, CreatesTheFile) {
  TempDir dir;
  const std::string path = dir.File("new.db");
  ASSERT_FALSE(std::filesystem::exists(path));
  ASSERT_OK_AND_ASSIGN(auto db, Db::Open(path, DbOptions{}));
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(db->path(), path);
}

TEST(DbOpen, UsesWalJournalMode) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto db, Db::Open(dir.File("wal.db"), DbOptions{}));
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db->Prepare("PRAGMA journal_mode"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), "wal");
}

TEST(DbOpen, InMemoryDatabaseOpens) {
  ASSERT_OK_AND_ASSIGN(auto db, Db::Open(":memory:", DbOptions{}));
  ASSERT_OK(db->Exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x')"));
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db->Prepare("PRAGMA journal_mode"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), "memory");
}

TEST(DbOpen, FullDurabilitySetsSynchronousFull) {
  TempDir dir;
  DbOptions options;
  options.durability = Durability::kFull;
  ASSERT_OK_AND_ASSIGN(auto db, Db::Open(dir.File("full.db"), options));
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db->Prepare("PRAGMA synchronous"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Int(0), 2);  // FULL
}

TEST(DbOpen, EnablesForeignKeys) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto db, Db::Open(dir.File("fk.db"), DbOptions{}));
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db->Prepare("PRAGMA foreign_keys"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Int(0), 1);
}

TEST(DbOpen, KeepsDataAcrossReopen) {
  TempDir dir;
  const std::string path = dir.File("persist.db");
  {
    ASSERT_OK_AND_ASSIGN(auto db, Db::Open(path, DbOptions{}));
    ASSERT_OK(db->Exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept')"));
  }
  ASSERT_OK_AND_ASSIGN(auto db, Db::Open(path, DbOptions{}));
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db->Prepare("SELECT v FROM t"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), "kept");
}

TEST(DbOpen, FileThatIsNotADatabaseFailsWithDataLoss) {
  TempDir dir;
  const std::string path = dir.File("garbage.db");
  {
    std::ofstream out(path, std::ios::binary);
    std::string garbage;
    for (int i = 0; i < 8192; ++i) garbage.push_back(static_cast<char>((i * 131 + 7) % 251));
    out << "this is not a database, just some bytes\n" << garbage;
  }
  EXPECT_THAT(Db::Open(path, DbOptions{}), StatusIs(absl::StatusCode::kDataLoss, _));
}

TEST(DbOpen, TextFileIsNotADatabaseEvenReadOnly) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 200; ++i) out << "line " << i << " of a plain text file\n";
  }
  DbOptions options;
  options.read_only = true;
  auto db = Db::Open(path, options);
  if (db.ok()) {
    // Read-only open skips the journal pragma; the first real read must still refuse.
    auto stmt = (*db)->Prepare("SELECT count(*) FROM sqlite_master");
    if (stmt.ok()) {
      EXPECT_THAT(stmt->Step(), StatusIs(absl::StatusCode::kDataLoss, _));
    } else {
      EXPECT_THAT(stmt, StatusIs(absl::StatusCode::kDataLoss, _));
    }
  } else {
    EXPECT_THAT(db, StatusIs(absl::StatusCode::kDataLoss, _));
  }
}

TEST(DbOpen, MissingFileReadOnlyFailsWithUnavailable) {
  TempDir dir;
  DbOptions options;
  options.read_only = true;
  EXPECT_THAT(Db::Open(dir.File("absent.db"), options),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("absent.db")));
}

TEST(DbOpen, MissingDirectoryFailsWithUnavailable) {
  TempDir dir;
  EXPECT_THAT(Db::Open(dir.File("no/such/dir/x.db"), DbOptions{}),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("x.db")));
}

// Statements inside a ReadSnapshot see the database as it was at its first read, whatever
// another connection commits meanwhile; after it, they see the commit.
TEST_F(DbTest, AStatementRunToTheEndCanBeBoundAndRunAgain) {
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("INSERT INTO t (v) VALUES (?1)"));
  stmt.Bind(1, std::string_view("a"));
  ASSERT_OK(stmt.Run());
  stmt.Bind(1, std::string_view("b"));
  ASSERT_OK(stmt.Run());
  EXPECT_THAT(Values(), ElementsAre("a", "b"));
}

TEST_F(DbTest, ReadSnapshotSeesOneStateAcrossStatements) {
  Insert("before");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteDb> other,
                       Db::Open(dir_.File("test.db"), DbOptions{}));
  {
    ASSERT_OK_AND_ASSIGN(const ReadSnapshot snapshot, ReadSnapshot::Begin(*db_));
    EXPECT_THAT(Values(), ElementsAre("before"));
    ASSERT_OK(other->Exec("INSERT INTO t (v) VALUES ('during')"));
    EXPECT_THAT(Values(), ElementsAre("before"));
  }
  EXPECT_THAT(Values(), ElementsAre("before", "during"));
}

// Inside a write transaction a snapshot changes nothing: the transaction's own writes are
// seen, and it still commits (or rolls back) as a whole.
TEST_F(DbTest, ReadSnapshotInsideATransactionLeavesItOpen) {
  ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
  Insert("mine");
  {
    ASSERT_OK_AND_ASSIGN(const ReadSnapshot snapshot, ReadSnapshot::Begin(*db_));
    EXPECT_THAT(Values(), ElementsAre("mine"));
  }
  Insert("also mine");
  ASSERT_OK(txn.Commit());
  EXPECT_THAT(Values(), ElementsAre("mine", "also mine"));
}

TEST_F(DbTest, ExecRunsSeveralStatements) {
  ASSERT_OK(db_->Exec("INSERT INTO t (v) VALUES ('a'); INSERT INTO t (v) VALUES ('b');"));
  EXPECT_THAT(Values(), ElementsAre("a", "b"));
}

TEST_F(DbTest, ExecSyntaxErrorIsNotOkAndQuotesTheSql) {
  const absl::Status s = db_->Exec("SELEC 1");
  EXPECT_THAT(s, Not(IsOk()));
  EXPECT_THAT(std::string(s.message()), HasSubstr("SELEC"));
}

TEST_F(DbTest, PrepareSyntaxErrorIsNotOk) {
  EXPECT_THAT(db_->Prepare("SELEKT * FROM t"), Not(IsOk()));
}

TEST_F(DbTest, PrepareUnknownTableIsNotOk) {
  EXPECT_THAT(db_->Prepare("SELECT * FROM no_such_table"), Not(IsOk()));
}

TEST_F(DbTest, FailedPrepareIsNotCached) {
  EXPECT_THAT(db_->Prepare("SELECT * FROM later"), Not(IsOk()));
  ASSERT_OK(db_->Exec("CREATE TABLE later (x INTEGER); INSERT INTO later VALUES (5)"));
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT * FROM later"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Int(0), 5);
}

TEST_F(DbTest, ConstraintViolationIsFailedPrecondition) {
  Insert("dup");
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("INSERT INTO t (v) VALUES (?1)"));
  stmt.Bind(1, std::string_view("dup"));
  EXPECT_THAT(stmt.Run(), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("UNIQUE")));
}

TEST_F(DbTest, StatementIsUsableAfterAFailedStep) {
  Insert("dup");
  {
    ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("INSERT INTO t (v) VALUES (?1)"));
    stmt.Bind(1, std::string_view("dup"));
    EXPECT_THAT(stmt.Run(), Not(IsOk()));
  }
  Insert("fresh");
  EXPECT_THAT(Values(), ElementsAre("dup", "fresh"));
}

TEST_F(DbTest, StepReturnsRowsThenFalse) {
  Insert("a");
  Insert("b");
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT v FROM t ORDER BY id"));
  ASSERT_OK_AND_ASSIGN(bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), "a");
  ASSERT_OK_AND_ASSIGN(row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), "b");
  ASSERT_OK_AND_ASSIGN(row, stmt.Step());
  EXPECT_FALSE(row);
}

TEST_F(DbTest, BindsAndReadsEveryColumnType) {
  ASSERT_OK(
      db_->Exec("CREATE TABLE all_types (i INTEGER, d REAL, s TEXT, n INTEGER, "
                "oi INTEGER, on_ INTEGER)"));
  {
    ASSERT_OK_AND_ASSIGN(Stmt insert,
                         db_->Prepare("INSERT INTO all_types VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
    insert.Bind(1, int64_t{-9007199254740993})
        .Bind(2, 2.5)
        .Bind(3, std::string_view("h\xc3\xa9llo"))
        .BindNull(4)
        .Bind(5, std::optional<int64_t>(42))
        .Bind(6, std::optional<int64_t>());
    ASSERT_OK(insert.Run());
  }
  ASSERT_OK_AND_ASSIGN(Stmt select, db_->Prepare("SELECT i, d, s, n, oi, on_ FROM all_types"));
  ASSERT_OK_AND_ASSIGN(const bool row, select.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(select.Int(0), int64_t{-9007199254740993});
  EXPECT_DOUBLE_EQ(select.Double(1), 2.5);
  EXPECT_EQ(select.Text(2), "h\xc3\xa9llo");
  EXPECT_TRUE(select.IsNull(3));
  EXPECT_FALSE(select.IsNull(0));
  EXPECT_EQ(select.OptInt(3), std::nullopt);
  EXPECT_EQ(select.OptInt(4), std::optional<int64_t>(42));
  EXPECT_EQ(select.OptInt(5), std::nullopt);
  EXPECT_EQ(select.Text(3), "");
}

TEST_F(DbTest, TextKeepsEmbeddedNulBytes) {
  const std::string with_nul("a\0b", 3);
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT ?1, length(CAST(?1 AS BLOB))"));
  stmt.Bind(1, std::string_view(with_nul));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), with_nul);
  EXPECT_EQ(stmt.Int(1), 3);
}

TEST_F(DbTest, BoundTextIsCopied) {
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT ?1"));
  {
    std::string temporary = "copied value";
    stmt.Bind(1, std::string_view(temporary));
    temporary.assign(temporary.size(), 'x');
  }
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), "copied value");
}

TEST_F(DbTest, ParameterIndexFindsNamedParameters) {
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT :a + :b"));
  EXPECT_EQ(stmt.ParameterIndex(":a"), 1);
  EXPECT_EQ(stmt.ParameterIndex(":b"), 2);
  EXPECT_EQ(stmt.ParameterIndex(":missing"), 0);
  stmt.Bind(stmt.ParameterIndex(":a"), int64_t{40}).Bind(stmt.ParameterIndex(":b"), int64_t{2});
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Int(0), 42);
}

TEST_F(DbTest, ABindOutOfRangeFailsTheRunAndNamesTheIndex) {
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("INSERT INTO t (v) VALUES (?1)"));
  stmt.Bind(1, std::string_view("kept")).Bind(99, int64_t{7});
  EXPECT_THAT(stmt.Run(), StatusIs(absl::StatusCode::kInternal, HasSubstr("parameter 99")));
  EXPECT_THAT(Values(), ElementsAre());
}

TEST_F(DbTest, AFailedBindIsReportedByStepAndInts) {
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT id FROM t WHERE v = ?1"));
  stmt.BindNull(2).Bind(1, std::string_view("x"));
  EXPECT_THAT(stmt.Step(), StatusIs(absl::StatusCode::kInternal, HasSubstr("parameter 2")));
  EXPECT_THAT(stmt.Ints(), StatusIs(absl::StatusCode::kInternal, HasSubstr("parameter 2")));
}

TEST_F(DbTest, AFailedBindDoesNotOutliveItsStmt) {
  {
    ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("INSERT INTO t (v) VALUES (?1)"));
    stmt.Bind(3, std::string_view("nowhere"));
    EXPECT_THAT(stmt.Run(), Not(IsOk()));
  }
  Insert("next");
  EXPECT_THAT(Values(), ElementsAre("next"));
}

TEST_F(DbTest, LastInsertRowIdAndChanges) {
  Insert("a");
  Insert("b");
  EXPECT_EQ(db_->LastInsertRowId(), 2);
  ASSERT_OK(db_->Exec("UPDATE t SET v = v || '!'"));
  EXPECT_EQ(db_->Changes(), 2);
  EXPECT_THAT(Values(), ElementsAre("a!", "b!"));
}

TEST_F(DbTest, RunInsertReturnsTheNewRowsId) {
  Insert("a");
  ASSERT_OK_AND_ASSIGN(Stmt insert, db_->Prepare("INSERT INTO t (v) VALUES (?1)"));
  insert.Bind(1, std::string_view("b"));
  EXPECT_THAT(insert.RunInsert(), strata::testing::IsOkAndHolds(2));
}

TEST_F(DbTest, PreparingSameSqlAgainAfterStmtDiesStartsFromFirstRow) {
  Insert("a");
  Insert("b");
  Insert("c");
  const char* sql = "SELECT v FROM t ORDER BY id";
  {
    ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare(sql));
    ASSERT_OK_AND_ASSIGN(bool row, stmt.Step());
    ASSERT_TRUE(row);
    ASSERT_OK_AND_ASSIGN(row, stmt.Step());
    ASSERT_TRUE(row);
    EXPECT_EQ(stmt.Text(0), "b");
    // Dies mid-iteration.
  }
  ASSERT_OK_AND_ASSIGN(Stmt again, db_->Prepare(sql));
  ASSERT_OK_AND_ASSIGN(const bool row, again.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(again.Text(0), "a");
}

TEST_F(DbTest, BindingsDoNotCarryOverToTheNextUseOfACachedStatement) {
  const char* sql = "SELECT ?1 IS NULL";
  {
    ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare(sql));
    stmt.Bind(1, int64_t{7});
    ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
    ASSERT_TRUE(row);
    EXPECT_EQ(stmt.Int(0), 0);
  }
  ASSERT_OK_AND_ASSIGN(Stmt again, db_->Prepare(sql));
  ASSERT_OK_AND_ASSIGN(const bool row, again.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(again.Int(0), 1);  // Unbound parameters are NULL.
}

TEST_F(DbTest, CachedStatementCanBeReusedManyTimes) {
  for (int i = 0; i < 100; ++i) Insert("row" + std::to_string(i));
  ASSERT_OK_AND_ASSIGN(Stmt count, db_->Prepare("SELECT count(*) FROM t"));
  ASSERT_OK_AND_ASSIGN(const bool row, count.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(count.Int(0), 100);
  EXPECT_EQ(db_->LastInsertRowId(), 100);
}

TEST_F(DbTest, DeadStmtReleasesItsReadSoWritesCanCommit) {
  Insert("a");
  Insert("b");
  {
    ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT v FROM t"));
    ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
    ASSERT_TRUE(row);
  }
  // With the read still open, DROP TABLE would fail with "table is locked".
  EXPECT_OK(db_->Exec("DROP TABLE t"));
}

TEST_F(DbTest, MovedStmtStillWorks) {
  Insert("a");
  ASSERT_OK_AND_ASSIGN(Stmt first, db_->Prepare("SELECT v FROM t"));
  Stmt second = std::move(first);
  ASSERT_OK_AND_ASSIGN(const bool row, second.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(second.Text(0), "a");
}

TEST_F(DbTest, TransactionRollsBackUnlessCommitted) {
  {
    ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
    Insert("lost");
    EXPECT_THAT(Values(), ElementsAre("lost"));  // Visible inside the transaction.
  }
  EXPECT_THAT(Values(), ElementsAre());
}

TEST_F(DbTest, CommittedTransactionKeepsItsWrites) {
  {
    ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
    Insert("kept");
    ASSERT_OK(txn.Commit());
  }
  EXPECT_THAT(Values(), ElementsAre("kept"));
}

TEST_F(DbTest, CommittedTransactionSurvivesReopen) {
  {
    ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
    Insert("durable");
    ASSERT_OK(txn.Commit());
  }
  const std::string path = db_->path();
  db_.reset();
  ASSERT_OK_AND_ASSIGN(db_, Db::Open(path, DbOptions{}));
  EXPECT_THAT(Values(), ElementsAre("durable"));
}

TEST_F(DbTest, MovedTransactionRollsBackOnlyOnce) {
  {
    ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
    Insert("moved");
    Transaction moved = std::move(txn);
    ASSERT_OK(moved.Commit());
  }  // The moved-from txn must not roll back.
  EXPECT_THAT(Values(), ElementsAre("moved"));
}

TEST_F(DbTest, NestedBeginFails) {
  ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
  EXPECT_THAT(Transaction::Begin(*db_), Not(IsOk()));
}

TEST_F(DbTest, RollbackToSavepointUndoesOnlyLaterWrites) {
  {
    ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
    Insert("before");
    ASSERT_OK(txn.Savepoint());
    Insert("after");
    ASSERT_OK(txn.RollbackToSavepoint());
    Insert("next");
    ASSERT_OK(txn.Commit());
  }
  EXPECT_THAT(Values(), ElementsAre("before", "next"));
}

TEST_F(DbTest, ReleasedSavepointKeepsItsWrites) {
  {
    ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
    ASSERT_OK(txn.Savepoint());
    Insert("kept");
    ASSERT_OK(txn.ReleaseSavepoint());
    ASSERT_OK(txn.Commit());
  }
  EXPECT_THAT(Values(), ElementsAre("kept"));
}

TEST_F(DbTest, SavepointsCanBeRepeatedPerItem) {
  {
    ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
    for (const char* item : {"one", "bad", "two", "bad2", "three"}) {
      ASSERT_OK(txn.Savepoint());
      Insert(item);
      if (std::string_view(item).starts_with("bad")) {
        ASSERT_OK(txn.RollbackToSavepoint());
      } else {
        ASSERT_OK(txn.ReleaseSavepoint());
      }
    }
    ASSERT_OK(txn.Commit());
  }
  EXPECT_THAT(Values(), ElementsAre("one", "two", "three"));
}

TEST_F(DbTest, RollbackOfWholeTransactionIncludesReleasedSavepoints) {
  {
    ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
    ASSERT_OK(txn.Savepoint());
    Insert("gone");
    ASSERT_OK(txn.ReleaseSavepoint());
  }
  EXPECT_THAT(Values(), ElementsAre());
}

TEST_F(DbTest, RollbackToSavepointWithoutSavepointFails) {
  ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db_));
  EXPECT_THAT(txn.RollbackToSavepoint(), Not(IsOk()));
}

TEST(DbBusy, SecondConnectionWriteFailsWithUnavailable) {
  TempDir dir;
  const std::string path = dir.File("busy.db");
  DbOptions options;
  options.busy_timeout_ms = 0;
  ASSERT_OK_AND_ASSIGN(auto first, Db::Open(path, options));
  ASSERT_OK_AND_ASSIGN(auto second, Db::Open(path, options));
  ASSERT_OK(first->Exec("CREATE TABLE t (v TEXT)"));
  ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*first));
  EXPECT_THAT(Transaction::Begin(*second),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("lock")));
}

// Creates `path` in rollback mode and holds a read of it open on a connection of its own
// (another process), until the returned connection commits or closes.
sqlite3* HoldARollbackModeRead(const std::string& path) {
  sqlite3* other = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(other, "CREATE TABLE t (v TEXT); BEGIN; SELECT * FROM t;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  return other;
}

// Switching a file held so to WAL waits for the reader, not fail at once...
TEST(DbBusy, OpenWaitsForAReaderOfARollbackModeFile) {
  TempDir dir;
  const std::string path = dir.File("rollback.db");
  sqlite3* other = HoldARollbackModeRead(path);
  std::thread release([other] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  });
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = Db::Open(path, DbOptions{});
  release.join();
  sqlite3_close(other);
  ASSERT_OK(db);
  ASSERT_OK_AND_ASSIGN(Stmt stmt, (*db)->Prepare("PRAGMA journal_mode"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), "wal");
}

// ... and fails, clearly, when the reader stays past the busy timeout.
TEST(DbBusy, OpenFailsWithUnavailableWhenTheReaderStays) {
  TempDir dir;
  const std::string path = dir.File("rollback.db");
  sqlite3* other = HoldARollbackModeRead(path);
  DbOptions options;
  options.busy_timeout_ms = 100;
  EXPECT_THAT(Db::Open(path, options), StatusIs(absl::StatusCode::kUnavailable, HasSubstr("busy")));
  sqlite3_close(other);
}

// Two hosts starting strata on a file that does not exist yet, at the same moment: both
// switch it to WAL. SQLite fails one of them at once now and then (a lock taken while the
// other sets up the WAL, which its busy handler does not cover), so Open retries.
TEST(DbBusy, TwoConnectionsCreatingOneFileAtOnceBothOpen) {
  TempDir dir;
  for (int i = 0; i < 200; ++i) {
    const std::string path = dir.File("race" + std::to_string(i) + ".db");
    absl::StatusOr<std::unique_ptr<SqliteDb>> a, b;
    AtOnce([&] { a = Db::Open(path, DbOptions{}); }, [&] { b = Db::Open(path, DbOptions{}); });
    ASSERT_OK(a) << "attempt " << i;
    ASSERT_OK(b) << "attempt " << i;
  }
}

constexpr char kBusyMessage[] =
    "the database is busy: another writer has held its lock for more than 200 ms; nothing was "
    "written, try again";

// `outside` holds SQLite's write lock the way another process does: without this process's
// write mutex.
class DbBusyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.busy_timeout_ms = 200;
    ASSERT_OK_AND_ASSIGN(outside_, Db::Open(dir_.File("busy.db"), options_));
    ASSERT_OK(outside_->Exec("CREATE TABLE t (v TEXT)"));
    ASSERT_OK(outside_->Exec("BEGIN IMMEDIATE"));
  }

  int64_t BusyTimeout(Db& db) {
    auto stmt = db.Prepare("PRAGMA busy_timeout");
    EXPECT_OK(stmt);
    if (!stmt.ok()) return -1;
    auto row = stmt->Step();
    EXPECT_OK(row);
    return row.ok() && *row ? stmt->Int(0) : -1;
  }

  TempDir dir_;
  DbOptions options_;
  std::unique_ptr<SqliteDb> outside_;
};

TEST_F(DbBusyTest, LockHeldByAnotherProcessFailsWithABusyMessageAfterTheTimeout) {
  ASSERT_OK_AND_ASSIGN(auto db, Db::Open(dir_.File("busy.db"), options_));
  EXPECT_THAT(Transaction::Begin(*db),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(kBusyMessage)));
  // The wait Begin set for BEGIN IMMEDIATE is undone.
  EXPECT_EQ(BusyTimeout(*db), 200);
  ASSERT_OK(outside_->Exec("ROLLBACK"));
  ASSERT_OK_AND_ASSIGN(Transaction txn, Transaction::Begin(*db));
  ASSERT_OK(db->Exec("INSERT INTO t VALUES ('after the lock')"));
  ASSERT_OK(txn.Commit());
  EXPECT_EQ(BusyTimeout(*db), 200);
}

TEST_F(DbBusyTest, WriterQueuedBehindAConnectionWaitingForTheLockGetsTheSameError) {
  // The embedding worker's connection waits for the outside lock holding this process's
  // write mutex; a write on the serving connection queues behind it.
  ASSERT_OK_AND_ASSIGN(auto worker, Db::Open(dir_.File("busy.db"), options_));
  ASSERT_OK_AND_ASSIGN(auto serving, Db::Open(dir_.File("busy.db"), options_));
  std::atomic<bool> worker_done{false};
  absl::Status worker_status;
  std::thread worker_thread([&] {
    worker_status = Transaction::Begin(*worker).status();
    worker_done = true;
  });
  // Until the worker holds the mutex (or, on a very slow machine, has given up already).
  while (!worker_done && serving->write_mutex().try_lock()) {
    serving->write_mutex().unlock();
    std::this_thread::yield();
  }
  const absl::StatusOr<Transaction> txn = Transaction::Begin(*serving);
  worker_thread.join();
  EXPECT_THAT(worker_status, StatusIs(absl::StatusCode::kUnavailable, HasSubstr(kBusyMessage)));
  // Whether it gave up waiting for the worker or for SQLite, the message is the same.
  EXPECT_THAT(txn, StatusIs(absl::StatusCode::kUnavailable, HasSubstr(kBusyMessage)));
  EXPECT_EQ(BusyTimeout(*serving), 200);
}

TEST(DbLocked, TableInUseByThisConnectionIsInternalNotBusy) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto db, Db::Open(dir.File("locked.db"), DbOptions{}));
  ASSERT_OK(db->Exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a'), ('b')"));
  ASSERT_OK_AND_ASSIGN(Stmt reading, db->Prepare("SELECT v FROM t"));
  ASSERT_OK_AND_ASSIGN(const bool row, reading.Step());
  ASSERT_TRUE(row);
  const absl::Status s = db->Exec("DROP TABLE t");
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal, HasSubstr("locked")));
  EXPECT_THAT(std::string(s.message()), Not(HasSubstr("busy")));
}

}  // namespace
}  // namespace strata::store
