#include "pg/schema.h"

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pg/pg_test_db.h"

namespace strata::pg {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Connection> Open(const std::string& uri) {
  auto conn = Connection::Open(uri);
  EXPECT_TRUE(conn.ok()) << conn.status();
  return conn.ok() ? std::move(*conn) : nullptr;
}

// Rows of schema_migrations per version: "1:1,2:1" when each was applied once.
std::string AppliedCounts(Connection& conn) {
  auto rows = conn.Query(
      "SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY version");
  EXPECT_TRUE(rows.ok()) << rows.status();
  std::string out;
  for (const auto& row : rows.value_or(Rows{}).rows) {
    absl::StrAppend(&out, out.empty() ? "" : ",", *row[0], ":", *row[1]);
  }
  return out;
}

std::string EachOnce() {
  std::string out;
  for (int v = 1; v <= LatestSchemaVersion(); ++v) {
    absl::StrAppend(&out, out.empty() ? "" : ",", v, ":1");
  }
  return out;
}

TEST(SchemaTest, MigrationsAppliedOnce) {
  auto conn = Open(testing::FreshDatabaseUri());
  ASSERT_NE(conn, nullptr);
  auto before = ReadSchemaState(*conn);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->current(), 0);
  EXPECT_EQ(before->pending(), LatestSchemaVersion());

  ASSERT_TRUE(Migrate(*conn).ok());
  ASSERT_TRUE(Migrate(*conn).ok());
  EXPECT_EQ(AppliedCounts(*conn), EachOnce());
  auto after = ReadSchemaState(*conn);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->current(), LatestSchemaVersion());
  EXPECT_EQ(after->pending(), 0);
  auto counts = CountRows(*conn);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), TableNames().size());
  for (const auto& [table, n] : *counts) EXPECT_EQ(n, 0) << table;
  // The lock is released: another session takes it at once.
  auto other = Open(std::getenv("STRATA_TEST_PG_URI"));
  ASSERT_NE(other, nullptr);
  auto got = other->Query("SELECT pg_try_advisory_lock($1)", {absl::StrCat(kMigrationLock)});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->rows[0][0], "t");
}

TEST(SchemaTest, ConcurrentMigrationsBothSucceedEachAppliedOnce) {
  const std::string uri = testing::FreshDatabaseUri();
  auto a = Open(uri);
  auto b = Open(uri);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  absl::Status sa, sb;
  std::thread ta([&] { sa = Migrate(*a); });
  std::thread tb([&] { sb = Migrate(*b); });
  ta.join();
  tb.join();
  EXPECT_TRUE(sa.ok()) << sa;
  EXPECT_TRUE(sb.ok()) << sb;
  EXPECT_EQ(AppliedCounts(*a), EachOnce());
}

TEST(SchemaTest, NewerSchemaRefusedAndUnchanged) {
  auto conn = Open(testing::FreshDatabaseUri());
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(Migrate(*conn).ok());
  const int newer = LatestSchemaVersion() + 1;
  ASSERT_TRUE(
      conn->Query("INSERT INTO schema_migrations (version) VALUES ($1)", {absl::StrCat(newer)})
          .ok());
  const absl::Status status = Migrate(*conn);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("schema version ", newer)));
  auto state = ReadSchemaState(*conn);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->current(), newer);
  EXPECT_EQ(state->pending(), 0);
}

TEST(SchemaTest, ChangesRecordEveryWriteInOrder) {
  auto conn = Open(testing::FreshDatabaseUri());
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(Migrate(*conn).ok());
  ASSERT_TRUE(conn->Exec(R"sql(
INSERT INTO memories (category, key, created_at_unix_ms, last_event_at_unix_ms)
  VALUES ('people', 'ana', 1, 1);
INSERT INTO versions (memory_id, version, body_json, body_hash, type, valid_from_unix_ms,
                      recorded_at_unix_ms)
  SELECT id, 1, '"likes tea"', -5, 'note', 1, 1 FROM memories;
DELETE FROM memories;
)sql")
                  .ok());
  auto rows = conn->Query(
      "SELECT table_name, op, row_key ? 'body_json', row_key->>'key' FROM changes ORDER BY seq");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->rows.size(), 4u);  // The cascade's delete of the version is recorded too.
  EXPECT_EQ(rows->rows[0][0], "memories");
  EXPECT_EQ(rows->rows[0][1], "insert");
  EXPECT_EQ(rows->rows[0][3], "ana");
  EXPECT_EQ(rows->rows[1][0], "versions");
  EXPECT_EQ(rows->rows[1][2], "f");  // The body stays out of the change log.
  EXPECT_EQ(rows->rows[3][1], "delete");
}

}  // namespace
}  // namespace strata::pg
