// Leaving very common terms out of the ranked search (text::TermStats + Recaller): the
// ranking of a labeled set is the same as scoring every match, and results still fill limit.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "recall/recaller.h"
#include "store/db.h"
#include "store/schema.h"
#include "strata/strata.h"
#include "temporal/version_table.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/fts5_extensions.h"
#include "text/fts_index.h"
#include "text/fts_query.h"
#include "text/term_stats.h"

namespace strata::recall {
namespace {

using ::testing::SizeIs;

constexpr int kDocs = 12000;  // Above text::kPruneMinRows, so pruning is on.
constexpr int kGroups = 97;

// Stores document `i` (key "<prefix><i>", one version recorded at 1000 + i) and indexes
// `text` for it, as the write path would.
absl::Status AddDoc(store::Db& db, int i, const std::string& prefix, const std::string& text) {
  temporal::VersionTable versions(&db);
  text::FtsIndex fts(&db);
  const Identity identity{.category = "fact", .key = absl::StrCat(prefix, i)};
  absl::StatusOr<int64_t> id = versions.InsertIdentity(identity, 1000 + i);
  if (!id.ok()) return id.status();
  temporal::VersionRow row{.body_hash = static_cast<uint64_t>(i)};
  row.version = {.identity = identity,
                 .body_json = "{}",
                 .type = "insight",
                 .valid_from_unix_ms = 1000 + i,
                 .recorded_at_unix_ms = 1000 + i};
  if (absl::Status s = versions.AppendVersion(
          {.memory_id = *id, .identity = identity, .last_event_at_unix_ms = 999 + i}, row);
      !s.ok()) {
    return s;
  }
  return fts.Add(row.version_id, text, identity.key, identity.category);
}

// A corpus in the shape of the scale benchmark: every body says "entity <i> in group <g>",
// so "entity" and "group" are in every document.
class TermPruningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(text::InstallFts5Extensions());
    ASSERT_OK_AND_ASSIGN(db_, store::Db::Open(dir_.File("prune.db"), store::DbOptions{}));
    ASSERT_OK(store::Migrate(*db_));
    std::mt19937 rng(11);
    static const char* const kWords[] = {"alpha", "bravo",  "cedar",  "delta",   "ember", "fjord",
                                         "gamma", "harbor", "indigo", "juniper", "kelp",  "lumen"};
    ASSERT_OK(db_->Exec("BEGIN"));
    for (int i = 0; i < kDocs; ++i) {
      std::string text = absl::StrCat("entity ", i, " in group ", i % kGroups);
      const int words = 5 + static_cast<int>(rng() % 20);
      for (int w = 0; w < words; ++w) absl::StrAppend(&text, " ", kWords[rng() % 12]);
      ASSERT_OK(AddDoc(*db_, i, "doc-", text));
    }
    ASSERT_OK(db_->Exec("COMMIT"));
  }

  // The top `limit` version ids when every term is scored, as recall ranks them.
  std::vector<int64_t> FullRanking(const std::string& query, int limit) {
    auto s = db_->Prepare(absl::StrCat(
        "SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY -bm25(fts, ", text::kTextWeight, ", ",
        text::kKeyWeight, ", ", text::kCategoryWeight, ") DESC, rowid LIMIT ?2"));
    EXPECT_OK(s);
    std::vector<int64_t> ids;
    if (!s.ok()) return ids;
    const std::string expression = text::MatchExpression(text::ParseQuery(query).terms);
    s->Bind(1, std::string_view(expression)).Bind(2, int64_t{limit});
    while (true) {
      auto row = s->Step();
      EXPECT_OK(row);
      if (!row.ok() || !*row) break;
      ids.push_back(s->Int(0));
    }
    return ids;
  }

  strata::testing::TempDir dir_;
  std::unique_ptr<store::Db> db_;
};

TEST_F(TermPruningTest, TermsInMostDocumentsAreCommon) {
  text::TermStats stats(db_.get());
  ASSERT_OK_AND_ASSIGN(const int64_t rows, stats.IndexedRows());
  EXPECT_EQ(rows, kDocs);
  ASSERT_OK_AND_ASSIGN(text::SplitTerms split,
                       stats.Split(text::ParseQuery("entity 4242 group 42").terms));
  EXPECT_THAT(split.selective, ::testing::ElementsAre("4242", "42"));
  EXPECT_THAT(split.common, ::testing::ElementsAre("entity", "group"));
}

TEST_F(TermPruningTest, OnlyCommonTermsAreAllKept) {
  text::TermStats stats(db_.get());
  ASSERT_OK_AND_ASSIGN(text::SplitTerms split, stats.Split(text::ParseQuery("entity group").terms));
  EXPECT_THAT(split.selective, ::testing::ElementsAre("entity", "group"));
  EXPECT_TRUE(split.common.empty());
}

// The labeled set: 60 queries of the benchmark's shape, each labeled with the ranking that
// scoring every match gives. Pruned recall must return the same ids in the same order.
TEST_F(TermPruningTest, RankingIsUnchangedOnALabeledSet) {
  Recaller recaller(db_.get(), nullptr);
  std::mt19937 rng(5);
  int compared = 0;
  for (int q = 0; q < 60; ++q) {
    const std::string query = absl::StrCat("entity ", rng() % kDocs, " group ", rng() % kGroups);
    const std::vector<int64_t> expected = FullRanking(query, 10);
    ASSERT_OK_AND_ASSIGN(RecallResult result,
                         recaller.Recall({.query = query, .mode = RecallMode::kFts5, .limit = 10}));
    std::vector<int64_t> got;
    for (const RecallItem& item : result.items) {
      // Memory ids equal version ids here: one version each, inserted in step.
      got.push_back(item.version.memory_id);
    }
    EXPECT_EQ(got, expected) << query;
    compared += static_cast<int>(expected.size());
  }
  EXPECT_EQ(compared, 600);
}

TEST_F(TermPruningTest, ResultsFillTheLimitFromCommonTermMatches) {
  Recaller recaller(db_.get(), nullptr);
  // "11999" is in one document; "entity" in all. Ten results come back: the match first,
  // then common-term matches, newest first, with no duplicate.
  ASSERT_OK_AND_ASSIGN(
      RecallResult result,
      recaller.Recall({.query = "entity 11999", .mode = RecallMode::kFts5, .limit = 10}));
  ASSERT_THAT(result.items, SizeIs(10));
  EXPECT_EQ(result.items[0].version.identity.key, "doc-11999");
  EXPECT_GT(result.items[0].score, 0);
  EXPECT_EQ(result.items[1].version.identity.key, "doc-11998");
  EXPECT_EQ(result.items[9].version.identity.key, "doc-11990");
  for (int i = 0; i < 10; ++i) EXPECT_EQ(result.items[i].fts5_rank, i + 1);
}

TEST_F(TermPruningTest, OffsetContinuesIntoCommonTermMatches) {
  Recaller recaller(db_.get(), nullptr);
  ASSERT_OK_AND_ASSIGN(
      RecallResult result,
      recaller.Recall(
          {.query = "entity 11999", .mode = RecallMode::kFts5, .limit = 3, .offset = 1}));
  ASSERT_THAT(result.items, SizeIs(3));
  EXPECT_EQ(result.items[0].version.identity.key, "doc-11998");
  EXPECT_EQ(result.items[0].fts5_rank, 2);
  EXPECT_EQ(result.items[2].version.identity.key, "doc-11996");
}

// Above 2 * kSampleRows versions only the newest kSampleRows are counted.
TEST(TermStatsSampled, ClassifiesTermsFromTheNewestVersions) {
  strata::testing::TempDir dir;
  ASSERT_OK(text::InstallFts5Extensions());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> db,
                       store::Db::Open(dir.File("sampled.db"), store::DbOptions{}));
  ASSERT_OK(store::Migrate(*db));
  const int docs = static_cast<int>(2 * text::kSampleRows + 5000);
  ASSERT_OK(db->Exec("BEGIN"));
  for (int i = 0; i < docs; ++i) {
    // "every" is in all; "third" in a third; "early" only in the oldest half.
    std::string text =
        absl::StrCat("every ", i, i % 3 == 0 ? " third" : "", i < docs / 2 ? " early" : "");
    ASSERT_OK(AddDoc(*db, i, "d", text));
  }
  ASSERT_OK(db->Exec("COMMIT"));
  text::TermStats stats(db.get());
  ASSERT_OK_AND_ASSIGN(text::SplitTerms split,
                       stats.Split(text::ParseQuery("every third early 77").terms));
  EXPECT_THAT(split.common, ::testing::ElementsAre("every"));
  // "early" is in half of the index but none of the newest versions: judged by the sample.
  EXPECT_THAT(split.selective, ::testing::ElementsAre("third", "early", "77"));
}

}  // namespace
}  // namespace strata::recall
