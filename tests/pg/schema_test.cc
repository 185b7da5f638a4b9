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
  // Empty but for meta's mark of the largest memory id deleted (migration 4).
  for (const auto& [table, n] : *counts) EXPECT_EQ(n, table == "meta" ? 1 : 0) << table;
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

TEST(SchemaTest, NoChangeFeedAfterMigration3) {
  auto conn = Open(testing::FreshDatabaseUri());
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(Migrate(*conn, 2).ok());
  auto triggers = conn->QueryInt("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal");
  ASSERT_TRUE(triggers.ok()) << triggers.status();
  EXPECT_EQ(*triggers, 9);  // One per table of migration 1 still in the feed after 2.
  ASSERT_TRUE(Migrate(*conn, 3).ok());
  triggers = conn->QueryInt("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal");
  ASSERT_TRUE(triggers.ok()) << triggers.status();
  EXPECT_EQ(*triggers, 0);
  auto table = conn->Query("SELECT to_regclass('changes') IS NULL");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->rows[0][0], "t");
}

// memories' mark of the largest id deleted (migration 4), as text.
std::string DeletedMark(Connection& conn) {
  auto rows = conn.Query("SELECT value FROM meta WHERE name = 'memory_id_deleted_high_water'");
  EXPECT_TRUE(rows.ok()) << rows.status();
  if (!rows.ok() || rows->rows.size() != 1) return "<no row>";
  return rows->rows[0][0].value_or("<null>");
}

TEST(SchemaTest, Migration4MarksEveryIdGivenBeforeItThenEachDeleted) {
  auto conn = Open(testing::FreshDatabaseUri());
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(Migrate(*conn, 3).ok());
  // A store of version 3: memories 1 to 4, of which 4 was purged (its id unknown to the rows).
  ASSERT_TRUE(conn->Exec("INSERT INTO memories (category, key, created_at_unix_ms, "
                         "last_event_at_unix_ms) SELECT 'c', 'k' || i, 0, 0 "
                         "FROM generate_series(1, 4) AS i; DELETE FROM memories WHERE id = 4")
                  .ok());
  ASSERT_TRUE(Migrate(*conn).ok());
  EXPECT_EQ(DeletedMark(*conn), "4");
  ASSERT_TRUE(conn->Exec("INSERT INTO memories (id, category, key, created_at_unix_ms, "
                         "last_event_at_unix_ms) VALUES (9, 'c', 'k9', 0, 0)")
                  .ok());
  ASSERT_TRUE(conn->Exec("DELETE FROM memories WHERE id = 2").ok());
  EXPECT_EQ(DeletedMark(*conn), "4");
  ASSERT_TRUE(conn->Exec("DELETE FROM memories WHERE id = 9").ok());
  EXPECT_EQ(DeletedMark(*conn), "9");
  // A delete rolled back leaves the mark as it was.
  ASSERT_TRUE(conn->Exec("BEGIN; DELETE FROM memories WHERE id = 3; ROLLBACK").ok());
  EXPECT_EQ(DeletedMark(*conn), "9");
}

TEST(SchemaTest, Migration4OnAnUnusedSequenceMarksNothing) {
  auto conn = Open(testing::FreshDatabaseUri());
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(Migrate(*conn).ok());
  EXPECT_EQ(DeletedMark(*conn), "0");
}

// Migrates a fresh database to `before`, writes a row of `table` by `insert` (its $1, "1")
// whose `column` pglz compresses, migrates to the latest and writes another ($1 "1025"):
// the second is stored uncompressed and the first reads as it did.
void ExpectStoredUncompressedFrom(int before, const std::string& table, const std::string& column,
                                  const std::string& insert) {
  auto conn = Open(testing::FreshDatabaseUri());
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(Migrate(*conn, before).ok());
  ASSERT_TRUE(conn->Query(insert, {"1"}).ok());
  const std::string compressed_count =
      "SELECT count(pg_column_compression(" + column + ")) FROM " + table;
  auto compressed = conn->QueryInt(compressed_count);
  ASSERT_TRUE(compressed.ok()) << compressed.status();
  ASSERT_EQ(*compressed, 1);  // Else the test shows nothing.
  const std::string first = "SELECT " + column + " FROM " + table + " WHERE first_version = 1";
  auto before_rows = conn->Query(first);
  ASSERT_TRUE(before_rows.ok()) << before_rows.status();

  ASSERT_TRUE(Migrate(*conn).ok());
  ASSERT_TRUE(conn->Query(insert, {"1025"}).ok());
  compressed = conn->QueryInt(compressed_count);
  ASSERT_TRUE(compressed.ok()) << compressed.status();
  EXPECT_EQ(*compressed, 0);
  auto after_rows = conn->Query(first);
  ASSERT_TRUE(after_rows.ok()) << after_rows.status();
  EXPECT_EQ(after_rows->rows, before_rows->rows);
}

TEST(SchemaTest, Migration10StoresABlocksLengthsUncompressedThoseBeforeToo) {
  // A block's lengths as the builder writes them: 1,024 offset:tokens.
  ExpectStoredUncompressedFrom(
      9, "text_segment_blocks", "lengths",
      "INSERT INTO text_segment_blocks (first_version, last_version, terms, lengths) "
      "SELECT $1::bigint, $1::bigint + 1023, '{}', string_agg(i || ':' || (i % 7 + 80), ';') "
      "FROM generate_series(0, 1023) AS i");
}

TEST(SchemaTest, Migration11StoresASegmentsPostingsUncompressedThoseBeforeToo) {
  // A common term's segment as the builder writes it: offset:positions for 1,024 versions.
  ExpectStoredUncompressedFrom(
      10, "text_segments", "postings",
      "INSERT INTO text_segments (term, first_version, postings) "
      "SELECT 'entity', $1::bigint, string_agg(i || ':' || (i % 5) || ',' || (i % 11 + 9), ';') "
      "FROM generate_series(0, 1023) AS i");
}

}  // namespace
}  // namespace strata::pg
