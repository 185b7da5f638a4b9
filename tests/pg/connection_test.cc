#include "pg/connection.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/pg_test_db.h"

namespace strata::pg {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Connection> OpenFresh() {
  const std::string uri = testing::FreshDatabaseUri();
  auto conn = Connection::Open(uri);
  EXPECT_TRUE(conn.ok()) << conn.status();
  return conn.ok() ? std::move(*conn) : nullptr;
}

int64_t Count(Connection& conn, const std::string& table) {
  auto n = conn.QueryInt("SELECT count(*) FROM " + table);
  EXPECT_TRUE(n.ok()) << n.status();
  return n.value_or(-1);
}

TEST(ConnectionTest, RunsParameterizedQueries) {
  auto conn = OpenFresh();
  ASSERT_NE(conn, nullptr);
  EXPECT_GE(conn->server_version(), 150000);
  auto rows = conn->Query("SELECT $1::BIGINT + 1 AS n, $2::TEXT AS s, $3::TEXT AS missing",
                          {"41", "it's", std::nullopt});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->columns, ::testing::ElementsAre("n", "s", "missing"));
  ASSERT_EQ(rows->rows.size(), 1u);
  EXPECT_EQ(rows->rows[0][0], "42");
  EXPECT_EQ(rows->rows[0][1], "it's");
  EXPECT_EQ(rows->rows[0][2], std::nullopt);

  ASSERT_TRUE(conn->Exec("CREATE TABLE t (id BIGINT PRIMARY KEY, b BYTEA)").ok());
  auto inserted = conn->Query("INSERT INTO t VALUES (1, '\\x00ff'), (2, NULL)");
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  EXPECT_EQ(inserted->affected, 2);
  auto blob = conn->Query("SELECT b FROM t WHERE id = $1", {"1"});
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob->rows[0][0], "\\x00ff");
}

TEST(ConnectionTest, SessionSettingsHoldWhateverTheUriSets) {
  const std::string uri = testing::FreshDatabaseUri();
  // A URI with libpq `options` of its own, which replace any given beside it.
  auto conn = Connection::Open(uri +
                               "&options=-c%20plan_cache_mode%3Dauto%20-c%20jit%3Don"
                               "%20-c%20max_parallel_workers_per_gather%3D2");
  ASSERT_TRUE(conn.ok()) << conn.status();
  auto rows = (*conn)->Query(
      "SELECT current_setting('plan_cache_mode'), current_setting('jit'), "
      "current_setting('max_parallel_workers_per_gather')");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->rows[0][0], "force_custom_plan");
  EXPECT_EQ(rows->rows[0][1], "off");
  EXPECT_EQ(rows->rows[0][2], "0");
}

TEST(ConnectionTest, ErrorsByKind) {
  auto conn = OpenFresh();
  ASSERT_NE(conn, nullptr);
  auto bad_sql = conn->Query("SELEC 1");
  EXPECT_EQ(bad_sql.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_sql.status().message(), HasSubstr("syntax error"));
  ASSERT_TRUE(conn->Exec("CREATE TABLE u (id BIGINT PRIMARY KEY)").ok());
  ASSERT_TRUE(conn->Exec("INSERT INTO u VALUES (1)").ok());
  EXPECT_EQ(conn->Exec("INSERT INTO u VALUES (1)").code(), absl::StatusCode::kFailedPrecondition);
  // The session goes on after errors.
  EXPECT_EQ(conn->QueryInt("SELECT 7").value_or(0), 7);
}

TEST(ConnectionTest, MalformedUriIsInvalidArgument) {
  for (const char* uri : {"postgresql://%zz", "postgresql://[::1", "host"}) {
    auto conn = Connection::Open(uri);
    EXPECT_EQ(conn.status().code(), absl::StatusCode::kInvalidArgument) << uri;
    EXPECT_THAT(conn.status().message(), HasSubstr("malformed PostgreSQL URI")) << uri;
  }
}

TEST(ConnectionTest, ServerNotRunningIsUnavailable) {
  auto conn = Connection::Open("postgresql:///strata?host=/nonexistent-strata-dir&port=1");
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(conn.status().message(), HasSubstr("/nonexistent-strata-dir"));
}

TEST(TransactionTest, RolledBackUnlessCommitted) {
  auto conn = OpenFresh();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Exec("CREATE TABLE t (id BIGINT PRIMARY KEY)").ok());
  {
    auto txn = Transaction::Begin(*conn);
    ASSERT_TRUE(txn.ok()) << txn.status();
    ASSERT_TRUE(conn->Exec("INSERT INTO t VALUES (1)").ok());
    EXPECT_EQ(Transaction::Begin(*conn).status().code(), absl::StatusCode::kFailedPrecondition);
  }
  EXPECT_FALSE(conn->in_transaction());
  EXPECT_EQ(Count(*conn, "t"), 0);
  {
    auto txn = Transaction::Begin(*conn);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(conn->Exec("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  EXPECT_EQ(Count(*conn, "t"), 1);
}

TEST(TransactionTest, FailedStatementMakesCommitAborted) {
  auto conn = OpenFresh();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Exec("CREATE TABLE t (id BIGINT PRIMARY KEY)").ok());
  {
    auto txn = Transaction::Begin(*conn);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(conn->Exec("INSERT INTO t VALUES (1)").ok());
    EXPECT_FALSE(conn->Exec("INSERT INTO t VALUES (1)").ok());
    EXPECT_EQ(txn->Commit().code(), absl::StatusCode::kAborted);
  }
  EXPECT_FALSE(conn->in_transaction());
  EXPECT_EQ(Count(*conn, "t"), 0);
}

}  // namespace
}  // namespace strata::pg
