// Near-duplicate detection through the public API (docs/design.md §4): a new key whose body is a
// near-duplicate of a current memory of the same category and workspace, and adds nothing to
// it, is merged into it and becomes an alias; one that adds something is written and names
// what it resembles; updates never merge; forget, purge and rebuilds keep the signatures right.
// On a SQLite file and on a PostgreSQL database (temporal/engines.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dedup/content.h"
#include "dedup/signature.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/engines.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/body_text.h"
#include "util/clock.h"

namespace strata {
namespace {

using ::strata::testing::IsOkAndHolds;
using ::strata::testing::StatusIs;
using ::testing::_;
using ::testing::AllOf;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::Ge;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Lt;
using ::testing::Pair;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int64_t kMinute = 60 * 1000;

// A memory's text, a rewording of it that adds nothing (0.86 similar: filler words added, a
// pronoun dropped), a correction of one word (0.92 similar), and an unrelated text.
constexpr char kDeploy[] =
    "Deploys to production go through the staging cluster first and need a green integration "
    "run before the release manager approves them.";
constexpr char kDeployNear[] =
    "Deploys to production really go through the staging cluster first and also need a green "
    "integration run before the release manager approves.";
constexpr char kDeployCorrected[] =
    "Deploys to production go through the staging cluster first and need a red integration "
    "run before the release manager approves them.";
constexpr char kUnrelated[] =
    "Alice prefers dark mode in every editor and turns off notifications during focus time.";

// A JSON string holding `text` (which has no characters to escape).
std::string Json(std::string_view text) {
  std::string out = "\"";
  out.append(text);
  out.push_back('"');
  return out;
}

// The similarity the store reports between two texts.
// The similarity dedup computes for two bodies stored as JSON strings of these texts: over
// their normal JSON, quotes included.
double Similarity(std::string_view a, std::string_view b) {
  return dedup::Jaccard(dedup::Trigrams("\"" + std::string(a) + "\""),
                        dedup::Trigrams("\"" + std::string(b) + "\""));
}

Identity Id(std::string key, std::string category = "facts", std::string workspace = "") {
  return {
      .category = std::move(category), .key = std::move(key), .workspace = std::move(workspace)};
}

WriteRequest Req(const Identity& identity, std::string body_json, bool dedup = true) {
  WriteRequest request;
  request.identity = identity;
  request.body_json = std::move(body_json);
  request.dedup = dedup;
  return request;
}

// The action of a write, by name: failures say "deduped", not an enum's bytes.
std::string Action(const WriteResult& result) { return WriteActionName(result.action); }

// The body a time-axis read found, "<none>" when it found nothing, or the error.
std::string Found(const absl::StatusOr<std::optional<Version>>& found) {
  if (!found.ok()) return absl::StrCat("<error: ", found.status().ToString(), ">");
  return found->has_value() ? (*found)->body_json : "<none>";
}

class DedupTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    path_ = temporal::testing::NewStorePath(GetParam(), dir_);
    ASSERT_FALSE(path_.empty());
    ASSERT_GE(Similarity(kDeploy, kDeployNear), 0.70);
    ASSERT_LT(Similarity(kDeploy, kDeployNear), 0.95);
    ASSERT_NO_FATAL_FAILURE(OpenStore());
  }

  void OpenStore(double threshold = 0.70) {
    store_.reset();
    ASSERT_OK_AND_ASSIGN(
        store_, Store::Open({.path = path_, .clock = &clock_, .dedup_threshold = threshold}));
  }

  // Remembers (a minute after the previous write) and returns the result; fails the test on
  // error.
  WriteResult Write(const Identity& identity, std::string_view text, bool dedup = true) {
    clock_.Advance(kMinute);
    absl::StatusOr<WriteResult> result = store_->Remember(Req(identity, Json(text), dedup));
    EXPECT_OK(result);
    return result.ok() ? *result : WriteResult{};
  }

  Stats GetStats() {
    absl::StatusOr<Stats> stats = store_->GetStats();
    EXPECT_OK(stats);
    return stats.ok() ? *stats : Stats{};
  }

  // Runs `sql` on a second connection to the store.
  absl::Status ExecElsewhere(std::string_view sql) {
    absl::StatusOr<std::unique_ptr<store::Db>> db = temporal::testing::Connect(GetParam(), path_);
    if (!db.ok()) return db.status();
    return (*db)->Exec(sql);
  }

  // The band keys indexed for `memory_id`, read on a second connection (dedup_keys holds them
  // as 8-byte little-endian integers).
  absl::StatusOr<std::set<int64_t>> BandKeysOf(int64_t memory_id) {
    absl::StatusOr<std::unique_ptr<store::Db>> db = temporal::testing::Connect(GetParam(), path_);
    if (!db.ok()) return db.status();
    absl::StatusOr<store::Stmt> s =
        (*db)->Prepare("SELECT keys FROM dedup_keys WHERE memory_id = ?1");
    if (!s.ok()) return s.status();
    s->Bind(1, memory_id);
    std::set<int64_t> keys;
    absl::StatusOr<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return keys;
    const std::string_view blob = s->Blob(0);
    EXPECT_EQ(blob.size() % 8, 0u);
    for (size_t i = 0; i + 8 <= blob.size(); i += 8) {
      uint64_t key = 0;
      for (int b = 7; b >= 0; --b) key = key << 8 | static_cast<unsigned char>(blob[i + b]);
      keys.insert(static_cast<int64_t>(key));
    }
    return keys;
  }

  absl::StatusOr<int64_t> CountBandRows() {
    absl::StatusOr<std::unique_ptr<store::Db>> db = temporal::testing::Connect(GetParam(), path_);
    if (!db.ok()) return db.status();
    absl::StatusOr<store::Stmt> s =
        (*db)->Prepare("SELECT COALESCE(SUM(length(keys)), 0) / 8 FROM dedup_keys");
    if (!s.ok()) return s.status();
    absl::StatusOr<bool> row = s->Step();
    if (!row.ok()) return row.status();
    return s->Int(0);
  }

  strata::testing::TempDir dir_;
  std::string path_;
  FakeClock clock_{kNow};
  std::unique_ptr<Store> store_;
};

// The band keys the store indexes a body under in `identity`'s scope.
std::set<int64_t> ExpectedKeys(const Identity& identity, std::string_view body_json) {
  absl::StatusOr<text::ParsedBody> body = text::ParseBody(body_json);
  EXPECT_OK(body);
  if (!body.ok()) return {};
  const std::vector<int64_t> keys =
      dedup::BandKeys(dedup::Analyze(*body), body->normal_hash,
                      dedup::ScopeHash(identity.category, identity.workspace));
  return {keys.begin(), keys.end()};
}

// ---------------------------------------------------------------------------------------------
// Merging

TEST_P(DedupTest, NearDuplicateOfANewKeyIsMergedIntoTheCurrentVersion) {
  const Identity deploy = Id("deploy.process");
  const WriteResult first = Write(deploy, "Deploys go out on Fridays.");
  ASSERT_EQ(Action(first), "created");
  ASSERT_EQ(Action(Write(deploy, kDeploy)), "updated");

  const WriteResult merged = Write(Id("deploy.rules"), kDeployNear);
  EXPECT_EQ(Action(merged), "deduped");
  EXPECT_EQ(merged.version.memory_id, first.version.memory_id);
  EXPECT_EQ(merged.version.identity.key, "deploy.process");
  EXPECT_EQ(merged.version.identity.category, "facts");
  EXPECT_EQ(merged.version.version, 2);
  EXPECT_EQ(merged.version.body_json, Json(kDeploy));
  ASSERT_TRUE(merged.similarity.has_value());
  EXPECT_THAT(*merged.similarity, AllOf(Ge(0.70), Lt(1.0)));
  EXPECT_DOUBLE_EQ(*merged.similarity, Similarity(kDeploy, kDeployNear));

  const Stats stats = GetStats();
  EXPECT_EQ(stats.total_memories, 1);
  EXPECT_EQ(stats.versions, 2);
  EXPECT_EQ(stats.dedup.aliases, 1);
}

TEST_P(DedupTest, CreatedAndUpdatedWritesHaveNoSimilarity) {
  EXPECT_EQ(Write(Id("deploy"), kDeploy).similarity, std::nullopt);
  EXPECT_EQ(Write(Id("deploy"), kUnrelated).similarity, std::nullopt);
}

TEST_P(DedupTest, ExactDuplicateIsMergedWithSimilarityOne) {
  // The same object with its keys in another order and other spacing: the same content.
  ASSERT_OK_AND_ASSIGN(
      const WriteResult first,
      store_->Remember(
          Req(Id("oncall"),
              R"({"team": "infra", "rota": "weekly, Mondays, handover at nine in room 4"})")));
  ASSERT_OK_AND_ASSIGN(
      const WriteResult second,
      store_->Remember(
          Req(Id("oncall.copy"),
              R"({"rota":"weekly, Mondays, handover at nine in room 4","team":"infra"})")));
  EXPECT_EQ(Action(second), "deduped");
  EXPECT_EQ(second.version.memory_id, first.version.memory_id);
  EXPECT_EQ(second.similarity, 1.0);
}

TEST_P(DedupTest, AShortBodyIsNeverMergedAcrossKeysEvenWhenIdentical) {
  // {"n": 1} under two keys is two facts: the key says whose.
  ASSERT_OK_AND_ASSIGN(const WriteResult a, store_->Remember(Req(Id("n1"), R"({"n": 1})")));
  ASSERT_OK_AND_ASSIGN(const WriteResult b, store_->Remember(Req(Id("n2"), R"({ "n" : 1 })")));
  ASSERT_OK_AND_ASSIGN(const WriteResult c, store_->Remember(Req(Id("n3"), R"({"n": 2})")));
  EXPECT_EQ(Action(a), "created");
  EXPECT_EQ(Action(b), "created");
  EXPECT_NE(b.version.memory_id, a.version.memory_id);
  ASSERT_EQ(b.similar.size(), 1u);
  EXPECT_EQ(b.similar[0].memory_id, a.version.memory_id);
  EXPECT_EQ(b.similar[0].identity.key, "n1");
  EXPECT_EQ(b.similar[0].similarity, 1.0);
  EXPECT_EQ(Action(c), "created");
}

TEST_P(DedupTest, TheSameAttributeUnderTwoSubjectsStaysTwoMemories) {
  const Identity alice = Id("alice", "hr");
  const Identity bob = Id("bob", "hr");
  ASSERT_OK_AND_ASSIGN(const WriteResult a,
                       store_->Remember(Req(alice, R"({"title": "senior engineer"})")));
  ASSERT_OK_AND_ASSIGN(const WriteResult b,
                       store_->Remember(Req(bob, R"({"title": "senior engineer"})")));
  EXPECT_EQ(Action(b), "created");
  EXPECT_NE(b.version.memory_id, a.version.memory_id);
  ASSERT_EQ(b.similar.size(), 1u);
  EXPECT_EQ(b.similar[0].identity.key, "alice");

  clock_.Advance(kMinute);
  ASSERT_OK_AND_ASSIGN(const WriteResult promoted,
                       store_->Remember(Req(alice, R"({"title": "staff engineer"})")));
  EXPECT_EQ(Action(promoted), "updated");
  ASSERT_OK_AND_ASSIGN(const Version got_bob, store_->Get(bob));
  EXPECT_EQ(got_bob.body_json, R"({"title": "senior engineer"})");
  ASSERT_OK_AND_ASSIGN(const Version got_alice, store_->Get(alice));
  EXPECT_EQ(got_alice.body_json, R"({"title": "staff engineer"})");
  EXPECT_EQ(GetStats().dedup.aliases, 0);
}

TEST_P(DedupTest, AOneWordCorrectionUnderANewKeyIsWrittenAndNamesTheOldMemory) {
  const WriteResult first = Write(Id("maria-lang", "people"),
                                  "Maria leads the storage team and prefers Go for new services");
  const WriteResult second =
      Write(Id("maria-lang-2", "people"),
            "Maria leads the storage team and prefers Rust for new services");
  EXPECT_EQ(Action(second), "created");
  EXPECT_NE(second.version.memory_id, first.version.memory_id);
  EXPECT_EQ(second.similarity, std::nullopt);
  ASSERT_EQ(second.similar.size(), 1u);
  EXPECT_EQ(second.similar[0].memory_id, first.version.memory_id);
  EXPECT_EQ(second.similar[0].identity.category, "people");
  EXPECT_EQ(second.similar[0].identity.key, "maria-lang");
  EXPECT_THAT(second.similar[0].similarity, AllOf(Ge(0.70), Lt(1.0)));

  RecallRequest query;
  query.query = "Rust";
  query.mode = RecallMode::kFts5;
  ASSERT_OK_AND_ASSIGN(const RecallResult found, store_->Recall(query));
  ASSERT_EQ(found.items.size(), 1u);
  EXPECT_EQ(found.items[0].version.identity.key, "maria-lang-2");
}

TEST_P(DedupTest, ACorrectedWordIsWrittenAndAReworderingIsMerged) {
  const WriteResult first = Write(Id("deploy"), kDeploy);
  const WriteResult corrected = Write(Id("deploy.red"), kDeployCorrected);
  EXPECT_EQ(Action(corrected), "created");
  ASSERT_EQ(corrected.similar.size(), 1u);
  EXPECT_EQ(corrected.similar[0].memory_id, first.version.memory_id);
  const WriteResult reworded = Write(Id("deploy.again"), kDeployNear);
  EXPECT_EQ(Action(reworded), "deduped");
  EXPECT_EQ(reworded.version.memory_id, first.version.memory_id);
  EXPECT_THAT(reworded.similar, IsEmpty());
}

TEST_P(DedupTest, AddingOrDroppingANegationIsNeverMerged) {
  const WriteResult first =
      Write(Id("cache"), "The cache is warmed at startup and flushed every night at two");
  const WriteResult negated =
      Write(Id("cache.not"), "The cache is not warmed at startup and flushed every night at two");
  EXPECT_EQ(Action(negated), "created");
  const WriteResult dropped =
      Write(Id("cache.again"), "The cache is warmed at startup and flushed every night at two.");
  EXPECT_EQ(Action(dropped), "deduped");
  EXPECT_EQ(dropped.version.memory_id, first.version.memory_id);
  // Against the negated memory alone, dropping its "not" is not a rewording.
  const WriteResult other_scope =
      Write(Id("n", "notes"), "The cache is not warmed at startup and flushed every night at two");
  ASSERT_EQ(Action(other_scope), "created");
  const WriteResult undone =
      Write(Id("n2", "notes"), "The cache is warmed at startup and flushed every night at two");
  EXPECT_EQ(Action(undone), "created");
  ASSERT_EQ(undone.similar.size(), 1u);
  EXPECT_EQ(undone.similar[0].memory_id, other_scope.version.memory_id);
}

TEST_P(DedupTest, BodiesThatAreNotNearDuplicatesAreNotMergedForSharingTheirStrings) {
  // docs/design.md §4 merges a body that is a near-duplicate (trigram Jaccard >= 0.70). These two
  // bodies are 0.60 similar as bodies; only their one string value ("alice") is the same.
  const std::string monday = R"({"user":"alice","balance":1200,"limit":5000,"overdraft":false})";
  const std::string tuesday = R"({"user":"alice","balance":-350,"limit":0,"overdraft":true})";
  ASSERT_LT(Similarity(monday, tuesday), 0.70);
  ASSERT_OK(store_->Remember(Req(Id("account.monday"), monday)));
  ASSERT_OK_AND_ASSIGN(const WriteResult second,
                       store_->Remember(Req(Id("account.tuesday"), tuesday)));
  EXPECT_EQ(Action(second), "created") << "similarity " << second.similarity.value_or(-1);
  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("account.tuesday")));
  EXPECT_EQ(got.body_json, tuesday);
}

TEST_P(DedupTest, ReadsByTheAliasFindTheMergedMemory) {
  const Identity deploy = Id("deploy.process");
  const Identity alias = Id("deploy.rules");
  const WriteResult first = Write(deploy, kDeploy);
  ASSERT_EQ(Action(Write(alias, kDeployNear)), "deduped");
  const int64_t now = clock_.NowUnixMs();

  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(alias));
  EXPECT_EQ(got.memory_id, first.version.memory_id);
  EXPECT_EQ(got.identity.key, "deploy.process");
  EXPECT_EQ(got.body_json, Json(kDeploy));

  ASSERT_OK_AND_ASSIGN(const HistoryPage history, store_->History(alias, 10, 0));
  EXPECT_EQ(history.total, 1);
  ASSERT_EQ(history.versions.size(), 1u);
  EXPECT_EQ(history.versions[0].memory_id, first.version.memory_id);

  EXPECT_EQ(Found(store_->AsOf(alias, now)), Json(kDeploy));
  EXPECT_EQ(Found(store_->ValidAt(alias, now)), Json(kDeploy));
  EXPECT_EQ(Found(store_->Bitemporal(alias, now, now)), Json(kDeploy));
  // Before the merged memory was written, nothing was believed.
  EXPECT_EQ(Found(store_->AsOf(alias, kNow - 1)), "<none>");
}

TEST_P(DedupTest, RecallReturnsTheMergedMemoryOnce) {
  Write(Id("deploy.process"), kDeploy);
  ASSERT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "deduped");
  Write(Id("alice.editor"), kUnrelated);

  RecallRequest request;
  request.query = "staging cluster integration run";
  request.mode = RecallMode::kFts5;
  ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(request));
  std::vector<std::string> keys;
  for (const RecallItem& item : result.items) keys.push_back(item.version.identity.key);
  EXPECT_THAT(keys, ElementsAre("deploy.process"));
}

TEST_P(DedupTest, DedupFalseStoresASecondMemory) {
  const WriteResult first = Write(Id("deploy.process"), kDeploy);
  const WriteResult second = Write(Id("deploy.rules"), kDeployNear, /*dedup=*/false);
  EXPECT_EQ(Action(second), "created");
  EXPECT_NE(second.version.memory_id, first.version.memory_id);
  EXPECT_EQ(second.similarity, std::nullopt);
  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("deploy.rules")));
  EXPECT_EQ(got.body_json, Json(kDeployNear));

  const Stats stats = GetStats();
  EXPECT_EQ(stats.active_memories, 2);
  EXPECT_EQ(stats.dedup.aliases, 0);
  EXPECT_EQ(stats.dedup.merges, 0);
  EXPECT_EQ(stats.dedup.checks, 1);  // Only the first write was checked.
}

TEST_P(DedupTest, ANearDuplicateOfAMemoryStoredWithDedupFalseIsMerged) {
  // dedup=false skips the check, not the index: the memory is a merge target afterwards.
  const WriteResult first = Write(Id("deploy.process"), kDeploy, /*dedup=*/false);
  const WriteResult second = Write(Id("deploy.rules"), kDeployNear);
  EXPECT_EQ(Action(second), "deduped");
  EXPECT_EQ(second.version.memory_id, first.version.memory_id);
}

// ---------------------------------------------------------------------------------------------
// Scope

TEST_P(DedupTest, SameBodyInAnotherCategoryIsNotMerged) {
  const WriteResult first = Write(Id("deploy", "facts"), kDeploy);
  const WriteResult second = Write(Id("deploy.copy", "procedures"), kDeploy);
  EXPECT_EQ(Action(second), "created");
  EXPECT_NE(second.version.memory_id, first.version.memory_id);
  EXPECT_EQ(Action(Write(Id("deploy.near", "procedures"), kDeployNear)), "deduped");
}

TEST_P(DedupTest, SameBodyInAnotherWorkspaceIsNotMerged) {
  const WriteResult first = Write(Id("deploy", "facts", ""), kDeploy);
  const WriteResult second = Write(Id("deploy.copy", "facts", "team-a"), kDeploy);
  const WriteResult third = Write(Id("deploy.copy", "facts", "team-b"), kDeploy);
  EXPECT_EQ(Action(second), "created");
  EXPECT_EQ(Action(third), "created");
  EXPECT_EQ(std::set<int64_t>(
                {first.version.memory_id, second.version.memory_id, third.version.memory_id})
                .size(),
            3u);
  const WriteResult fourth = Write(Id("deploy.near", "facts", "team-a"), kDeployNear);
  EXPECT_EQ(Action(fourth), "deduped");
  EXPECT_EQ(fourth.version.memory_id, second.version.memory_id);
}

// ---------------------------------------------------------------------------------------------
// Updates

TEST_P(DedupTest, UpdatesOfAnExistingKeyNeverDedup) {
  const WriteResult deploy = Write(Id("deploy.process"), kDeploy);
  const WriteResult other = Write(Id("other"), kUnrelated);
  const WriteResult updated = Write(Id("other"), kDeployNear);
  EXPECT_EQ(Action(updated), "updated");
  EXPECT_EQ(updated.version.memory_id, other.version.memory_id);
  EXPECT_EQ(updated.version.version, 2);
  EXPECT_EQ(updated.similarity, std::nullopt);

  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("other")));
  EXPECT_EQ(got.body_json, Json(kDeployNear));
  ASSERT_OK_AND_ASSIGN(const Version kept, store_->Get(Id("deploy.process")));
  EXPECT_EQ(kept.body_json, Json(kDeploy));
  const Stats stats = GetStats();
  EXPECT_EQ(stats.dedup.aliases, 0);
  EXPECT_EQ(stats.dedup.checks, 2);
  EXPECT_NE(deploy.version.memory_id, other.version.memory_id);
}

TEST_P(DedupTest, AForgottenKeyWrittenAgainIsNotMerged) {
  const WriteResult deploy = Write(Id("deploy.process"), kDeploy);
  const WriteResult other = Write(Id("other"), kUnrelated);
  ASSERT_OK_AND_ASSIGN(const bool forgotten, store_->Forget(Id("other"), "stale"));
  ASSERT_TRUE(forgotten);
  const WriteResult again = Write(Id("other"), kDeployNear);
  EXPECT_EQ(Action(again), "updated");
  EXPECT_EQ(again.version.memory_id, other.version.memory_id);
  EXPECT_NE(again.version.memory_id, deploy.version.memory_id);
}

TEST_P(DedupTest, SignatureRowsFollowTheCurrentVersion) {
  const Identity id = Id("note");
  const std::string first = R"({"what": "deploy", "how": ["through staging", "then prod"]})";
  const std::string second = R"({"what": "rollback", "how": ["revert the tag"], "n": 3})";
  ASSERT_OK_AND_ASSIGN(const WriteResult created, store_->Remember(Req(id, first)));
  EXPECT_THAT(BandKeysOf(created.version.memory_id), IsOkAndHolds(ExpectedKeys(id, first)));
  clock_.Advance(kMinute);
  ASSERT_OK(store_->Remember(Req(id, second)));
  EXPECT_THAT(BandKeysOf(created.version.memory_id), IsOkAndHolds(ExpectedKeys(id, second)));
  ASSERT_OK(store_->Forget(id, ""));
  EXPECT_THAT(BandKeysOf(created.version.memory_id), IsOkAndHolds(IsEmpty()));
}

// ---------------------------------------------------------------------------------------------
// Forget and purge

TEST_P(DedupTest, AForgottenMemoryIsNoLongerAMergeTarget) {
  const WriteResult first = Write(Id("deploy.process"), kDeploy);
  ASSERT_OK_AND_ASSIGN(const bool forgotten, store_->Forget(Id("deploy.process"), "obsolete"));
  ASSERT_TRUE(forgotten);
  const WriteResult second = Write(Id("deploy.rules"), kDeployNear);
  EXPECT_EQ(Action(second), "created");
  EXPECT_NE(second.version.memory_id, first.version.memory_id);
}

TEST_P(DedupTest, ForgettingAnAliasRemovesOnlyTheAlias) {
  const Identity alias = Id("deploy.rules");
  const WriteResult first = Write(Id("deploy.process"), kDeploy);
  ASSERT_EQ(Action(Write(alias, kDeployNear)), "deduped");

  EXPECT_THAT(store_->Forget(alias, "merged by mistake"), IsOkAndHolds(true));
  EXPECT_THAT(store_->Get(alias), StatusIs(absl::StatusCode::kNotFound, _));
  ASSERT_OK_AND_ASSIGN(const Version kept, store_->Get(Id("deploy.process")));
  EXPECT_EQ(kept.memory_id, first.version.memory_id);
  ASSERT_OK_AND_ASSIGN(const HistoryPage history, store_->History(Id("deploy.process"), 10, 0));
  EXPECT_THAT(history.retracted_at_unix_ms, IsEmpty());
  EXPECT_EQ(GetStats().dedup.aliases, 0);
  EXPECT_THAT(store_->Forget(alias, ""), IsOkAndHolds(false));
  // The memory is still a merge target.
  EXPECT_EQ(Action(Write(Id("deploy.again"), kDeployNear)), "deduped");
}

TEST_P(DedupTest, PurgeRemovesTheSignatures) {
  const WriteResult first = Write(Id("deploy.process"), kDeploy);
  EXPECT_THAT(store_->Purge(Id("deploy.process")), IsOkAndHolds(1));
  EXPECT_THAT(BandKeysOf(first.version.memory_id), IsOkAndHolds(IsEmpty()));
  const WriteResult second = Write(Id("deploy.rules"), kDeployNear);
  EXPECT_EQ(Action(second), "created");
}

TEST_P(DedupTest, PurgeRemovesTheAliasesOfThePurgedMemory) {
  Write(Id("deploy.process"), kDeploy);
  ASSERT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "deduped");
  ASSERT_EQ(Action(Write(Id("deploy.copy"), kDeploy)), "deduped");
  ASSERT_EQ(GetStats().dedup.aliases, 2);

  EXPECT_THAT(store_->Purge(Id("deploy.process")), IsOkAndHolds(1));
  EXPECT_THAT(store_->Get(Id("deploy.rules")), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_THAT(store_->Get(Id("deploy.copy")), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_EQ(GetStats().dedup.aliases, 0);
}

TEST_P(DedupTest, PurgingAnAliasRemovesOnlyTheAlias) {
  const WriteResult first = Write(Id("deploy.process"), kDeploy);
  ASSERT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "deduped");
  EXPECT_THAT(store_->Purge(Id("deploy.rules")), IsOkAndHolds(0));
  EXPECT_THAT(store_->Get(Id("deploy.rules")), StatusIs(absl::StatusCode::kNotFound, _));
  ASSERT_OK_AND_ASSIGN(const Version kept, store_->Get(Id("deploy.process")));
  EXPECT_EQ(kept.memory_id, first.version.memory_id);
  EXPECT_EQ(GetStats().dedup.aliases, 0);
}

// ---------------------------------------------------------------------------------------------
// Writing to an alias key

TEST_P(DedupTest, WritingAnotherBodyToAnAliasKeyMakesItAMemoryOfItsOwn) {
  const WriteResult first = Write(Id("deploy.process"), kDeploy);
  ASSERT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "deduped");

  const WriteResult own = Write(Id("deploy.rules"), kUnrelated);
  EXPECT_EQ(Action(own), "created");
  EXPECT_NE(own.version.memory_id, first.version.memory_id);
  EXPECT_EQ(own.version.identity.key, "deploy.rules");
  EXPECT_EQ(own.version.version, 1);
  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("deploy.rules")));
  EXPECT_EQ(got.body_json, Json(kUnrelated));
  ASSERT_OK_AND_ASSIGN(const Version kept, store_->Get(Id("deploy.process")));
  EXPECT_EQ(kept.body_json, Json(kDeploy));
  EXPECT_EQ(GetStats().dedup.aliases, 0);
}

TEST_P(DedupTest, WritingADuplicateToAnAliasKeyWithDedupFalseMakesItAMemoryOfItsOwn) {
  const WriteResult first = Write(Id("deploy.process"), kDeploy);
  ASSERT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "deduped");
  const WriteResult own = Write(Id("deploy.rules"), kDeployNear, /*dedup=*/false);
  EXPECT_EQ(Action(own), "created");
  EXPECT_NE(own.version.memory_id, first.version.memory_id);
  EXPECT_EQ(GetStats().dedup.aliases, 0);
}

// ---------------------------------------------------------------------------------------------
// Batches

TEST_P(DedupTest, BatchMergesANearDuplicateWithinTheBatchAndABadItemFailsAlone) {
  const std::vector<WriteRequest> requests = {
      Req(Id("deploy.process"), Json(kDeploy)),
      Req(Id(""), Json(kUnrelated)),
      Req(Id("deploy.rules"), Json(kDeployNear)),
      Req(Id("alice.editor"), Json(kUnrelated)),
  };
  ASSERT_OK_AND_ASSIGN(const auto results, store_->RememberBatch(requests, {}));
  ASSERT_EQ(results.size(), requests.size());
  ASSERT_OK(results[0]);
  EXPECT_EQ(Action(*results[0]), "created");
  EXPECT_THAT(results[1], StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key")));
  ASSERT_OK(results[2]);
  EXPECT_EQ(Action(*results[2]), "deduped");
  EXPECT_EQ(results[2]->version.memory_id, results[0]->version.memory_id);
  EXPECT_THAT(results[2]->similarity,
              ::testing::Optional(DoubleEq(Similarity(kDeploy, kDeployNear))));
  ASSERT_OK(results[3]);
  EXPECT_EQ(Action(*results[3]), "created");

  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("deploy.rules")));
  EXPECT_EQ(got.memory_id, results[0]->version.memory_id);
  const Stats stats = GetStats();
  EXPECT_EQ(stats.total_memories, 2);
  EXPECT_EQ(stats.dedup.aliases, 1);
  EXPECT_EQ(stats.dedup.merges, 1);
}

// ---------------------------------------------------------------------------------------------
// The threshold

TEST_P(DedupTest, AThresholdAboveTheSimilarityKeepsBothMemories) {
  ASSERT_NO_FATAL_FAILURE(OpenStore(0.95));
  EXPECT_EQ(GetStats().dedup.threshold, 0.95);
  Write(Id("deploy.process"), kDeploy);
  EXPECT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "created");
  // Exact duplicates are still merged.
  EXPECT_EQ(Action(Write(Id("deploy.copy"), kDeploy)), "deduped");
}

TEST_P(DedupTest, AThresholdBelowTheSimilarityMerges) {
  ASSERT_NO_FATAL_FAILURE(OpenStore(0.5));
  EXPECT_EQ(GetStats().dedup.threshold, 0.5);
  Write(Id("deploy.process"), kDeploy);
  EXPECT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "deduped");
}

TEST_P(DedupTest, AThresholdOfOneMergesOnlyTheSameText) {
  ASSERT_NO_FATAL_FAILURE(OpenStore(1.0));
  Write(Id("deploy.process"), kDeploy);
  EXPECT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "created");
  EXPECT_EQ(Action(Write(Id("deploy.copy"), kDeploy)), "deduped");
}

TEST_P(DedupTest, AThresholdOutsideZeroToOneIsRejected) {
  for (double threshold : {0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(threshold);
    EXPECT_THAT(
        Store::Open(
            {.path = dir_.File("other.db"), .clock = &clock_, .dedup_threshold = threshold}),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dedup_threshold")));
  }
}

// ---------------------------------------------------------------------------------------------
// Stats

TEST_P(DedupTest, StatsStartAtZero) {
  const Stats stats = GetStats();
  EXPECT_EQ(stats.dedup.threshold, 0.70);
  EXPECT_TRUE(stats.dedup.signatures_complete);
  EXPECT_EQ(stats.dedup.aliases, 0);
  EXPECT_EQ(stats.dedup.checks, 0);
  EXPECT_EQ(stats.dedup.candidates_verified, 0);
  EXPECT_EQ(stats.dedup.merges, 0);
  EXPECT_THAT(stats.dedup.candidates_histogram, IsEmpty());
}

TEST_P(DedupTest, StatsCountChecksCandidatesMergesAndAliases) {
  const std::vector<std::string> actions = {
      Action(Write(Id("deploy.process"), kDeploy)),                     // Checked: none.
      Action(Write(Id("deploy.rules"), kDeployNear)),                   // Checked: 1.
      Action(Write(Id("alice.editor"), kUnrelated)),                    // Checked: none.
      Action(Write(Id("deploy.other"), kDeployNear, /*dedup=*/false)),  // Not checked.
      Action(Write(Id("alice.editor"), "Alice uses light mode now.")),  // Not checked.
      Action(Write(Id("alice.editor"), "Alice uses light mode now.")),  // Not checked.
      Action(Write(Id("deploy.copy"), kDeploy)),                        // Checked: 2.
  };
  ASSERT_THAT(actions, ElementsAre("created", "deduped", "created", "created", "updated",
                                   "unchanged", "deduped"));

  const Stats stats = GetStats();
  EXPECT_EQ(stats.dedup.checks, 4);
  EXPECT_EQ(stats.dedup.candidates_verified, 3);
  EXPECT_EQ(stats.dedup.merges, 2);
  EXPECT_EQ(stats.dedup.aliases, 2);
  EXPECT_THAT(stats.dedup.candidates_histogram, ElementsAre(Pair(0, 2), Pair(1, 1), Pair(2, 1)));
  EXPECT_EQ(stats.active_memories, 3);
}

TEST_P(DedupTest, AliasesAreCountedAcrossReopeningButCountersStartOver) {
  Write(Id("deploy.process"), kDeploy);
  ASSERT_EQ(Action(Write(Id("deploy.rules"), kDeployNear)), "deduped");
  ASSERT_NO_FATAL_FAILURE(OpenStore());
  const Stats stats = GetStats();
  EXPECT_EQ(stats.dedup.aliases, 1);
  EXPECT_EQ(stats.dedup.checks, 0);
  EXPECT_EQ(stats.dedup.merges, 0);
  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("deploy.rules")));
  EXPECT_EQ(got.identity.key, "deploy.process");
}

// ---------------------------------------------------------------------------------------------
// Rebuilding signatures

TEST_P(DedupTest, RebuildSignaturesRestoresMerging) {
  const WriteResult deploy = Write(Id("deploy.process"), kDeploy);
  Write(Id("alice.editor"), kUnrelated);
  Write(Id("forgotten"), "A memory that is forgotten before the rebuild.");
  ASSERT_OK(store_->Forget(Id("forgotten"), ""));
  // Lost (a server reads them once, when it opens).
  ASSERT_OK(ExecElsewhere("DELETE FROM dedup_keys"));
  ASSERT_THAT(CountBandRows(), IsOkAndHolds(0));
  ASSERT_NO_FATAL_FAILURE(OpenStore());

  // Without signatures nothing is found...
  const WriteResult missed = Write(Id("deploy.rules"), kDeployNear);
  EXPECT_EQ(Action(missed), "created");

  // ...until they are rebuilt for every current memory (not the forgotten one).
  EXPECT_THAT(store_->RebuildSignatures(), IsOkAndHolds(3));
  EXPECT_THAT(CountBandRows(), IsOkAndHolds(static_cast<int64_t>(
                                   ExpectedKeys(Id("deploy.process"), Json(kDeploy)).size() +
                                   ExpectedKeys(Id("alice.editor"), Json(kUnrelated)).size() +
                                   ExpectedKeys(Id("deploy.rules"), Json(kDeployNear)).size())));
  EXPECT_THAT(BandKeysOf(deploy.version.memory_id),
              IsOkAndHolds(ExpectedKeys(Id("deploy.process"), Json(kDeploy))));
  const WriteResult merged = Write(Id("deploy.copy"), kDeploy);
  EXPECT_EQ(Action(merged), "deduped");
  EXPECT_EQ(merged.version.memory_id, deploy.version.memory_id);
  EXPECT_EQ(merged.similarity, 1.0);
}

TEST_P(DedupTest, RebuildSignaturesOfAnEmptyStoreIndexesNothing) {
  EXPECT_THAT(store_->RebuildSignatures(), IsOkAndHolds(0));
  EXPECT_THAT(CountBandRows(), IsOkAndHolds(0));
}

TEST_P(DedupTest, AnotherSchemeIsReportedIncompleteUntilRebuilt) {
  Write(Id("deploy.process"), kDeploy);
  store_.reset();
  ASSERT_OK(
      ExecElsewhere("UPDATE meta SET value = 'minhash-words-8x8-v0' WHERE name = 'dedup_scheme'"));

  ASSERT_NO_FATAL_FAILURE(OpenStore());
  EXPECT_FALSE(GetStats().dedup.signatures_complete);
  EXPECT_THAT(store_->RebuildSignatures(), IsOkAndHolds(1));
  EXPECT_TRUE(GetStats().dedup.signatures_complete);
  ASSERT_NO_FATAL_FAILURE(OpenStore());
  EXPECT_TRUE(GetStats().dedup.signatures_complete);
}

TEST_P(DedupTest, AnUnknownSchemeIsReportedIncomplete) {
  // A store from before dedup: memories, no scheme recorded.
  Write(Id("deploy.process"), kDeploy);
  store_.reset();
  ASSERT_OK(ExecElsewhere("DELETE FROM meta WHERE name = 'dedup_scheme'"));
  ASSERT_NO_FATAL_FAILURE(OpenStore());
  EXPECT_FALSE(GetStats().dedup.signatures_complete);
}

TEST_P(DedupTest, AnotherSchemeWithoutCurrentMemoriesIsComplete) {
  Write(Id("forgotten"), kDeploy);
  ASSERT_OK(store_->Forget(Id("forgotten"), ""));
  store_.reset();
  ASSERT_OK(
      ExecElsewhere("UPDATE meta SET value = 'minhash-words-8x8-v0' WHERE name = 'dedup_scheme'"));
  ASSERT_NO_FATAL_FAILURE(OpenStore());
  EXPECT_TRUE(GetStats().dedup.signatures_complete);
  // Stamped with this build's scheme, so it stays complete once it has memories.
  Write(Id("deploy.process"), kDeploy);
  ASSERT_NO_FATAL_FAILURE(OpenStore());
  EXPECT_TRUE(GetStats().dedup.signatures_complete);
}

INSTANTIATE_TEST_SUITE_P(Engines, DedupTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata
