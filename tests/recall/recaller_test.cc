// recall::Recaller over a store built directly with the lower modules (no api facade):
// validation, BM25 ranking, filters, temporal scope, ordering of the empty query, ranks.

#include "recall/recaller.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "store/db.h"
#include "store/schema.h"
#include "strata/strata.h"
#include "temporal/version_table.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/body_text.h"
#include "text/fts5_extensions.h"
#include "text/fts_index.h"

namespace strata::recall {
namespace {

using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z

struct Row {
  std::string category = "facts";
  std::string key;
  std::string workspace;
  std::string body_json;
  std::string type = "insight";
  std::vector<std::string> tags;
  std::optional<int64_t> valid_from;  // Default: recorded_at.
  std::optional<int64_t> valid_to;
  int64_t recorded_at = kNow;
};

class RecallerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(text::InstallFts5Extensions());
    ASSERT_OK_AND_ASSIGN(db_, store::Db::Open(dir_.File("recall.db"), {}));
    ASSERT_OK(store::Migrate(*db_));
    versions_ = std::make_unique<temporal::VersionTable>(db_.get());
    fts_ = std::make_unique<text::FtsIndex>(db_.get());
    recaller_ = std::make_unique<Recaller>(db_.get(), nullptr);
  }

  // Appends `row` as the identity's current version and indexes it; returns the version id.
  int64_t Put(const Row& row) {
    const Identity identity{.category = row.category, .key = row.key, .workspace = row.workspace};
    absl::StatusOr<std::optional<temporal::IdentityRow>> found = versions_->FindIdentity(identity);
    EXPECT_OK(found);
    if (!found.ok()) return 0;
    if (!found->has_value()) {
      EXPECT_OK(versions_->InsertIdentity(identity, row.recorded_at));
      found = versions_->FindIdentity(identity);
      EXPECT_TRUE(found.ok() && found->has_value());
      if (!found.ok() || !found->has_value()) return 0;
    }
    temporal::VersionRow version_row{.body_hash = std::hash<std::string>{}(row.body_json)};
    Version& v = version_row.version;
    v.identity = identity;
    v.body_json = row.body_json;
    v.type = row.type;
    v.tags = row.tags;
    v.valid_from_unix_ms = row.valid_from.value_or(row.recorded_at);
    v.valid_to_unix_ms = row.valid_to;
    v.recorded_at_unix_ms = row.recorded_at;
    EXPECT_OK(versions_->AppendVersion(**found, version_row));
    EXPECT_OK(
        fts_->Add(version_row.version_id, text::BodyText(row.body_json), row.key, row.category));
    return version_row.version_id;
  }

  void Retract(const std::string& key, int64_t at) {
    absl::StatusOr<std::optional<temporal::IdentityRow>> found =
        versions_->FindIdentity({.category = "facts", .key = key});
    ASSERT_OK(found);
    ASSERT_TRUE(found->has_value());
    ASSERT_OK(versions_->Retract(**found, at, "test"));
  }

  absl::StatusOr<RecallResult> Recall(const std::string& query, int limit = 10, int offset = 0) {
    RecallRequest request;
    request.query = query;
    request.limit = limit;
    request.offset = offset;
    return recaller_->Recall(request);
  }

  static std::vector<std::string> Keys(const absl::StatusOr<RecallResult>& result) {
    if (!result.ok()) return {"<error: " + result.status().ToString() + ">"};
    std::vector<std::string> keys;
    for (const RecallItem& item : result->items) keys.push_back(item.version.identity.key);
    return keys;
  }

  strata::testing::TempDir dir_;
  std::unique_ptr<store::Db> db_;
  std::unique_ptr<temporal::VersionTable> versions_;
  std::unique_ptr<text::FtsIndex> fts_;
  std::unique_ptr<Recaller> recaller_;
};

// ---------------------------------------------------------------------------------------------
// Validation.

TEST_F(RecallerTest, LimitOutsideOneToThousandIsRejected) {
  for (const int limit : {0, -5, kMaxRecallLimit + 1, 5000}) {
    EXPECT_THAT(Recall("x", limit),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit")))
        << limit;
  }
  EXPECT_OK(Recall("x", 1));
  EXPECT_OK(Recall("x", kMaxRecallLimit));
}

TEST_F(RecallerTest, LimitErrorStatesTheRuleAndTheValue) {
  EXPECT_THAT(Recall("x", 5000),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("limit: must be between 1 and 1000, got 5000")));
}

TEST_F(RecallerTest, OffsetOutsideRangeIsRejected) {
  for (const int offset : {-1, kMaxRecallOffset + 1}) {
    EXPECT_THAT(Recall("x", 10, offset),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("offset")))
        << offset;
  }
  EXPECT_OK(Recall("x", 10, kMaxRecallOffset));
}

TEST_F(RecallerTest, DenseAndHybridModesNeedAnEmbedder) {
  for (RecallMode mode : {RecallMode::kDense, RecallMode::kHybrid}) {
    RecallRequest request;
    request.query = "x";
    request.mode = mode;
    EXPECT_THAT(recaller_->Recall(request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--embedder none")))
        << RecallModeName(mode);
  }
}

TEST(RecallModeNames, RoundTripEveryMode) {
  for (RecallMode mode : kRecallModes) {
    EXPECT_EQ(RecallModeNamed(RecallModeName(mode)), mode) << RecallModeName(mode);
  }
  EXPECT_STREQ(RecallModeName(RecallMode::kAuto), "auto");
  EXPECT_STREQ(RecallModeName(RecallMode::kFts5), "fts5");
  EXPECT_STREQ(RecallModeName(RecallMode::kDense), "dense");
  EXPECT_STREQ(RecallModeName(RecallMode::kHybrid), "hybrid");
}

TEST(RecallModeNames, UnknownNamesAreNone) {
  for (const std::string& name :
       std::vector<std::string>{"", "bm25", "Auto", "FTS5", std::string(500, 'm')}) {
    EXPECT_EQ(RecallModeNamed(name), std::nullopt) << name;
  }
}

TEST_F(RecallerTest, TooManyTagFiltersAreRejected) {
  RecallRequest request;
  request.query = "x";
  for (int i = 0; i < 16; ++i) request.filters.tags.push_back(absl::StrCat("t", i));
  EXPECT_OK(recaller_->Recall(request));
  request.filters.tags.push_back("one-too-many");
  EXPECT_THAT(recaller_->Recall(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tags")));
}

TEST_F(RecallerTest, AutoAndFts5ModesRunTheKeywordArm) {
  Put({.key = "k", .body_json = R"("quokka")"});
  for (RecallMode mode : {RecallMode::kAuto, RecallMode::kFts5}) {
    RecallRequest request;
    request.query = "quokka";
    request.mode = mode;
    ASSERT_OK_AND_ASSIGN(const RecallResult result, recaller_->Recall(request));
    EXPECT_EQ(result.mode, RecallMode::kFts5);
    EXPECT_THAT(Keys(result), ElementsAre("k"));
  }
}

// ---------------------------------------------------------------------------------------------
// Ranking.

TEST_F(RecallerTest, TermFrequencyRanksHigher) {
  Put({.key = "once", .body_json = R"("tapir seen near the river bank today")"});
  Put({.key = "thrice", .body_json = R"("tapir tapir tapir near the river")"});
  Put({.key = "never", .body_json = R"("nothing to see")"});
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall("tapir"));
  EXPECT_THAT(Keys(result), ElementsAre("thrice", "once"));
  ASSERT_EQ(result.items.size(), 2u);
  EXPECT_GT(result.items[0].score, result.items[1].score);
  EXPECT_GT(result.items[1].score, 0);
}

TEST_F(RecallerTest, ColumnWeightsPreferKeyOverTextOverCategory) {
  // Fillers keep the term rare (so its idf is positive) and give each column the same
  // average length as the matching rows, so only the column weights differ.
  for (int i = 0; i < 12; ++i) {
    Put({.category = "misc", .key = absl::StrCat("f", i), .body_json = R"("alpha beta gamma")"});
  }
  Put({.category = "misc", .key = "zircon", .body_json = R"("alpha beta gamma")"});
  Put({.category = "misc", .key = "intext", .body_json = R"("zircon beta gamma")"});
  Put({.category = "zircon", .key = "incategory", .body_json = R"("alpha beta gamma")"});
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall("zircon"));
  EXPECT_THAT(Keys(result), ElementsAre("zircon", "intext", "incategory"));
}

TEST_F(RecallerTest, MatchingMoreQueryTermsRanksHigher) {
  Put({.key = "one", .body_json = R"("sqlite wal mode notes")"});
  Put({.key = "two", .body_json = R"("sqlite checkpoint wal notes")"});
  Put({.key = "none", .body_json = R"("unrelated")"});
  EXPECT_THAT(Keys(Recall("sqlite checkpoint")), ElementsAre("two", "one"));
}

TEST_F(RecallerTest, StemmingMatchesWordForms) {
  Put({.key = "k", .body_json = R"({"text": "the migrations were running"})"});
  EXPECT_THAT(Keys(Recall("migration runs")), ElementsAre("k"));
  EXPECT_THAT(Keys(Recall("MIGRATED")), ElementsAre("k"));
}

TEST_F(RecallerTest, Fts5RanksAreOneToN) {
  for (int i = 0; i < 5; ++i) {
    std::string text;
    for (int j = 0; j <= i; ++j) absl::StrAppend(&text, "okapi ");
    Put({.key = absl::StrCat("k", i), .body_json = absl::StrCat("\"", text, "pad words\"")});
  }
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall("okapi"));
  ASSERT_EQ(result.items.size(), 5u);
  for (size_t i = 0; i < result.items.size(); ++i) {
    EXPECT_EQ(result.items[i].fts5_rank, static_cast<int>(i) + 1);
    if (i > 0) {
      EXPECT_GE(result.items[i - 1].score, result.items[i].score);
    }
  }
  EXPECT_THAT(Keys(result), ElementsAre("k4", "k3", "k2", "k1", "k0"));
}

TEST_F(RecallerTest, OffsetShiftsRanks) {
  for (int i = 0; i < 5; ++i) {
    std::string text;
    for (int j = 0; j <= i; ++j) absl::StrAppend(&text, "okapi ");
    Put({.key = absl::StrCat("k", i), .body_json = absl::StrCat("\"", text, "pad words\"")});
  }
  ASSERT_OK_AND_ASSIGN(const RecallResult page, Recall("okapi", 2, 2));
  EXPECT_THAT(Keys(page), ElementsAre("k2", "k1"));
  ASSERT_EQ(page.items.size(), 2u);
  EXPECT_EQ(page.items[0].fts5_rank, 3);
  EXPECT_EQ(page.items[1].fts5_rank, 4);

  ASSERT_OK_AND_ASSIGN(const RecallResult tail, Recall("okapi", 10, 4));
  EXPECT_THAT(Keys(tail), ElementsAre("k0"));
  ASSERT_EQ(tail.items.size(), 1u);
  EXPECT_EQ(tail.items[0].fts5_rank, 5);
  EXPECT_THAT(Keys(Recall("okapi", 10, 5)), IsEmpty());
}

TEST_F(RecallerTest, LimitCapsTheResult) {
  for (int i = 0; i < 20; ++i) Put({.key = absl::StrCat("k", i), .body_json = R"("dingo")"});
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall("dingo", 7));
  EXPECT_EQ(result.items.size(), 7u);
}

TEST_F(RecallerTest, EqualScoresBreakTiesByVersionId) {
  for (const std::string key : {"c", "a", "b"}) Put({.key = key, .body_json = R"("same words")"});
  EXPECT_THAT(Keys(Recall("same")), ElementsAre("c", "a", "b"));
}

TEST_F(RecallerTest, ItemsCarryTheirVersion) {
  Put({.key = "k", .body_json = R"("first")", .recorded_at = kNow});
  Put({.key = "k",
       .body_json = R"({"text": "wombat"})",
       .type = "decision",
       .tags = {"x"},
       .valid_from = kNow - 500,
       .valid_to = kNow + 500,
       .recorded_at = kNow + 10});
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall("wombat"));
  ASSERT_EQ(result.items.size(), 1u);
  const Version& v = result.items[0].version;
  EXPECT_EQ(v.identity.key, "k");
  EXPECT_EQ(v.identity.category, "facts");
  EXPECT_EQ(v.version, 2);
  EXPECT_EQ(v.body_json, R"({"text": "wombat"})");
  EXPECT_EQ(v.type, "decision");
  EXPECT_THAT(v.tags, ElementsAre("x"));
  EXPECT_EQ(v.valid_from_unix_ms, kNow - 500);
  EXPECT_EQ(v.valid_to_unix_ms, kNow + 500);
  EXPECT_EQ(v.recorded_at_unix_ms, kNow + 10);
  EXPECT_EQ(v.superseded_at_unix_ms, std::nullopt);
}

TEST_F(RecallerTest, QuerySyntaxIsNeverInterpreted) {
  Put({.key = "k", .body_json = R"("alpha beta")"});
  for (const std::string query :
       {"\"alpha", "alpha AND", "NOT alpha", "NEAR(alpha beta)", "alpha*", "^alpha", "text:alpha",
        "key:alpha OR", "(alpha", "{text}: alpha", "\"\"\"", "-", "*:*"}) {
    EXPECT_THAT(Keys(Recall(query)), ElementsAre("k")) << query;
  }
  EXPECT_THAT(Keys(Recall("AND OR NOT")), IsEmpty());
}

TEST_F(RecallerTest, StopWordsAreDroppedOnlyWhenOtherTermsRemain) {
  Put({.key = "stop", .body_json = R"("the")"});
  Put({.key = "word", .body_json = R"("capybara")"});
  EXPECT_THAT(Keys(Recall("the capybara")), ElementsAre("word"));
  EXPECT_THAT(Keys(Recall("the")), ElementsAre("stop"));
}

// ---------------------------------------------------------------------------------------------
// The empty query.

TEST_F(RecallerTest, EmptyQueryListsNewestRecordedFirst) {
  Put({.key = "old", .body_json = R"("a")", .recorded_at = kNow - 300});
  Put({.key = "newest", .body_json = R"("b")", .recorded_at = kNow});
  Put({.key = "middle", .body_json = R"("c")", .recorded_at = kNow - 100});
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall(""));
  EXPECT_THAT(Keys(result), ElementsAre("newest", "middle", "old"));
  for (const RecallItem& item : result.items) {
    EXPECT_EQ(item.fts5_rank, std::nullopt);
  }
  EXPECT_THAT(Keys(Recall("   ")), ElementsAre("newest", "middle", "old"));
  EXPECT_THAT(Keys(Recall("?! -- ()")), ElementsAre("newest", "middle", "old"));
  EXPECT_THAT(Keys(Recall("", 1, 1)), ElementsAre("middle"));
}

TEST_F(RecallerTest, EmptyQueryTiesBreakByNewestInsert) {
  for (const std::string key : {"a", "b", "c"}) {
    Put({.key = key, .body_json = R"("x")", .recorded_at = kNow});
  }
  EXPECT_THAT(Keys(Recall("")), ElementsAre("c", "b", "a"));
}

// ---------------------------------------------------------------------------------------------
// Filters.

class RecallerFilterTest : public RecallerTest {
 protected:
  void SetUp() override {
    RecallerTest::SetUp();
    Put({.category = "cat1", .key = "a", .body_json = R"("otter")", .tags = {"x", "y"}});
    Put({.category = "cat2", .key = "b", .body_json = R"("otter")", .tags = {"x"}});
    Put({.category = "cat1",
         .key = "c",
         .workspace = "ws",
         .body_json = R"("otter")",
         .type = "decision",
         .tags = {"y"}});
    Put({.category = "cat2",
         .key = "d",
         .workspace = "ws",
         .body_json = R"("otter")",
         .type = "decision"});
  }

  std::vector<std::string> With(RecallFilters filters, const std::string& query = "otter") {
    RecallRequest request;
    request.query = query;
    request.filters = std::move(filters);
    return Keys(recaller_->Recall(request));
  }
};

TEST_F(RecallerFilterTest, NoFilterFindsAll) {
  EXPECT_THAT(With({}), UnorderedElementsAre("a", "b", "c", "d"));
}

TEST_F(RecallerFilterTest, Category) {
  EXPECT_THAT(With({.category = "cat1"}), UnorderedElementsAre("a", "c"));
  EXPECT_THAT(With({.category = "nope"}), IsEmpty());
}

TEST_F(RecallerFilterTest, Type) {
  EXPECT_THAT(With({.type = "decision"}), UnorderedElementsAre("c", "d"));
  EXPECT_THAT(With({.type = "insight"}), UnorderedElementsAre("a", "b"));
}

TEST_F(RecallerFilterTest, WorkspaceEmptyMeansGlobalAndAbsentMeansEvery) {
  EXPECT_THAT(With({.workspace = "ws"}), UnorderedElementsAre("c", "d"));
  EXPECT_THAT(With({.workspace = ""}), UnorderedElementsAre("a", "b"));
}

TEST_F(RecallerFilterTest, TagsMustAllBePresent) {
  EXPECT_THAT(With({.tags = {"x"}}), UnorderedElementsAre("a", "b"));
  EXPECT_THAT(With({.tags = {"y"}}), UnorderedElementsAre("a", "c"));
  EXPECT_THAT(With({.tags = {"x", "y"}}), ElementsAre("a"));
  EXPECT_THAT(With({.tags = {"z"}}), IsEmpty());
}

TEST_F(RecallerFilterTest, FiltersCombine) {
  EXPECT_THAT(With({.category = "cat2", .type = "decision", .workspace = "ws"}), ElementsAre("d"));
  EXPECT_THAT(With({.category = "cat1", .workspace = "", .tags = {"y"}}), ElementsAre("a"));
}

TEST_F(RecallerFilterTest, FiltersApplyToTheEmptyQuery) {
  EXPECT_THAT(With({.category = "cat2"}, ""), UnorderedElementsAre("b", "d"));
  EXPECT_THAT(With({.tags = {"y"}}, ""), UnorderedElementsAre("a", "c"));
}

TEST_F(RecallerTest, FilteredResultsFillTheLimit) {
  for (int i = 0; i < 40; ++i) {
    Put({.category = "loud", .key = absl::StrCat("l", i), .body_json = R"("ibis ibis ibis")"});
  }
  for (int i = 0; i < 6; ++i) {
    Put({.category = "quiet",
         .key = absl::StrCat("q", i),
         .body_json = R"("an ibis among many other words in a longer text")"});
  }
  RecallRequest request;
  request.query = "ibis";
  request.limit = 5;
  request.filters.category = "quiet";
  ASSERT_OK_AND_ASSIGN(const RecallResult result, recaller_->Recall(request));
  EXPECT_EQ(result.items.size(), 5u);
}

TEST_F(RecallerTest, FilteredPagesKeepTheRankingOrderPastWhatIsRankedAtOnce) {
  // 160 equal matches rank in version order; one in ten is in the category asked for, so
  // each page of 3 needs ~30 ranked matches and the keyword arm ranks past its first few
  // more than once, across page boundaries.
  for (int i = 0; i < 160; ++i) {
    Put({.category = i % 10 == 0 ? "quiet" : "loud",
         .key = absl::StrCat("m", i),
         .body_json = R"("an ibis in the reeds")"});
  }
  std::vector<std::string> paged;
  for (int offset = 0; offset < 20; offset += 3) {
    RecallRequest request;
    request.query = "ibis";
    request.limit = 3;
    request.offset = offset;
    request.filters.category = "quiet";
    ASSERT_OK_AND_ASSIGN(const RecallResult page, recaller_->Recall(request));
    for (size_t i = 0; i < page.items.size(); ++i) {
      EXPECT_EQ(page.items[i].fts5_rank, offset + static_cast<int>(i) + 1);
    }
    for (const std::string& key : Keys(page)) paged.push_back(key);
  }
  std::vector<std::string> expected;
  for (int i = 0; i < 160; i += 10) expected.push_back(absl::StrCat("m", i));
  EXPECT_EQ(paged, expected);
}

// ---------------------------------------------------------------------------------------------
// Temporal scope.

TEST_F(RecallerTest, OnlyCurrentVersionsByDefault) {
  Put({.key = "k", .body_json = R"("heron")", .recorded_at = kNow});
  Put({.key = "k", .body_json = R"("egret")", .recorded_at = kNow + 10});
  EXPECT_THAT(Keys(Recall("heron")), IsEmpty());
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall("egret"));
  ASSERT_EQ(result.items.size(), 1u);
  EXPECT_EQ(result.items[0].version.version, 2);
  ASSERT_OK_AND_ASSIGN(const RecallResult listed, Recall(""));
  ASSERT_EQ(listed.items.size(), 1u);
  EXPECT_EQ(listed.items[0].version.version, 2);
}

TEST_F(RecallerTest, RetractedIdentitiesAreNotReturned) {
  Put({.key = "gone", .body_json = R"("puffin")", .recorded_at = kNow});
  Put({.key = "kept", .body_json = R"("puffin")", .recorded_at = kNow});
  Retract("gone", kNow + 5);
  EXPECT_THAT(Keys(Recall("puffin")), ElementsAre("kept"));
  EXPECT_THAT(Keys(Recall("")), ElementsAre("kept"));
}

TEST_F(RecallerTest, AsOfSearchesTheVersionsBelievedThen) {
  Put({.key = "k", .body_json = R"("heron")", .recorded_at = kNow});
  Put({.key = "k", .body_json = R"("egret")", .recorded_at = kNow + 10});
  Put({.key = "late", .body_json = R"("heron")", .recorded_at = kNow + 20});
  Retract("late", kNow + 30);

  auto as_of = [&](const std::string& query, int64_t tx) {
    RecallRequest request;
    request.query = query;
    request.as_of_unix_ms = tx;
    return Keys(recaller_->Recall(request));
  };
  EXPECT_THAT(as_of("heron", kNow - 1), IsEmpty());
  EXPECT_THAT(as_of("heron", kNow), ElementsAre("k"));
  EXPECT_THAT(as_of("heron", kNow + 9), ElementsAre("k"));
  EXPECT_THAT(as_of("heron", kNow + 10), IsEmpty());
  EXPECT_THAT(as_of("egret", kNow + 10), ElementsAre("k"));
  EXPECT_THAT(as_of("heron", kNow + 20), ElementsAre("late"));
  EXPECT_THAT(as_of("heron", kNow + 29), ElementsAre("late"));
  EXPECT_THAT(as_of("heron", kNow + 30), IsEmpty());
  EXPECT_THAT(as_of("", kNow + 25), UnorderedElementsAre("k", "late"));
}

TEST_F(RecallerTest, ValidAtWalksNewestRecordedFirst) {
  // Out-of-order arrival: "falcon" [100, inf) then "kestrel" [0, 100) recorded later.
  Put({.key = "bird", .body_json = R"("falcon")", .valid_from = kNow + 100, .recorded_at = kNow});
  Put({.key = "bird",
       .body_json = R"("kestrel")",
       .valid_from = kNow,
       .valid_to = kNow + 100,
       .recorded_at = kNow + 1});
  // Closing: "wolf" [0, inf) is closed at 50 by "bear" [50, inf) recorded later.
  Put({.key = "animal", .body_json = R"("wolf")", .valid_from = kNow, .recorded_at = kNow});
  Put({.key = "animal",
       .body_json = R"("bear")",
       .valid_from = kNow + 50,
       .recorded_at = kNow + 1});

  auto valid_at = [&](const std::string& query, int64_t v) {
    RecallRequest request;
    request.query = query;
    request.valid_at_unix_ms = v;
    return Keys(recaller_->Recall(request));
  };
  EXPECT_THAT(valid_at("kestrel", kNow + 50), ElementsAre("bird"));
  EXPECT_THAT(valid_at("falcon", kNow + 50), IsEmpty());
  EXPECT_THAT(valid_at("falcon", kNow + 150), ElementsAre("bird"));
  EXPECT_THAT(valid_at("kestrel", kNow + 150), IsEmpty());
  EXPECT_THAT(valid_at("wolf", kNow + 49), ElementsAre("animal"));
  EXPECT_THAT(valid_at("wolf", kNow + 50), IsEmpty());
  EXPECT_THAT(valid_at("bear", kNow + 50), ElementsAre("animal"));
  EXPECT_THAT(valid_at("wolf", kNow - 1), IsEmpty());
}

TEST_F(RecallerTest, ValidAtWithAsOfIsBitemporal) {
  Put({.key = "s", .body_json = R"("green")", .valid_from = kNow - 100, .recorded_at = kNow});
  Put({.key = "s", .body_json = R"("amber")", .valid_from = kNow - 100, .recorded_at = kNow + 10});
  RecallRequest request;
  request.valid_at_unix_ms = kNow - 50;
  request.query = "green";
  request.as_of_unix_ms = kNow + 5;
  EXPECT_THAT(Keys(recaller_->Recall(request)), ElementsAre("s"));
  request.as_of_unix_ms = std::nullopt;
  EXPECT_THAT(Keys(recaller_->Recall(request)), IsEmpty());
  request.query = "amber";
  EXPECT_THAT(Keys(recaller_->Recall(request)), ElementsAre("s"));
  request.as_of_unix_ms = kNow + 5;
  EXPECT_THAT(Keys(recaller_->Recall(request)), IsEmpty());
}

TEST_F(RecallerTest, ValidAtIgnoresBeliefsEndedByARetraction) {
  Put({.key = "gone", .body_json = R"("puffin")", .valid_from = kNow - 100, .recorded_at = kNow});
  Retract("gone", kNow + 5);
  RecallRequest request;
  request.query = "puffin";
  request.valid_at_unix_ms = kNow;
  EXPECT_THAT(Keys(recaller_->Recall(request)), IsEmpty());
  request.as_of_unix_ms = kNow + 4;
  EXPECT_THAT(Keys(recaller_->Recall(request)), ElementsAre("gone"));
}

TEST_F(RecallerTest, ValidAtOffsetCountsOnlyWinners) {
  for (int i = 0; i < 4; ++i) {
    const std::string key = absl::StrCat("k", i);
    Put({.key = key, .body_json = R"("moth old")", .valid_from = kNow - 100, .recorded_at = kNow});
    Put({.key = key,
         .body_json = R"("moth new")",
         .valid_from = kNow - 50,
         .recorded_at = kNow + 1});
  }
  RecallRequest request;
  request.query = "moth";
  request.valid_at_unix_ms = kNow;
  request.limit = 3;
  ASSERT_OK_AND_ASSIGN(const RecallResult first, recaller_->Recall(request));
  ASSERT_EQ(first.items.size(), 3u);
  for (size_t i = 0; i < first.items.size(); ++i) {
    EXPECT_EQ(first.items[i].version.body_json, R"("moth new")");
    EXPECT_EQ(first.items[i].fts5_rank, static_cast<int>(i) + 1);
  }
  request.offset = 3;
  ASSERT_OK_AND_ASSIGN(const RecallResult rest, recaller_->Recall(request));
  ASSERT_EQ(rest.items.size(), 1u);
  EXPECT_EQ(rest.items[0].fts5_rank, 4);
  std::vector<std::string> all = Keys(first);
  all.push_back(rest.items[0].version.identity.key);
  EXPECT_THAT(all, UnorderedElementsAre("k0", "k1", "k2", "k3"));
}

}  // namespace
}  // namespace strata::recall
