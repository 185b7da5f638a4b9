#include "store/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "store/db.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/fts5_extensions.h"

namespace strata::store {
namespace {

using ::strata::testing::StatusIs;
using ::strata::testing::TempDir;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

// The names of the tables (including virtual tables) in the file.
std::vector<std::string> TableNames(Db& db) {
  std::vector<std::string> names;
  auto stmt = db.Prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  EXPECT_OK(stmt);
  if (!stmt.ok()) return names;
  while (true) {
    auto row = stmt->Step();
    EXPECT_OK(row);
    if (!row.ok() || !*row) break;
    names.emplace_back(stmt->Text(0));
  }
  return names;
}

class SchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(text::InstallFts5Extensions());
    ASSERT_OK_AND_ASSIGN(db_, Db::Open(path_, DbOptions{}));
  }

  TempDir dir_;
  const std::string path_ = dir_.File("memory.db");
  std::unique_ptr<SqliteDb> db_;
};

TEST(LatestSchemaVersion, IsPositive) { EXPECT_GE(LatestSchemaVersion(), 1); }

TEST_F(SchemaTest, FreshFileHasVersionZero) {
  ASSERT_OK_AND_ASSIGN(const int version, SchemaVersion(*db_));
  EXPECT_EQ(version, 0);
}

TEST_F(SchemaTest, MigrateOnFreshFileSetsLatestVersion) {
  ASSERT_OK(Migrate(*db_));
  ASSERT_OK_AND_ASSIGN(const int version, SchemaVersion(*db_));
  EXPECT_EQ(version, LatestSchemaVersion());
}

TEST_F(SchemaTest, MigrateCreatesTheTables) {
  ASSERT_OK(Migrate(*db_));
  EXPECT_THAT(TableNames(*db_), IsSupersetOf({"memories", "versions", "retractions", "fts"}));
}

TEST_F(SchemaTest, FtsIsAnFts5Table) {
  ASSERT_OK(Migrate(*db_));
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT sql FROM sqlite_master WHERE name = 'fts'"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_THAT(std::string(stmt.Text(0)), HasSubstr("fts5"));
  EXPECT_THAT(std::string(stmt.Text(0)), HasSubstr("tokenize = 'strata'"));
}

// A program that opens a store without text::InstallFts5Extensions() is told so, before
// anything touches the keyword index; a file still at schema 8 is left there.
TEST_F(SchemaTest, WithoutTheStrataTokenizerSchemaNineIsRefused) {
  struct ReinstallAtEnd {
    ~ReinstallAtEnd() { EXPECT_OK(text::InstallFts5Extensions()); }
  } reinstall;
  ASSERT_OK(Migrate(*db_, 8));
  db_.reset();
  sqlite3_reset_auto_extension();  // As if this process had never installed them.
  ASSERT_OK_AND_ASSIGN(db_, Db::Open(path_, DbOptions{}));
  EXPECT_FALSE(db_->HasFts5Tokenizer("strata"));
  EXPECT_THAT(Migrate(*db_), StatusIs(absl::StatusCode::kFailedPrecondition,
                                      HasSubstr("text::InstallFts5Extensions()")));
  EXPECT_THAT(SchemaVersion(*db_), ::strata::testing::IsOkAndHolds(8));
  ASSERT_OK(Migrate(*db_, 8));  // Below 9 the tokenizer is not needed.

  ASSERT_OK(text::InstallFts5Extensions());
  ASSERT_OK_AND_ASSIGN(db_, Db::Open(path_, DbOptions{}));
  ASSERT_OK(Migrate(*db_));
  db_.reset();
  // And a file already at 9 is refused as well: every write would fail on the index.
  sqlite3_reset_auto_extension();
  ASSERT_OK_AND_ASSIGN(db_, Db::Open(path_, DbOptions{}));
  EXPECT_THAT(Migrate(*db_), StatusIs(absl::StatusCode::kFailedPrecondition,
                                      HasSubstr("memory.db")));
}

TEST_F(SchemaTest, MigratedTablesAcceptAMemoryAndItsVersion) {
  ASSERT_OK(Migrate(*db_));
  ASSERT_OK(db_->Exec(
      "INSERT INTO memories (id, category, key, created_at_unix_ms, last_event_at_unix_ms) "
      "VALUES (1, 'people', 'alice', 1000, 1000);"
      "INSERT INTO versions (memory_id, version, body_json, body_hash, type, "
      "valid_from_unix_ms, recorded_at_unix_ms) VALUES (1, 1, '{}', 0, 'insight', 1000, 1000);"
      "INSERT INTO retractions (memory_id, retracted_at_unix_ms) VALUES (1, 2000);"));
  ASSERT_OK_AND_ASSIGN(Stmt stmt, db_->Prepare("SELECT workspace, version_count FROM memories"));
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), "");
  EXPECT_EQ(stmt.Int(1), 0);
}

TEST_F(SchemaTest, MigratedSchemaEnforcesIdentityUniqueness) {
  ASSERT_OK(Migrate(*db_));
  const char* insert =
      "INSERT INTO memories (category, key, created_at_unix_ms, last_event_at_unix_ms) "
      "VALUES ('people', 'alice', 1, 1)";
  ASSERT_OK(db_->Exec(insert));
  EXPECT_THAT(db_->Exec(insert), StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::_));
}

TEST_F(SchemaTest, MigrateTwiceIsANoOp) {
  ASSERT_OK(Migrate(*db_));
  ASSERT_OK(
      db_->Exec("INSERT INTO memories (category, key, created_at_unix_ms, last_event_at_unix_ms) "
                "VALUES ('people', 'alice', 1, 1)"));
  const std::vector<std::string> tables = TableNames(*db_);
  ASSERT_OK(Migrate(*db_));
  ASSERT_OK_AND_ASSIGN(const int version, SchemaVersion(*db_));
  EXPECT_EQ(version, LatestSchemaVersion());
  EXPECT_EQ(TableNames(*db_), tables);
  ASSERT_OK_AND_ASSIGN(Stmt count, db_->Prepare("SELECT count(*) FROM memories"));
  ASSERT_OK_AND_ASSIGN(const bool row, count.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(count.Int(0), 1);
}

TEST_F(SchemaTest, MigrateAfterReopenIsANoOp) {
  ASSERT_OK(Migrate(*db_));
  db_.reset();
  ASSERT_OK_AND_ASSIGN(db_, Db::Open(path_, DbOptions{}));
  ASSERT_OK_AND_ASSIGN(const int before, SchemaVersion(*db_));
  EXPECT_EQ(before, LatestSchemaVersion());
  ASSERT_OK(Migrate(*db_));
  ASSERT_OK_AND_ASSIGN(const int after, SchemaVersion(*db_));
  EXPECT_EQ(after, LatestSchemaVersion());
}

// Schema 7 moves the memory id's mark from every insert to deletes; a file migrated from 6
// keeps every id it ever gave out of reach, the purged newest one included.
TEST_F(SchemaTest, MigrationSevenKeepsThePurgedNewestMemoryIdGiven) {
  ASSERT_OK(Migrate(*db_, 6));
  ASSERT_OK(db_->Exec(
      "INSERT INTO memories (id, category, key, created_at_unix_ms, last_event_at_unix_ms) "
      "VALUES (1, 'a', 'one', 1, 1), (2, 'a', 'two', 1, 1), (3, 'a', 'three', 1, 1);"
      "DELETE FROM memories WHERE id = 3;"));
  ASSERT_OK(Migrate(*db_));
  ASSERT_OK_AND_ASSIGN(Stmt mark, db_->Prepare("SELECT name, value FROM meta WHERE name LIKE "
                                               "'memory_id%' ORDER BY name"));
  ASSERT_OK_AND_ASSIGN(bool row, mark.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(mark.Text(0), "memory_id_deleted_high_water");
  EXPECT_EQ(mark.Text(1), "3");
  ASSERT_OK_AND_ASSIGN(row, mark.Step());
  EXPECT_FALSE(row);
  // Deleting below the mark leaves it; deleting above raises it.
  ASSERT_OK(db_->Exec(
      "INSERT INTO memories (id, category, key, created_at_unix_ms, last_event_at_unix_ms) "
      "VALUES (9, 'a', 'nine', 1, 1); DELETE FROM memories WHERE id IN (1, 9);"));
  ASSERT_OK_AND_ASSIGN(Stmt after, db_->Prepare("SELECT value FROM meta WHERE name = "
                                                "'memory_id_deleted_high_water'"));
  ASSERT_OK_AND_ASSIGN(row, after.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(after.Text(0), "9");
}

TEST_F(SchemaTest, NewerSchemaVersionIsRefusedWithDataLoss) {
  const int newer = LatestSchemaVersion() + 1;
  ASSERT_OK(db_->Exec(absl::StrCat("PRAGMA user_version = ", newer)));
  EXPECT_THAT(Migrate(*db_), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("newer")));
}

TEST_F(SchemaTest, NewerSchemaVersionIsLeftUnchanged) {
  const int newer = LatestSchemaVersion() + 7;
  ASSERT_OK(db_->Exec(absl::StrCat("PRAGMA user_version = ", newer)));
  EXPECT_THAT(Migrate(*db_), StatusIs(absl::StatusCode::kDataLoss, ::testing::_));
  ASSERT_OK_AND_ASSIGN(const int version, SchemaVersion(*db_));
  EXPECT_EQ(version, newer);
  EXPECT_THAT(TableNames(*db_), ::testing::Not(Contains("memories")));
  // And still after reopening: nothing was written.
  db_.reset();
  ASSERT_OK_AND_ASSIGN(db_, Db::Open(path_, DbOptions{}));
  ASSERT_OK_AND_ASSIGN(const int reopened, SchemaVersion(*db_));
  EXPECT_EQ(reopened, newer);
}

TEST_F(SchemaTest, NewerSchemaVersionMessageNamesTheFile) {
  ASSERT_OK(db_->Exec(absl::StrCat("PRAGMA user_version = ", LatestSchemaVersion() + 1)));
  EXPECT_THAT(Migrate(*db_), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("memory.db")));
}

}  // namespace
}  // namespace strata::store
