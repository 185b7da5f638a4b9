// Tests of dedup/finder.h and dedup/index.h against a real database, on both engines (a
// SQLite file and a PostgreSQL database, temporal/engines.h): candidates from the band index,
// verified by exact trigram Jaccard, merged into only when the new body adds nothing and
// otherwise listed as similar; the index's ordering and cap; aliases; the stored signature
// scheme.

#include "dedup/finder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "dedup/content.h"
#include "dedup/index.h"
#include "dedup/signature.h"
#include "store/db.h"
#include "store/schema.h"
#include "temporal/engines.h"
#include "temporal/version_table.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/body_text.h"
#include "text/fts5_extensions.h"
#include "util/status_macros.h"

namespace strata::dedup {

// For failure messages.
void PrintTo(const Match& match, std::ostream* os) {
  *os << "{id " << match.memory_id << " " << match.identity.category << "/" << match.identity.key
      << " similarity " << match.similarity << "}";
}

void PrintTo(const Resemblance& r, std::ostream* os) {
  *os << "{merge ";
  if (r.merge) {
    PrintTo(*r.merge, os);
  } else {
    *os << "none";
  }
  *os << ", similar [";
  for (const Match& m : r.similar) PrintTo(m, os);
  *os << "]}";
}

namespace {

using ::strata::testing::IsOk;
using ::strata::testing::IsOkAndHolds;
using ::strata::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::Eq;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Optional;
using ::testing::SizeIs;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z

// A body; a near-duplicate with one word changed ("two" -> "three") and one further from it
// (three words changed); both are within the default threshold of the first, and both add a
// word to it, as it does to them.
constexpr char kBackup[] =
    "The nightly backup of the billing database runs at two in the morning and keeps thirty "
    "days of snapshots in cold storage.";
constexpr char kBackupClose[] =
    "The nightly backup of the billing database runs at three in the morning and keeps thirty "
    "days of snapshots in cold storage.";
constexpr char kBackupFar[] =
    "The nightly backup of the billing database now runs at three in the morning and keeps "
    "sixty days of snapshots in cold storage.";
// kBackup reworded (filler words, punctuation, word forms): no new content word.
constexpr char kBackupReworded[] =
    "The nightly backups of the billing database really run at two in the morning, and also "
    "keep thirty days of snapshots in cold storage!";
// kBackup with one more word, and with two more: kBackup adds nothing to either.
constexpr char kBackupEncrypted[] =
    "The nightly backup of the billing database runs at two in the morning and keeps thirty "
    "days of encrypted snapshots in cold storage.";
constexpr char kBackupEncryptedOffsite[] =
    "The nightly backup of the billing database runs at two in the morning and keeps thirty "
    "days of encrypted snapshots in offsite cold storage.";
constexpr char kUnrelated[] =
    "Alice prefers dark mode in every editor and turns off notifications during focus time.";
// A correction under a new key: one content word changed.
constexpr char kMariaGo[] = "Maria leads the storage team and prefers Go for new services";
constexpr char kMariaRust[] = "Maria leads the storage team and prefers Rust for new services";
// A negation added or dropped: the fact reversed.
constexpr char kDeployNot[] =
    "The deploy pipeline does not run the integration tests on feature branches before merging.";
constexpr char kDeploy[] =
    "The deploy pipeline does run the integration tests on feature branches before merging.";

Identity Id(std::string key, std::string category = "facts", std::string workspace = "") {
  return {
      .category = std::move(category), .key = std::move(key), .workspace = std::move(workspace)};
}

// A JSON string holding `text` (which has no characters to escape).
std::string Json(std::string_view text) {
  std::string out = "\"";
  out.append(text);
  out.push_back('"');
  return out;
}

// The similarity the finder computes for two bodies stored as JSON strings of these texts:
// over their normal JSON, quotes included.
double Similarity(std::string_view a, std::string_view b) {
  return Jaccard(Trigrams(Json(a)), Trigrams(Json(b)));
}

MATCHER_P2(IsMatch, memory_id, similarity, "") {
  return ExplainMatchResult(
      AllOf(Field(&Match::memory_id, memory_id), Field(&Match::similarity, DoubleEq(similarity))),
      arg, result_listener);
}

MATCHER_P(HasId, memory_id, "") { return arg.memory_id == memory_id; }

// A Resemblance that merges into `memory_id` at `similarity` (and so lists nothing as similar).
MATCHER_P2(Merges, memory_id, similarity, "") {
  return ExplainMatchResult(
      AllOf(Field(&Resemblance::merge, Optional(IsMatch(memory_id, similarity))),
            Field(&Resemblance::similar, IsEmpty())),
      arg, result_listener);
}

// A Resemblance without a merge whose similar memories match `matcher`.
MATCHER_P(OnlySimilar, matcher, "") {
  return ExplainMatchResult(
      AllOf(Field(&Resemblance::merge, Eq(std::nullopt)), Field(&Resemblance::similar, matcher)),
      arg, result_listener);
}

// A Resemblance with neither a merge nor a similar memory.
MATCHER(ResemblesNothing, "") {
  return ExplainMatchResult(
      AllOf(Field(&Resemblance::merge, Eq(std::nullopt)), Field(&Resemblance::similar, IsEmpty())),
      arg, result_listener);
}

class DedupDbTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, temporal::testing::OpenMigrated(GetParam(), dir_));
    versions_ = temporal::VersionTable(db_.get());
    index_ = DedupIndex(db_.get());
  }

  // The band keys of `body_json` written under `scope`'s category and workspace.
  static std::vector<int64_t> Keys(const Identity& scope, std::string_view body_json) {
    absl::StatusOr<text::ParsedBody> body = text::ParseBody(body_json);
    EXPECT_OK(body);
    if (!body.ok()) return {};
    return BandKeys(Analyze(*body), body->normal_hash, ScopeHash(scope.category, scope.workspace));
  }

  // Stores a memory with one version of `body_json`, without indexing it; returns its id.
  absl::StatusOr<int64_t> StoreUnindexed(const Identity& identity, std::string_view body_json) {
    ASSIGN_OR_RETURN(const text::ParsedBody body, text::ParseBody(body_json));
    now_ += 1000;
    ASSIGN_OR_RETURN(const int64_t id, versions_.InsertIdentity(identity, now_));
    const temporal::IdentityRow row{
        .memory_id = id, .identity = identity, .last_event_at_unix_ms = now_ - 1};
    temporal::VersionRow version{.body_hash = body.normal_hash};
    version.version.identity = identity;
    version.version.body_json = std::string(body_json);
    version.version.type = "insight";
    version.version.recorded_at_unix_ms = now_;
    version.version.valid_from_unix_ms = now_;
    RETURN_IF_ERROR(versions_.AppendVersion(row, version));
    return id;
  }

  // Stores a memory and indexes its band keys, as the write path does.
  absl::StatusOr<int64_t> Store(const Identity& identity, std::string_view body_json) {
    ASSIGN_OR_RETURN(const int64_t id, StoreUnindexed(identity, body_json));
    RETURN_IF_ERROR(index_.Set(id, Keys(identity, body_json)));
    return id;
  }

  // What a write of `body_json` to the new identity `identity` resembles.
  absl::StatusOr<Resemblance> Find(DuplicateFinder& finder, const Identity& identity,
                                   std::string_view body_json) {
    ASSIGN_OR_RETURN(const text::ParsedBody body, text::ParseBody(body_json));
    return finder.Find(identity, body, Analyze(body), Keys(identity, body_json));
  }

  strata::testing::TempDir dir_;
  std::unique_ptr<store::Db> db_;
  temporal::VersionTable versions_{nullptr};
  DedupIndex index_{nullptr};
  int64_t now_ = kNow;
};

class FinderTest : public DedupDbTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(DedupDbTest::SetUp());
    finder_ = std::make_unique<DuplicateFinder>(db_.get(), &index_, 0.70);
  }

  std::unique_ptr<DuplicateFinder> finder_;
};

// ---------------------------------------------------------------------------------------------
// DuplicateFinder: what merges

TEST_P(FinderTest, AnExactReStoreMergesWithSimilarityOne) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackup)));
  EXPECT_THAT(Find(*finder_, Id("backup.again"), Json(kBackup)), IsOkAndHolds(Merges(id, 1.0)));
}

TEST_P(FinderTest, ARewordedReStoreWithNoNewContentWordMerges) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackup)));
  const double similarity = Similarity(kBackup, kBackupReworded);
  ASSERT_GE(similarity, 0.70);
  ASSERT_LT(similarity, 1.0);
  EXPECT_THAT(Find(*finder_, Id("backup.reworded"), Json(kBackupReworded)),
              IsOkAndHolds(Merges(id, similarity)));
}

TEST_P(FinderTest, ABodyThatSaysLessMerges) {
  // kBackup lacks only "encrypted": it adds nothing to the memory that has it.
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackupEncrypted)));
  EXPECT_THAT(Find(*finder_, Id("backup.short"), Json(kBackup)),
              IsOkAndHolds(Merges(id, Similarity(kBackup, kBackupEncrypted))));
}

TEST_P(FinderTest, ComparesTheWholeBodyNotOnlyItsStrings) {
  // Same strings, different numbers and keys: the new body adds its numbers, no merge.
  ASSERT_OK(Store(Id("monday"), R"({"user":"alice","balance":1200,"limit":5000})").status());
  ASSERT_OK_AND_ASSIGN(
      const Resemblance other,
      Find(*finder_, Id("tuesday"), R"({"user":"alice","balance":-350,"limit":0})"));
  EXPECT_EQ(other.merge, std::nullopt);
  // The same object with its keys in another order and other spacing is an exact duplicate.
  ASSERT_OK_AND_ASSIGN(const int64_t id,
                       Store(Id("backup"), absl::StrCat(R"({"what": ")", kBackup,
                                                        R"(", "where": "cold storage"})")));
  EXPECT_THAT(Find(*finder_, Id("other"),
                   absl::StrCat(R"({"where":"cold storage","what":")", kBackup, R"("})")),
              IsOkAndHolds(Merges(id, 1.0)));
}

TEST_P(FinderTest, MergesIntoTheMostSimilarMergeableMemory) {
  ASSERT_OK_AND_ASSIGN(const int64_t close, Store(Id("close"), Json(kBackupClose)));
  ASSERT_OK_AND_ASSIGN(const int64_t offsite, Store(Id("offsite"), Json(kBackupEncryptedOffsite)));
  ASSERT_OK_AND_ASSIGN(const int64_t encrypted, Store(Id("encrypted"), Json(kBackupEncrypted)));
  const double to_close = Similarity(kBackup, kBackupClose);
  const double to_encrypted = Similarity(kBackup, kBackupEncrypted);
  const double to_offsite = Similarity(kBackup, kBackupEncryptedOffsite);
  ASSERT_GT(to_encrypted, to_offsite);
  ASSERT_GE(to_offsite, 0.70);
  // The closest memory does not hold "two": merging into it would lose that.
  ASSERT_GT(to_close, to_encrypted);
  ASSERT_OK_AND_ASSIGN(const std::vector<int64_t> candidates,
                       index_.Candidates(Keys(Id("new"), Json(kBackup)), kMaxCandidates));
  ASSERT_THAT(candidates, Contains(close));
  ASSERT_THAT(candidates, Contains(offsite));
  ASSERT_THAT(candidates, Contains(encrypted));

  EXPECT_THAT(Find(*finder_, Id("new"), Json(kBackup)),
              IsOkAndHolds(Merges(encrypted, to_encrypted)));
}

TEST_P(FinderTest, TiesGoToTheLowestId) {
  // The same text in another case: the same trigrams, units and band keys.
  const std::string upper = "THE NIGHTLY BACKUP RUNS AT TWO IN THE MORNING AND KEEPS THIRTY DAYS";
  const std::string lower = "the nightly backup runs at two in the morning and keeps thirty days";
  ASSERT_OK_AND_ASSIGN(const int64_t first, Store(Id("upper"), Json(upper)));
  ASSERT_OK_AND_ASSIGN(const int64_t second, Store(Id("lower"), Json(lower)));
  ASSERT_LT(first, second);
  ASSERT_OK_AND_ASSIGN(const std::vector<int64_t> candidates,
                       index_.Candidates(Keys(Id("new"), Json(lower)), kMaxCandidates));
  ASSERT_THAT(candidates, ElementsAre(first, second));

  EXPECT_THAT(Find(*finder_, Id("new"), Json(lower)), IsOkAndHolds(Merges(first, 1.0)));
  // Even when a higher id holds the exact text written, the lowest id wins.
  ASSERT_OK(versions_.DeleteIdentity(first));
  ASSERT_OK_AND_ASSIGN(const int64_t third, Store(Id("upper.again"), Json(upper)));
  ASSERT_LT(second, third);
  EXPECT_THAT(Find(*finder_, Id("new"), Json(upper)), IsOkAndHolds(Merges(second, 1.0)));
}

TEST_P(FinderTest, ABodyWithKMinMergeUnitsMergesAndOneWithFewerDoesNot) {
  ASSERT_EQ(kMinMergeUnits, 6);
  const std::string six = "alpha beta gamma delta epsilon zeta";
  const std::string five = "alpha beta gamma delta epsilon";
  ASSERT_OK_AND_ASSIGN(const int64_t six_id, Store(Id("six"), Json(six)));
  ASSERT_OK_AND_ASSIGN(const int64_t five_id, Store(Id("five"), Json(five)));
  EXPECT_THAT(Find(*finder_, Id("six.again"), Json(six)), IsOkAndHolds(Merges(six_id, 1.0)));
  // Five words would merge into `six` too (they add nothing to it): both are only similar.
  EXPECT_THAT(Find(*finder_, Id("five.again"), Json(five)),
              IsOkAndHolds(OnlySimilar(
                  ElementsAre(IsMatch(five_id, 1.0), IsMatch(six_id, Similarity(five, six))))));
}

// ---------------------------------------------------------------------------------------------
// DuplicateFinder: what does not merge, and is listed as similar

TEST_P(FinderTest, AOneWordCorrectionIsSimilarNotMerged) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("maria-lang", "people"), Json(kMariaGo)));
  const double similarity = Similarity(kMariaGo, kMariaRust);
  ASSERT_GE(similarity, 0.70);
  EXPECT_THAT(Find(*finder_, Id("maria-lang-2", "people"), Json(kMariaRust)),
              IsOkAndHolds(OnlySimilar(ElementsAre(IsMatch(id, similarity)))));
}

TEST_P(FinderTest, AChangedWordIsSimilarNotMergedEitherWay) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackup)));
  const double similarity = Similarity(kBackup, kBackupClose);
  ASSERT_GE(similarity, 0.70);
  ASSERT_LT(similarity, 1.0);
  EXPECT_THAT(Find(*finder_, Id("backup.schedule"), Json(kBackupClose)),
              IsOkAndHolds(OnlySimilar(ElementsAre(IsMatch(id, similarity)))));
  // A body that says more than the memory is not merged into it either.
  EXPECT_THAT(
      Find(*finder_, Id("backup.encrypted"), Json(kBackupEncrypted)),
      IsOkAndHolds(OnlySimilar(ElementsAre(IsMatch(id, Similarity(kBackupEncrypted, kBackup))))));
}

TEST_P(FinderTest, AShortBodyNeverMergesEvenWhenIdentical) {
  // hr/bob holding alice's title is a second fact, not an alias of alice.
  const std::string title = R"({"title":"senior engineer"})";
  ASSERT_OK_AND_ASSIGN(const int64_t alice, Store(Id("alice", "hr"), title));
  EXPECT_THAT(Find(*finder_, Id("bob", "hr"), title),
              IsOkAndHolds(OnlySimilar(ElementsAre(IsMatch(alice, 1.0)))));
  EXPECT_THAT(Find(*finder_, Id("bob", "hr"), R"({ "title" : "Senior Engineer" })"),
              IsOkAndHolds(OnlySimilar(ElementsAre(HasId(alice)))));
}

TEST_P(FinderTest, DroppingANegationDoesNotMerge) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("ci"), Json(kDeployNot)));
  const double similarity = Similarity(kDeploy, kDeployNot);
  ASSERT_GE(similarity, 0.70);
  EXPECT_THAT(Find(*finder_, Id("ci.2"), Json(kDeploy)),
              IsOkAndHolds(OnlySimilar(ElementsAre(IsMatch(id, similarity)))));
}

TEST_P(FinderTest, AddingANegationDoesNotMerge) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("ci"), Json(kDeploy)));
  const double similarity = Similarity(kDeploy, kDeployNot);
  EXPECT_THAT(Find(*finder_, Id("ci.2"), Json(kDeployNot)),
              IsOkAndHolds(OnlySimilar(ElementsAre(IsMatch(id, similarity)))));
}

TEST_P(FinderTest, SimilarIsSortedBySimilarityTiesByIdAndCapped) {
  // kBackup with one word replaced, each at another place: each lacks a word of kBackup, so
  // none can be merged into; their similarities to it differ. One is stored twice (a tie).
  const std::vector<std::string> variants = {
      absl::StrReplaceAll(kBackup, {{"nightly", "weekly"}}),
      absl::StrReplaceAll(kBackup, {{"billing", "payroll"}}),
      absl::StrReplaceAll(kBackup, {{"two", "four"}}),
      absl::StrReplaceAll(kBackup, {{"thirty", "ninety"}}),
      absl::StrReplaceAll(kBackup, {{"snapshots", "dumps"}}),
      absl::StrReplaceAll(kBackup, {{"morning", "evening"}}),
      absl::StrReplaceAll(kBackup, {{"cold", "glacier"}}),
      absl::StrReplaceAll(kBackup, {{"two", "four"}}),
  };
  struct Expected {
    int64_t id;
    double similarity;
  };
  std::vector<Expected> expected;
  for (size_t i = 0; i < variants.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(const int64_t id,
                         Store(Id(absl::StrCat("variant.", i)), Json(variants[i])));
    const double similarity = Similarity(kBackup, variants[i]);
    ASSERT_GE(similarity, 0.70) << variants[i];
    expected.push_back({id, similarity});
  }
  ASSERT_OK_AND_ASSIGN(const std::vector<int64_t> candidates,
                       index_.Candidates(Keys(Id("new"), Json(kBackup)), kMaxCandidates));
  ASSERT_THAT(candidates, SizeIs(variants.size()));
  std::sort(expected.begin(), expected.end(), [](const Expected& a, const Expected& b) {
    return a.similarity > b.similarity || (a.similarity == b.similarity && a.id < b.id);
  });
  ASSERT_GT(expected.size(), kMaxSimilar);
  std::vector<::testing::Matcher<const Match&>> top;
  for (size_t i = 0; i < kMaxSimilar; ++i) {
    top.push_back(IsMatch(expected[i].id, expected[i].similarity));
  }
  EXPECT_THAT(Find(*finder_, Id("new"), Json(kBackup)),
              IsOkAndHolds(OnlySimilar(ElementsAreArray(top))));
}

TEST_P(FinderTest, AMergeListsNothingAsSimilar) {
  ASSERT_OK(Store(Id("close"), Json(kBackupClose)));
  ASSERT_OK(Store(Id("far"), Json(kBackupFar)));
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackup)));
  EXPECT_THAT(Find(*finder_, Id("new"), Json(kBackup)), IsOkAndHolds(Merges(id, 1.0)));
}

// ---------------------------------------------------------------------------------------------
// DuplicateFinder: candidates, threshold, scope, counters

TEST_P(FinderTest, IgnoresACandidateBelowTheThreshold) {
  // The same words in another order: the unit bands are shared, few trigrams are.
  const std::string forward = "ab cd ef gh ij kl mn op";
  const std::string backward = "op mn kl ij gh ef cd ab";
  ASSERT_LT(Similarity(forward, backward), 0.70);
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("forward"), Json(forward)));
  ASSERT_OK_AND_ASSIGN(const std::vector<int64_t> candidates,
                       index_.Candidates(Keys(Id("backward"), Json(backward)), kMaxCandidates));
  ASSERT_THAT(candidates, ElementsAre(id));

  EXPECT_THAT(Find(*finder_, Id("backward"), Json(backward)), IsOkAndHolds(ResemblesNothing()));
  EXPECT_EQ(finder_->candidates_verified(), 1);
}

TEST_P(FinderTest, TheThresholdDecidesMerges) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackupEncryptedOffsite)));
  const double similarity = Similarity(kBackup, kBackupEncryptedOffsite);
  ASSERT_LT(similarity, 0.95);

  DuplicateFinder strict(db_.get(), &index_, 0.95);
  EXPECT_THAT(Find(strict, Id("new"), Json(kBackup)), IsOkAndHolds(ResemblesNothing()));
  EXPECT_EQ(strict.threshold(), 0.95);
  // The threshold is inclusive.
  DuplicateFinder exact(db_.get(), &index_, similarity);
  EXPECT_THAT(Find(exact, Id("new"), Json(kBackup)), IsOkAndHolds(Merges(id, similarity)));
  DuplicateFinder lenient(db_.get(), &index_, 0.5);
  EXPECT_THAT(Find(lenient, Id("new"), Json(kBackup)), IsOkAndHolds(Merges(id, similarity)));
}

TEST_P(FinderTest, TheThresholdDecidesWhatIsSimilar) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackupFar)));
  const double similarity = Similarity(kBackup, kBackupFar);
  ASSERT_LT(similarity, 0.95);

  DuplicateFinder strict(db_.get(), &index_, 0.95);
  EXPECT_THAT(Find(strict, Id("new"), Json(kBackup)), IsOkAndHolds(ResemblesNothing()));
  DuplicateFinder exact(db_.get(), &index_, similarity);
  EXPECT_THAT(Find(exact, Id("new"), Json(kBackup)),
              IsOkAndHolds(OnlySimilar(ElementsAre(IsMatch(id, similarity)))));
}

TEST_P(FinderTest, IgnoresMemoriesOfAnotherCategoryOrWorkspace) {
  ASSERT_OK(Store(Id("backup", "notes"), Json(kBackup)));
  ASSERT_OK(Store(Id("backup", "facts", "team-a"), Json(kBackup)));
  EXPECT_THAT(Find(*finder_, Id("new", "facts"), Json(kBackup)), IsOkAndHolds(ResemblesNothing()));
  EXPECT_THAT(Find(*finder_, Id("new", "facts", "team-b"), Json(kBackup)),
              IsOkAndHolds(ResemblesNothing()));
  // Band keys are salted with the scope: none of them were even candidates.
  EXPECT_EQ(finder_->candidates_verified(), 0);
}

TEST_P(FinderTest, RejectsACandidateOfAnotherScopeOnAKeyCollision) {
  // Memories of other scopes indexed under the scope of "facts" in the global workspace, as
  // a hash collision would: candidates, but never merged into or listed.
  ASSERT_OK_AND_ASSIGN(const int64_t notes, StoreUnindexed(Id("backup", "notes"), Json(kBackup)));
  ASSERT_OK_AND_ASSIGN(const int64_t team,
                       StoreUnindexed(Id("backup", "facts", "team-a"), Json(kBackup)));
  ASSERT_OK(index_.Set(notes, Keys(Id("x", "facts"), Json(kBackup))));
  ASSERT_OK(index_.Set(team, Keys(Id("x", "facts"), Json(kBackup))));

  EXPECT_THAT(Find(*finder_, Id("new", "facts"), Json(kBackup)), IsOkAndHolds(ResemblesNothing()));
  EXPECT_EQ(finder_->candidates_verified(), 2);
}

TEST_P(FinderTest, IgnoresMemoriesWhoseBandRowsWereRemoved) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackup)));
  ASSERT_OK(index_.Remove(id));
  EXPECT_THAT(Find(*finder_, Id("new"), Json(kBackupClose)), IsOkAndHolds(ResemblesNothing()));
  EXPECT_THAT(Find(*finder_, Id("new"), Json(kBackup)), IsOkAndHolds(ResemblesNothing()));
  EXPECT_EQ(finder_->candidates_verified(), 0);
}

TEST_P(FinderTest, IgnoresForgottenOrDeletedMemoriesWithStaleBandRows) {
  ASSERT_OK_AND_ASSIGN(const int64_t forgotten, Store(Id("forgotten"), Json(kBackup)));
  ASSERT_OK_AND_ASSIGN(const int64_t deleted, Store(Id("deleted"), Json(kBackup)));
  ASSERT_OK_AND_ASSIGN(const std::optional<temporal::IdentityRow> row,
                       versions_.FindIdentityById(forgotten));
  ASSERT_TRUE(row.has_value());
  ASSERT_OK(versions_.Retract(*row, now_ + 1, "obsolete"));
  ASSERT_OK(versions_.DeleteIdentity(deleted));

  EXPECT_THAT(Find(*finder_, Id("new"), Json(kBackup)), IsOkAndHolds(ResemblesNothing()));
  EXPECT_EQ(finder_->candidates_verified(), 2);
}

TEST_P(FinderTest, CountsChecksCandidatesAndTheHistogram) {
  EXPECT_EQ(finder_->checks(), 0);
  EXPECT_THAT(Find(*finder_, Id("first"), Json(kBackup)), IsOkAndHolds(ResemblesNothing()));
  ASSERT_OK(Store(Id("first"), Json(kBackup)));
  ASSERT_OK(Find(*finder_, Id("second"), Json(kBackupClose)));
  ASSERT_OK(Store(Id("second"), Json(kBackupClose)));
  ASSERT_OK(Find(*finder_, Id("third"), Json(kBackupFar)));
  ASSERT_OK(Find(*finder_, Id("fourth"), Json(kUnrelated)));

  EXPECT_EQ(finder_->checks(), 4);
  EXPECT_EQ(finder_->candidates_verified(), 0 + 1 + 2 + 0);
  const auto& histogram = finder_->histogram();
  EXPECT_EQ(histogram[0], 2);
  EXPECT_EQ(histogram[1], 1);
  EXPECT_EQ(histogram[2], 1);
  int64_t total = 0;
  for (int64_t n : histogram) total += n;
  EXPECT_EQ(total, finder_->checks());
}

TEST_P(FinderTest, VerifiesAtMostTheCap) {
  constexpr int kMemories = static_cast<int>(kMaxCandidates) + 6;
  std::vector<int64_t> ids;
  for (int i = 0; i < kMemories; ++i) {
    ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id(absl::StrCat("copy.", i)), Json(kBackup)));
    ids.push_back(id);
  }
  EXPECT_THAT(Find(*finder_, Id("new"), Json(kBackup)), IsOkAndHolds(Merges(ids.front(), 1.0)));
  EXPECT_EQ(finder_->candidates_verified(), static_cast<int64_t>(kMaxCandidates));
  EXPECT_EQ(finder_->histogram()[kMaxCandidates], 1);
}

TEST_P(FinderTest, SimilarIsCappedEvenWhenEveryCandidateQualifies) {
  // Short bodies never merge: each of ten identical copies qualifies as similar.
  const std::string title = R"({"title":"senior engineer"})";
  for (int i = 0; i < 10; ++i) ASSERT_OK(Store(Id(absl::StrCat("person.", i), "hr"), title));
  ASSERT_OK_AND_ASSIGN(const Resemblance r, Find(*finder_, Id("new", "hr"), title));
  EXPECT_EQ(r.merge, std::nullopt);
  EXPECT_THAT(r.similar, SizeIs(kMaxSimilar));
  for (size_t i = 1; i < r.similar.size(); ++i) {
    EXPECT_LT(r.similar[i - 1].memory_id, r.similar[i].memory_id);  // All ties at 1.0.
  }
}

// ---------------------------------------------------------------------------------------------
// DedupIndex: band keys

class DedupIndexTest : public DedupDbTest {
 protected:
  // Writes a memory (a version and its keys) on `other`, another connection to the store, as
  // its write path does; returns its id.
  absl::StatusOr<int64_t> StoreFrom(store::Db& other, const Identity& identity,
                                    const std::vector<int64_t>& keys) {
    temporal::VersionTable versions(&other);
    now_ += 1000;
    ASSIGN_OR_RETURN(const int64_t id, versions.InsertIdentity(identity, now_));
    temporal::VersionRow version{.body_hash = 1};
    version.version.identity = identity;
    version.version.body_json = Json(kBackup);
    version.version.type = "insight";
    version.version.recorded_at_unix_ms = now_;
    version.version.valid_from_unix_ms = now_;
    RETURN_IF_ERROR(versions.AppendVersion(
        {.memory_id = id, .identity = identity, .last_event_at_unix_ms = now_ - 1}, version));
    RETURN_IF_ERROR(DedupIndex(&other).Set(id, keys));
    return id;
  }
};

TEST_P(DedupIndexTest, CandidatesWithMostSharedKeysComeFirstThenByAscendingId) {
  ASSERT_OK(index_.Set(5, {10}));
  ASSERT_OK(index_.Set(4, {20, 30}));
  ASSERT_OK(index_.Set(3, {10, 20, 30}));
  ASSERT_OK(index_.Set(2, {10, 20}));
  ASSERT_OK(index_.Set(1, {99}));
  EXPECT_THAT(index_.Candidates({10, 20, 30}, 10), IsOkAndHolds(ElementsAre(3, 2, 4, 5)));
  EXPECT_THAT(index_.Candidates({30}, 10), IsOkAndHolds(ElementsAre(3, 4)));
  EXPECT_THAT(index_.Candidates({99, 10}, 10), IsOkAndHolds(ElementsAre(1, 2, 3, 5)));
}

TEST_P(DedupIndexTest, AMapLoadedInPagesHoldsEveryMemorysKeys) {
  ASSERT_OK(index_.Set(5, {10}));
  ASSERT_OK(index_.Set(4, {20, 30}));
  ASSERT_OK(index_.Set(3, {10, 20, 30}));
  ASSERT_OK(index_.Set(2, {10, 20}));
  ASSERT_OK(index_.Set(1, {99}));
  // Pages of 1 and 2 rows: every boundary, a last page full and one short.
  for (const int64_t page : {int64_t{1}, int64_t{2}}) {
    DedupIndex loaded(db_.get(), page);
    EXPECT_THAT(loaded.Candidates({10, 20, 30}, 10), IsOkAndHolds(ElementsAre(3, 2, 4, 5)));
    EXPECT_THAT(loaded.Candidates({99, 10}, 10), IsOkAndHolds(ElementsAre(1, 2, 3, 5)));
  }
}

TEST_P(DedupIndexTest, CandidatesAreCappedAtMax) {
  ASSERT_OK(index_.Set(1, {10}));
  ASSERT_OK(index_.Set(2, {10, 20}));
  ASSERT_OK(index_.Set(3, {10, 20}));
  EXPECT_THAT(index_.Candidates({10, 20}, 2), IsOkAndHolds(ElementsAre(2, 3)));
  EXPECT_THAT(index_.Candidates({10, 20}, 1), IsOkAndHolds(ElementsAre(2)));
  EXPECT_THAT(index_.Candidates({10, 20}, 0), IsOkAndHolds(IsEmpty()));
}

TEST_P(DedupIndexTest, NoKeysOrUnknownKeysHaveNoCandidates) {
  ASSERT_OK(index_.Set(1, {10}));
  EXPECT_THAT(index_.Candidates({}, 10), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(index_.Candidates({11, 12}, 10), IsOkAndHolds(IsEmpty()));
}

TEST_P(DedupIndexTest, KeysSpanTheWholeInt64Range) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ASSERT_OK(index_.Set(1, {kMin, -1, 0, kMax}));
  ASSERT_OK(index_.Set(2, {kMax}));
  EXPECT_THAT(index_.Candidates({kMin}, 10), IsOkAndHolds(ElementsAre(1)));
  EXPECT_THAT(index_.Candidates({kMax}, 10), IsOkAndHolds(ElementsAre(1, 2)));
  EXPECT_THAT(index_.Candidates({-1, 0}, 10), IsOkAndHolds(ElementsAre(1)));
}

TEST_P(DedupIndexTest, AddingTheSameKeysTwiceCountsThemOnce) {
  ASSERT_OK(index_.Set(1, {10}));
  ASSERT_OK(index_.Set(1, {10}));
  ASSERT_OK(index_.Set(2, {10, 20}));
  EXPECT_THAT(index_.Candidates({10, 20}, 10), IsOkAndHolds(ElementsAre(2, 1)));
  EXPECT_OK(index_.Set(3, {}));
}

TEST_P(DedupIndexTest, RemoveDeletesOnlyThatMemorysKeys) {
  ASSERT_OK(index_.Set(1, {10, 20}));
  ASSERT_OK(index_.Set(2, {10}));
  ASSERT_OK(index_.Remove(1));
  EXPECT_THAT(index_.Candidates({10}, 10), IsOkAndHolds(ElementsAre(2)));
  EXPECT_THAT(index_.Candidates({20}, 10), IsOkAndHolds(IsEmpty()));
  ASSERT_OK(index_.Remove(1));
  ASSERT_OK(index_.Remove(7));
  EXPECT_THAT(index_.Candidates({10, 20, 30}, 10), IsOkAndHolds(ElementsAre(2)));
}

TEST_P(DedupIndexTest, SetReplacesTheMemorysKeys) {
  ASSERT_OK(index_.Candidates({1}, 10));  // Loaded before, changed after.
  ASSERT_OK(index_.Set(1, {10, 20}));
  ASSERT_OK(index_.Set(1, {30}));
  EXPECT_THAT(index_.Candidates({10, 20}, 10), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(index_.Candidates({30}, 10), IsOkAndHolds(ElementsAre(1)));
  ASSERT_OK(index_.Set(1, {}));
  EXPECT_THAT(index_.Candidates({30}, 10), IsOkAndHolds(IsEmpty()));
}

TEST_P(DedupIndexTest, RefusesMemoryIdsTheMapCannotHold) {
  EXPECT_THAT(index_.Set(0, {10}), StatusIs(absl::StatusCode::kOutOfRange, ::testing::_));
  EXPECT_THAT(index_.Set(int64_t{1} << 32, {10}),
              StatusIs(absl::StatusCode::kOutOfRange, ::testing::_));
  EXPECT_OK(index_.Set((int64_t{1} << 32) - 1, {10}));
  EXPECT_THAT(index_.Candidates({10}, 10), IsOkAndHolds(ElementsAre((int64_t{1} << 32) - 1)));
}

TEST_P(DedupIndexTest, KeysAreReadBackByAnotherConnection) {
  ASSERT_OK(index_.Set(1, {10, 20}));
  ASSERT_OK(index_.Set(2, {20}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> other, temporal::testing::OpenAgain(*db_));
  DedupIndex reader(other.get());
  EXPECT_THAT(reader.Candidates({10, 20}, 10), IsOkAndHolds(ElementsAre(1, 2)));
}

TEST_P(DedupIndexTest, TakesInWhatAnotherConnectionWroteSinceLoading) {
  ASSERT_OK_AND_ASSIGN(const int64_t first, Store(Id("backup"), Json(kBackup)));
  const std::vector<int64_t> keys = Keys(Id("backup"), Json(kBackup));
  ASSERT_THAT(index_.Candidates(keys, 10), IsOkAndHolds(ElementsAre(first)));

  // A second connection writes a memory and then clears every memory's keys.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> other, temporal::testing::OpenAgain(*db_));
  ASSERT_OK_AND_ASSIGN(const int64_t second, StoreFrom(*other, Id("backup.twin"), keys));
  EXPECT_THAT(index_.Candidates(keys, 10), IsOkAndHolds(ElementsAre(first, second)));

  ASSERT_OK(DedupIndex(other.get()).Clear());
  EXPECT_THAT(index_.Candidates(keys, 10), IsOkAndHolds(IsEmpty()));
}

TEST_P(DedupIndexTest, CatchesUpInPagesWithEverythingAnotherConnectionWrote) {
  ASSERT_OK_AND_ASSIGN(const int64_t first, Store(Id("backup"), Json(kBackup)));
  const std::vector<int64_t> keys = Keys(Id("backup"), Json(kBackup));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> other, temporal::testing::OpenAgain(*db_));
  // Pages of 1 and 2 rows: every boundary, a last page full and one short.
  for (const int64_t page : {int64_t{1}, int64_t{2}}) {
    DedupIndex paged(db_.get(), page);
    ASSERT_THAT(paged.Candidates(keys, 10), IsOkAndHolds(::testing::Contains(first)));
    std::vector<int64_t> written;
    for (int i = 0; i < 5; ++i) {
      ASSERT_OK_AND_ASSIGN(
          const int64_t id,
          StoreFrom(*other, Id("backup.copy" + std::to_string(page) + std::to_string(i)), keys));
      written.push_back(id);
    }
    ASSERT_OK_AND_ASSIGN(const std::vector<int64_t> found, paged.Candidates(keys, 100));
    for (const int64_t id : written) EXPECT_THAT(found, ::testing::Contains(id)) << page;
  }
}

TEST_P(DedupIndexTest, ACatchUpSentAheadTakesInWhatAnotherConnectionWrote) {
  ASSERT_OK_AND_ASSIGN(const int64_t first, Store(Id("backup"), Json(kBackup)));
  const std::vector<int64_t> keys = Keys(Id("backup"), Json(kBackup));
  ASSERT_THAT(index_.Candidates(keys, 10), IsOkAndHolds(ElementsAre(first)));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> other, temporal::testing::OpenAgain(*db_));
  ASSERT_OK_AND_ASSIGN(const int64_t second, StoreFrom(*other, Id("backup.twin"), keys));
  {
    // Sent ahead of a write transaction's first read, it is read by the lookup after it.
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*db_));
    ASSERT_OK(index_.SendCatchUp());
    ASSERT_OK(versions_.FindIdentity(Id("backup.twin")).status());
    EXPECT_THAT(index_.Candidates(keys, 10), IsOkAndHolds(ElementsAre(first, second)));
    ASSERT_OK(txn.Commit());
  }
  ASSERT_OK_AND_ASSIGN(const int64_t third, StoreFrom(*other, Id("backup.triplet"), keys));
  {
    // One dropped unread: the next lookup reads what was written since, that memory too.
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*db_));
    ASSERT_OK(index_.SendCatchUp());
    ASSERT_OK(versions_.FindIdentity(Id("backup.triplet")).status());
    index_.DropCatchUp();
    ASSERT_OK(txn.Commit());
  }
  ASSERT_OK_AND_ASSIGN(const int64_t fourth, StoreFrom(*other, Id("backup.quad"), keys));
  EXPECT_THAT(index_.Candidates(keys, 10), IsOkAndHolds(ElementsAre(first, second, third, fourth)));
}

TEST(DedupIndexUpgradeTest, MovesTheKeysOfAnOlderSqliteStoreIntoOneRowAMemory) {
  // Schema version 7 kept one row per (band key, memory) in dedup_bands.
  strata::testing::TempDir dir;
  ASSERT_OK(text::InstallFts5Extensions());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> old, store::Db::Open(dir.File("old.db"), {}));
  ASSERT_OK(store::Migrate(*old, 7));
  ASSERT_OK(
      old->Exec("INSERT INTO dedup_bands (band_key, memory_id) VALUES (10, 1), (20, 1), "
                "(-5, 2), (20, 3)"));
  ASSERT_OK(store::Migrate(*old));
  DedupIndex upgraded(old.get());
  EXPECT_THAT(upgraded.Candidates({20, 10}, 10), IsOkAndHolds(ElementsAre(1, 3)));
  EXPECT_THAT(upgraded.Candidates({-5}, 10), IsOkAndHolds(ElementsAre(2)));
  ASSERT_OK_AND_ASSIGN(
      store::Stmt s, old->Prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'dedup_bands'"));
  ASSERT_THAT(s.Step(), IsOkAndHolds(true));
  EXPECT_EQ(s.Int(0), 0);
}

TEST_P(DedupIndexTest, ClearRemovesEveryKey) {
  ASSERT_OK(index_.Set(1, {10, 20}));
  ASSERT_OK(index_.Set(2, {30}));
  ASSERT_OK(index_.Clear());
  EXPECT_THAT(index_.Candidates({10, 20, 30}, 10), IsOkAndHolds(IsEmpty()));
  // Again, as another connection sees it: a new generation each time.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> other, temporal::testing::OpenAgain(*db_));
  DedupIndex reader(other.get());
  ASSERT_OK(index_.Set(3, {10}));
  EXPECT_THAT(reader.Candidates({10}, 10), IsOkAndHolds(ElementsAre(3)));
  ASSERT_OK(index_.Clear());
  EXPECT_THAT(reader.Candidates({10}, 10), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(index_.Candidates({10}, 10), IsOkAndHolds(IsEmpty()));
}

// ---------------------------------------------------------------------------------------------
// DedupIndex: aliases

TEST_P(DedupIndexTest, AnIdentityIsNotAnAliasUntilPut) {
  EXPECT_THAT(index_.FindAlias(Id("never")), IsOkAndHolds(Eq(std::nullopt)));
}

TEST_P(DedupIndexTest, PutAliasThenFindIt) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackup)));
  ASSERT_OK(index_.PutAlias(Id("backup.copy"), id, 0.83, now_));
  EXPECT_THAT(index_.FindAlias(Id("backup.copy")), IsOkAndHolds(Optional(id)));
}

TEST_P(DedupIndexTest, AliasesAreKeyedByCategoryKeyAndWorkspace) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackup)));
  ASSERT_OK(index_.PutAlias(Id("alias", "facts", "team-a"), id, 0.9, now_));
  EXPECT_THAT(index_.FindAlias(Id("alias", "facts", "team-a")), IsOkAndHolds(Optional(id)));
  EXPECT_THAT(index_.FindAlias(Id("alias", "facts", "")), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(index_.FindAlias(Id("alias", "notes", "team-a")), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(index_.FindAlias(Id("Alias", "facts", "team-a")), IsOkAndHolds(Eq(std::nullopt)));
}

TEST_P(DedupIndexTest, PutAliasReplacesTheTarget) {
  ASSERT_OK_AND_ASSIGN(const int64_t first, Store(Id("first"), Json(kBackup)));
  ASSERT_OK_AND_ASSIGN(const int64_t second, Store(Id("second"), Json(kUnrelated)));
  ASSERT_OK(index_.PutAlias(Id("alias"), first, 0.8, now_));
  ASSERT_OK(index_.PutAlias(Id("alias"), second, 0.9, now_ + 1));
  EXPECT_THAT(index_.FindAlias(Id("alias")), IsOkAndHolds(Optional(second)));
}

TEST_P(DedupIndexTest, RemoveAliasRemovesOnlyThatAlias) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup"), Json(kBackup)));
  ASSERT_OK(index_.PutAlias(Id("a"), id, 0.8, now_));
  ASSERT_OK(index_.PutAlias(Id("b"), id, 0.8, now_));
  ASSERT_OK(index_.RemoveAlias(Id("a")));
  EXPECT_THAT(index_.FindAlias(Id("a")), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(index_.FindAlias(Id("b")), IsOkAndHolds(Optional(id)));
  EXPECT_OK(index_.RemoveAlias(Id("never")));
}

TEST_P(DedupIndexTest, AliasesGoWithTheMemoryTheyPointTo) {
  ASSERT_OK_AND_ASSIGN(const int64_t gone, Store(Id("gone"), Json(kBackup)));
  ASSERT_OK_AND_ASSIGN(const int64_t kept, Store(Id("kept"), Json(kUnrelated)));
  ASSERT_OK(index_.PutAlias(Id("to.gone"), gone, 0.8, now_));
  ASSERT_OK(index_.PutAlias(Id("to.kept"), kept, 0.8, now_));
  ASSERT_OK(versions_.DeleteIdentity(gone));
  EXPECT_THAT(index_.FindAlias(Id("to.gone")), IsOkAndHolds(Eq(std::nullopt)));
  EXPECT_THAT(index_.FindAlias(Id("to.kept")), IsOkAndHolds(Optional(kept)));
}

TEST_P(DedupIndexTest, AliasesOfAMemoryComeInByteOrderAndAreCountedByScope) {
  ASSERT_OK_AND_ASSIGN(const int64_t id, Store(Id("backup", "facts", "team"), Json(kBackup)));
  ASSERT_OK_AND_ASSIGN(const int64_t other, Store(Id("other", "notes"), Json(kUnrelated)));
  // Byte order ('B' < 'a' < 'é'), whatever the PostgreSQL database's collation.
  ASSERT_OK(index_.PutAlias(Id("a", "facts", "team"), id, 0.8, now_));
  ASSERT_OK(index_.PutAlias(Id("\u00e9", "facts", "team"), id, 0.75, now_ + 1));
  ASSERT_OK(index_.PutAlias(Id("B", "facts", "team"), id, 0.9, now_ + 2));
  ASSERT_OK(index_.PutAlias(Id("c", "notes"), other, 0.7, now_));
  ASSERT_OK_AND_ASSIGN(const std::vector<AliasRow> aliases, index_.AliasesOf(id));
  ASSERT_THAT(aliases, SizeIs(3));
  EXPECT_EQ(aliases[0].identity.key, "B");
  EXPECT_EQ(aliases[1].identity.key, "a");
  EXPECT_EQ(aliases[2].identity.key, "\u00e9");
  EXPECT_EQ(aliases[0].memory_id, id);
  EXPECT_DOUBLE_EQ(aliases[0].similarity, 0.9);
  EXPECT_EQ(aliases[0].created_at_unix_ms, now_ + 2);
  EXPECT_THAT(index_.CountAliases({}), IsOkAndHolds(4));
  EXPECT_THAT(index_.CountAliases({.workspace = "team"}), IsOkAndHolds(3));
  EXPECT_THAT(index_.CountAliases({.category = "notes"}), IsOkAndHolds(1));
  EXPECT_THAT(index_.CountAliases({.workspace = "", .category = "facts"}), IsOkAndHolds(0));
}

TEST_P(DedupIndexTest, AnAliasMustPointToAStoredMemory) {
  EXPECT_THAT(index_.PutAlias(Id("alias"), 12345, 0.8, now_), Not(IsOk()));
  EXPECT_THAT(index_.FindAlias(Id("alias")), IsOkAndHolds(Eq(std::nullopt)));
}

// ---------------------------------------------------------------------------------------------
// DedupIndex: the stored scheme

TEST_P(DedupIndexTest, StoredSchemeIsEmptyInANewDatabase) {
  EXPECT_THAT(index_.StoredScheme(), IsOkAndHolds(""));
}

TEST_P(DedupIndexTest, SetStoredSchemeIsReadBackAndReplaced) {
  ASSERT_OK(index_.SetStoredScheme(kScheme));
  EXPECT_THAT(index_.StoredScheme(), IsOkAndHolds(kScheme));
  ASSERT_OK(index_.SetStoredScheme("minhash-words-8x8-v0"));
  EXPECT_THAT(index_.StoredScheme(), IsOkAndHolds("minhash-words-8x8-v0"));
}

INSTANTIATE_TEST_SUITE_P(Engines, FinderTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, DedupIndexTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata::dedup
