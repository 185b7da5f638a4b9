#include "store/wal_vfs.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include <sqlite3.h>

#include "testing/temp_dir.h"

namespace strata::store {
namespace {

using ::strata::testing::TempDir;

// A raw connection, through the coalescing VFS or (vfs = nullptr) the default one.
class Connection {
 public:
  Connection(const std::string& path, const char* vfs) {
    const int rc =
        sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs);
    EXPECT_EQ(rc, SQLITE_OK);
    Exec("PRAGMA journal_mode=WAL");
    Exec("PRAGMA synchronous=NORMAL");
    Exec("PRAGMA wal_autocheckpoint=0");  // the WAL stays: readers must read it
  }
  ~Connection() { sqlite3_close_v2(db_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int Exec(const std::string& sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) ADD_FAILURE() << sql << ": " << (error ? error : "?");
    sqlite3_free(error);
    return rc;
  }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    int64_t value = -1;
    if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
  }
  std::string Text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    std::string value;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return value;
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST(WalVfsTest, AnotherConnectionOnTheDefaultVfsReadsEveryCommit) {
  TempDir dir;
  const std::string path = dir.File("t.db");
  Connection writer(path, CoalescingWalVfs());
  writer.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  Connection reader(path, nullptr);
  // Small commits (a frame or a few), each seen at once by a reader on the default VFS.
  for (int i = 1; i <= 300; ++i) {
    writer.Exec("INSERT INTO t (v) VALUES (printf('%.*c', " + std::to_string(i * 13 % 3000) +
                ", 'x'))");
    ASSERT_EQ(reader.Int("SELECT count(*) FROM t"), i);
  }
  // A commit far larger than one gathered write (a 1 MB value, ~250 frames).
  writer.Exec("INSERT INTO t (v) VALUES (printf('%.*c', 1000000, 'y'))");
  EXPECT_EQ(reader.Int("SELECT length(v) FROM t WHERE id = 301"), 1000000);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
}

// A transaction larger than the page cache spills frames to the WAL before it commits; SQLite
// then overwrites them in place and rewrites their checksums, reading them back. A rolled
// back spill leaves frames past the end that the next transaction overwrites.
TEST(WalVfsTest, SpilledTransactionsCommitAndRollBackIntact) {
  TempDir dir;
  const std::string path = dir.File("t.db");
  Connection writer(path, CoalescingWalVfs());
  writer.Exec("PRAGMA cache_size=10");
  writer.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  writer.Exec("CREATE INDEX t_v ON t (v)");
  const std::string fill =
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) "
      "INSERT INTO t (v) SELECT printf('%d-%.*c', i * 7919 % 2000, 300, 'z') FROM n";
  writer.Exec("BEGIN");
  writer.Exec(fill);
  writer.Exec("UPDATE t SET v = v || 'u' WHERE id % 3 = 0");
  writer.Exec("COMMIT");
  writer.Exec("BEGIN");
  writer.Exec(fill);
  writer.Exec("ROLLBACK");
  writer.Exec("INSERT INTO t (v) VALUES ('after')");

  Connection reader(path, nullptr);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM t"), 2001);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM t WHERE v LIKE '%u'"), 666);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
}

// A process that ends right after its commits (no close, no checkpoint) has every commit in
// the WAL file: a commit returns only once its frames are written.
TEST(WalVfsTest, CommitsAreInTheFileWhenTheProcessDiesAfterThem) {
  TempDir dir;
  const std::string path = dir.File("t.db");
  {
    Connection setup(path, nullptr);
    setup.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, CoalescingWalVfs());
    // NORMAL, as the server runs: a commit does not sync the WAL.
    sqlite3_exec(db, "PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0", nullptr, nullptr,
                 nullptr);
    for (int i = 0; i < 50; ++i) {
      if (sqlite3_exec(db, "INSERT INTO t (v) VALUES (hex(randomblob(600)))", nullptr, nullptr,
                       nullptr) != SQLITE_OK) {
        _exit(2);
      }
    }
    _exit(0);  // as a kill would: no close, no destructors
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  Connection reader(path, nullptr);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM t"), 50);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace strata::store
