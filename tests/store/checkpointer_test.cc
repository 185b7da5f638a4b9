#include "store/checkpointer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "store/db.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::store {
namespace {

constexpr int kThresholdPages = 16;

class CheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("ckpt.db");
    ASSERT_OK_AND_ASSIGN(writer_, Db::Open(path_, {}));
    ASSERT_OK(writer_->Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, blob TEXT)"));
    ASSERT_OK_AND_ASSIGN(checkpointer_, Checkpointer::Start(path_, {}, kThresholdPages));
    ASSERT_OK(checkpointer_->Attach(*writer_));
  }

  // One transaction writing `rows` rows of ~3 KB each.
  void Write(int rows) {
    ASSERT_OK(writer_->Exec("BEGIN"));
    for (int i = 0; i < rows; ++i) {
      ASSERT_OK_AND_ASSIGN(Stmt s, writer_->Prepare("INSERT INTO t (blob) VALUES (?1)"));
      s.Bind(1, std::string_view(std::string(3000, static_cast<char>('a' + i % 26))));
      ASSERT_OK(s.Run());
    }
    ASSERT_OK(writer_->Exec("COMMIT"));
  }

  strata::testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<SqliteDb> writer_;
  std::unique_ptr<Checkpointer> checkpointer_;
};

TEST_F(CheckpointerTest, TheWalStaysBoundedUnderAWriterThatNeverPauses) {
  // 2,000 one-page commits: without the writer's RESTART checkpoints the WAL would hold them
  // all (~8 MB); the background thread alone cannot make it start over.
  for (int i = 0; i < 2000; ++i) Write(1);
  EXPECT_GT(checkpointer_->restarts(), 0);
  const auto wal_bytes = std::filesystem::file_size(path_ + "-wal");
  // The writer restarts it at 4x the threshold; allow one commit past that (each commit here
  // writes a page and the table's B-tree pages). The unbounded WAL would hold ~2,000 frames.
  EXPECT_LT(wal_bytes, static_cast<uintmax_t>((4 * kThresholdPages + 8) * (4096 + 24) + 32));
}

TEST_F(CheckpointerTest, SmallWalsAreLeftToTheBackgroundThread) {
  Write(2);
  EXPECT_EQ(checkpointer_->restarts(), 0);
}

TEST_F(CheckpointerTest, EveryCommittedRowSurvivesCheckpointsAndTheFinalTruncate) {
  for (int i = 0; i < 500; ++i) Write(1 + i % 3);
  checkpointer_.reset();  // Final TRUNCATE checkpoint.
  ASSERT_OK_AND_ASSIGN(Stmt count, writer_->Prepare("SELECT count(*) FROM t"));
  ASSERT_OK_AND_ASSIGN(bool row, count.Step());
  ASSERT_TRUE(row);
  int expected = 0;
  for (int i = 0; i < 500; ++i) expected += 1 + i % 3;
  EXPECT_EQ(count.Int(0), expected);
  ASSERT_OK_AND_ASSIGN(Stmt check, writer_->Prepare("PRAGMA integrity_check"));
  ASSERT_OK_AND_ASSIGN(bool checked, check.Step());
  ASSERT_TRUE(checked);
  EXPECT_EQ(check.Text(0), "ok");
}

}  // namespace
}  // namespace strata::store
