// The libstrata facade through its public API: the write path, the time-axis reads of
// docs/design.md §3, forget and purge, history, batches, keyword recall, schema refusal, stats.
// On a SQLite file and on a PostgreSQL database (temporal/engines.h), but for what is about the
// SQLite file itself (its schema versions, its FTS5 table, a file that is no database).

#include "strata/strata.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pg/schema.h"
#include "store/db.h"
#include "store/schema.h"
#include "temporal/engines.h"
#include "text/fts_index.h"
#include "text/keyword_backlog.h"
#include "text/pg_keyword_index.h"
#include "testing/at_once.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "util/clock.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::IsOkAndHolds;
using ::strata::testing::StatusIs;
using ::testing::_;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int64_t kDay = 24 * 60 * 60 * 1000;
constexpr int64_t kMinute = 60 * 1000;

// `days` days from kNow, the "now" of the scenarios.
constexpr int64_t Day(int64_t days) { return kNow + days * kDay; }

// The body a time-axis read found, "<none>" when it found nothing, or the error.
std::string Found(const absl::StatusOr<std::optional<Version>>& found) {
  if (!found.ok()) return "<error: " + found.status().ToString() + ">";
  return found->has_value() ? (*found)->body_json : "<none>";
}

// The keys of a recall's items, best first, or the error as the only element.
std::vector<std::string> Keys(const absl::StatusOr<RecallResult>& result) {
  if (!result.ok()) return {"<error: " + result.status().ToString() + ">"};
  std::vector<std::string> keys;
  for (const RecallItem& item : result->items) keys.push_back(item.version.identity.key);
  return keys;
}

// Waits (60 s at most, against hangs) until the vector index holds every version's vector. The
// background worker loads or builds it; a recall before then may not see every vector.
void WaitIndexed(Store& store) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    absl::StatusOr<Stats> stats = store.GetStats();
    ASSERT_OK(stats);
    ASSERT_TRUE(stats->embeddings.has_value());
    const EmbeddingStats& e = *stats->embeddings;
    if (e.index_state == "ready" && e.pending == 0 && e.indexed == e.vectors) return;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "state " << e.index_state << ", " << e.indexed << " of " << e.vectors << " indexed";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

RecallRequest Query(std::string query) {
  RecallRequest request;
  request.query = std::move(query);
  request.mode = RecallMode::kFts5;
  return request;
}

class StoreTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    path_ = temporal::testing::NewStorePath(GetParam(), dir_, "memory.db");
    ASSERT_FALSE(path_.empty());
    ASSERT_NO_FATAL_FAILURE(OpenStore());
  }

  // Opens path_ with `embedder` ("builtin", the default, or "none"), closing any open store
  // first.
  void OpenStore(const std::string& embedder = "builtin") {
    store_.reset();
    ASSERT_OK_AND_ASSIGN(store_, Store::Open({.path = path_,
                                              .clock = &clock_,
                                              .embedder = embedder,
                                              .background_work = background_work_}));
  }

  static Identity Id(std::string key, std::string category = "facts", std::string workspace = "") {
    return {
        .category = std::move(category), .key = std::move(key), .workspace = std::move(workspace)};
  }

  static WriteRequest Req(const Identity& identity, std::string body_json,
                          std::optional<int64_t> valid_from = std::nullopt,
                          std::optional<int64_t> valid_to = std::nullopt) {
    WriteRequest request;
    request.identity = identity;
    request.body_json = std::move(body_json);
    // These tests are about versions and time; near-duplicate merging is tested in
    // dedup_test.cc, so similar short bodies here stay separate memories.
    request.dedup = false;
    request.valid_from_unix_ms = valid_from;
    request.valid_to_unix_ms = valid_to;
    return request;
  }

  // Remembers and returns the result; fails the test on error.
  WriteResult Write(const Identity& identity, std::string body_json,
                    std::optional<int64_t> valid_from = std::nullopt,
                    std::optional<int64_t> valid_to = std::nullopt) {
    absl::StatusOr<WriteResult> result =
        store_->Remember(Req(identity, std::move(body_json), valid_from, valid_to));
    EXPECT_OK(result);
    return result.ok() ? *result : WriteResult{};
  }

  // Set before SetUp to open store_ without background threads.
  bool background_work_ = true;
  strata::testing::TempDir dir_;
  std::string path_;  // The store: a SQLite file in dir_, or a PostgreSQL database's URI.
  FakeClock clock_{kNow};
  std::unique_ptr<Store> store_;
};

// ---------------------------------------------------------------------------------------------
// The five scenarios of docs/design.md §3.

class Scenario : public StoreTest {};

TEST_P(Scenario, RetroactiveCorrection) {
  const Identity id = Id("alice.title", "people");
  Write(id, R"("senior engineer")", Day(-300), Day(-60));
  clock_.Advance(kMinute);
  Write(id, R"("staff engineer")", Day(-60));

  EXPECT_EQ(Found(store_->ValidAt(id, Day(-150))), R"("senior engineer")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-10))), R"("staff engineer")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-320))), "<none>");
}

TEST_P(Scenario, FutureDatedFacts) {
  const Identity id = Id("alice.salary", "people");
  Write(id, R"("120k")", Day(-400), Day(30));
  clock_.Advance(kMinute);
  Write(id, R"("150k")", Day(30));

  EXPECT_EQ(Found(store_->ValidAt(id, Day(0))), R"("120k")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(45))), R"("150k")");
}

TEST_P(Scenario, BeliefVersusTruth) {
  const Identity id = Id("project.status", "projects");
  const int64_t t0 = clock_.NowUnixMs();
  Write(id, R"("on-track")", Day(-20));
  clock_.Advance(kMinute);
  Write(id, R"("at-risk")", Day(-20));

  EXPECT_EQ(Found(store_->AsOf(id, t0)), R"("on-track")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-10))), R"("at-risk")");
  EXPECT_EQ(Found(store_->Bitemporal(id, t0, Day(-10))), R"("on-track")");
  EXPECT_EQ(Found(store_->Bitemporal(id, clock_.NowUnixMs(), Day(-10))), R"("at-risk")");
}

TEST_P(Scenario, OutOfOrderArrival) {
  const Identity id = Id("model.default", "config");
  Write(id, R"("opus-4-8")", Day(-5));
  clock_.Advance(kMinute);
  Write(id, R"("opus-4-7")", Day(-90), Day(-5));

  EXPECT_EQ(Found(store_->ValidAt(id, Day(-40))), R"("opus-4-7")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-1))), R"("opus-4-8")");
}

TEST_P(Scenario, ClosedPeriod) {
  const Identity id = Id("alice.vehicle", "people");
  Write(id, R"("bike")", Day(-200), Day(-30));

  EXPECT_EQ(Found(store_->ValidAt(id, Day(-100))), R"("bike")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-5))), "<none>");
}

// ---------------------------------------------------------------------------------------------
// Time-axis reads beyond the scenarios.

class TimeAxis : public StoreTest {};

TEST_P(TimeAxis, AsOfUsesHalfOpenBeliefIntervals) {
  const Identity id = Id("k");
  const WriteResult v1 = Write(id, R"("one")");
  clock_.Advance(10);
  const WriteResult v2 = Write(id, R"("two")");

  EXPECT_EQ(Found(store_->AsOf(id, v1.version.recorded_at_unix_ms - 1)), "<none>");
  EXPECT_EQ(Found(store_->AsOf(id, v1.version.recorded_at_unix_ms)), R"("one")");
  EXPECT_EQ(Found(store_->AsOf(id, v2.version.recorded_at_unix_ms - 1)), R"("one")");
  EXPECT_EQ(Found(store_->AsOf(id, v2.version.recorded_at_unix_ms)), R"("two")");
  EXPECT_EQ(Found(store_->AsOf(id, Day(1000))), R"("two")");
}

TEST_P(TimeAxis, LaterVersionStartingEarlierDoesNotCloseNewerOnesPeriod) {
  // Walk semantics: "alpha" [-100, inf) is closed at -50 by the later-recorded "beta"
  // [-50, inf); a still later "gamma" [-200, -150) closes neither.
  const Identity id = Id("k");
  Write(id, R"("alpha")", Day(-100));
  clock_.Advance(1);
  Write(id, R"("beta")", Day(-50));
  clock_.Advance(1);
  Write(id, R"("gamma")", Day(-200), Day(-150));

  EXPECT_EQ(Found(store_->ValidAt(id, Day(-175))), R"("gamma")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-120))), "<none>");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-75))), R"("alpha")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-50) - 1)), R"("alpha")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(-50))), R"("beta")");
  EXPECT_EQ(Found(store_->ValidAt(id, Day(10))), R"("beta")");
}

// The second write is recorded at kNow + 1 while the clock still reads kNow. Reads "now"
// (valid_at, and recall with valid_at) must see every acknowledged write, as Get does.
TEST_P(TimeAxis, ValidAtRightAfterASameMillisecondUpdateSeesTheUpdate) {
  const Identity id = Id("k");
  Write(id, R"("lynx one")");
  Write(id, R"("lynx two")");
  ASSERT_OK_AND_ASSIGN(const Version current, store_->Get(id));
  EXPECT_EQ(current.body_json, R"("lynx two")");
  EXPECT_EQ(Found(store_->ValidAt(id, kNow + 10)), R"("lynx two")");
  RecallRequest valid_at = Query("lynx");
  valid_at.valid_at_unix_ms = kNow + 10;
  ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(valid_at));
  ASSERT_EQ(result.items.size(), 1u);
  EXPECT_EQ(result.items[0].version.body_json, R"("lynx two")");
}

TEST_P(TimeAxis, UnknownIdentityIsNotFoundOnEveryAxis) {
  const Identity id = Id("never");
  EXPECT_EQ(Found(store_->AsOf(id, kNow)), "<none>");
  EXPECT_EQ(Found(store_->ValidAt(id, kNow)), "<none>");
  EXPECT_EQ(Found(store_->Bitemporal(id, kNow, kNow)), "<none>");
  EXPECT_THAT(store_->Get(id), StatusIs(absl::StatusCode::kNotFound, HasSubstr("never")));
}

TEST_P(TimeAxis, EmptyKeyIsRejected) {
  EXPECT_THAT(store_->AsOf(Id(""), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key")));
  EXPECT_THAT(store_->ValidAt(Id("k", ""), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("category")));
}

// Both stores keep text as UTF-8: a name that is not is refused alike, before either sees it
// (PostgreSQL would refuse it with its own words; SQLite would store it).
TEST_P(TimeAxis, TextThatIsNotUtf8IsRejected) {
  for (const Identity& id : {Id("abc\xff"), Id("k", "\xc0\xaf"), Id("k", "c", "w\xed\xa0\x80")}) {
    EXPECT_THAT(store_->Remember({.identity = id, .body_json = R"("x")"}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be valid UTF-8")));
    EXPECT_THAT(store_->AsOf(id, kNow), StatusIs(absl::StatusCode::kInvalidArgument, _));
  }
  EXPECT_THAT(store_->Remember({.identity = Id("k"), .body_json = R"("x")", .tags = {"t\xff"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tags: must be valid")));
  EXPECT_THAT(store_->Remember({.identity = Id("k"), .body_json = R"("x")", .source = "s\xff"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("source: must be valid")));
  EXPECT_THAT(store_->Get(Id("k")), StatusIs(absl::StatusCode::kNotFound, _));
}

// ---------------------------------------------------------------------------------------------
// Remember.

class Remember : public StoreTest {};

TEST_P(Remember, FirstWriteCreatesVersionOneRecordedNowAndValidFromNow) {
  const WriteResult r = Write(Id("k"), R"({"text": "hello"})");
  EXPECT_EQ(r.action, WriteAction::kCreated);
  EXPECT_STREQ(WriteActionName(r.action), "created");
  EXPECT_EQ(r.version.version, 1);
  EXPECT_EQ(r.version.recorded_at_unix_ms, kNow);
  EXPECT_EQ(r.version.valid_from_unix_ms, kNow);
  EXPECT_EQ(r.version.valid_to_unix_ms, std::nullopt);
  EXPECT_EQ(r.version.superseded_at_unix_ms, std::nullopt);
  EXPECT_EQ(r.version.type, "insight");
  EXPECT_EQ(r.version.body_json, R"({"text": "hello"})");

  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("k")));
  EXPECT_EQ(got.body_json, R"({"text": "hello"})");
  EXPECT_EQ(got.memory_id, r.version.memory_id);
  ASSERT_OK_AND_ASSIGN(const Version by_id, store_->GetById(r.version.memory_id));
  EXPECT_EQ(by_id.body_json, R"({"text": "hello"})");
}

TEST_P(Remember, BodyIsStoredVerbatim) {
  const std::string body = "{ \"b\" : 2,\n  \"a\" : [1, 2] }";
  Write(Id("k"), body);
  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("k")));
  EXPECT_EQ(got.body_json, body);
}

TEST_P(Remember, ChangedBodyUpdatesAndSupersedesThePreviousVersion) {
  const WriteResult v1 = Write(Id("k"), R"("one")");
  clock_.Advance(5);
  const WriteResult v2 = Write(Id("k"), R"("two")");
  EXPECT_EQ(v2.action, WriteAction::kUpdated);
  EXPECT_STREQ(WriteActionName(v2.action), "updated");
  EXPECT_EQ(v2.version.version, 2);
  EXPECT_EQ(v2.version.memory_id, v1.version.memory_id);
  EXPECT_EQ(v2.version.recorded_at_unix_ms, kNow + 5);

  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 10, 0));
  ASSERT_EQ(page.versions.size(), 2u);
  EXPECT_EQ(page.versions[1].superseded_at_unix_ms, kNow + 5);
  EXPECT_EQ(page.versions[0].superseded_at_unix_ms, std::nullopt);
}

TEST_P(Remember, SameBodyWithDifferentWhitespaceAndKeyOrderIsUnchanged) {
  const WriteResult v1 = Write(Id("k"), R"({"a":1,"b":[1,2],"c":{"x":"y"}})");
  clock_.Advance(5);
  const WriteResult again =
      Write(Id("k"), "{ \"c\": {\"x\" : \"y\"},\n \"b\" : [ 1, 2 ], \"a\": 1 }");
  EXPECT_EQ(again.action, WriteAction::kUnchanged);
  EXPECT_STREQ(WriteActionName(again.action), "unchanged");
  EXPECT_EQ(again.version.version, 1);
  EXPECT_EQ(again.version.recorded_at_unix_ms, v1.version.recorded_at_unix_ms);

  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 10, 0));
  EXPECT_EQ(page.total, 1);
}

TEST_P(Remember, DifferentArrayOrderIsAChange) {
  Write(Id("k"), R"({"a":[1,2]})");
  EXPECT_EQ(Write(Id("k"), R"({"a":[2,1]})").action, WriteAction::kUpdated);
}

TEST_P(Remember, SameBodyWithSameValidBoundsIsUnchanged) {
  Write(Id("k"), R"("x")", Day(-10), Day(10));
  clock_.Advance(5);
  const WriteResult again = Write(Id("k"), R"("x")", Day(-10), Day(10));
  EXPECT_EQ(again.action, WriteAction::kUnchanged);
  EXPECT_EQ(again.version.version, 1);
}

TEST_P(Remember, SameBodyWithDifferentValidFromIsAChange) {
  Write(Id("k"), R"("x")", Day(-10));
  clock_.Advance(5);
  const WriteResult again = Write(Id("k"), R"("x")", Day(-20));
  EXPECT_EQ(again.action, WriteAction::kUpdated);
  EXPECT_EQ(again.version.version, 2);
  EXPECT_EQ(again.version.valid_from_unix_ms, Day(-20));
}

TEST_P(Remember, SameBodyWithDifferentValidToIsAChange) {
  Write(Id("k"), R"("x")", Day(-10), Day(10));
  clock_.Advance(5);
  const WriteResult again = Write(Id("k"), R"("x")", Day(-10), Day(20));
  EXPECT_EQ(again.action, WriteAction::kUpdated);
  EXPECT_EQ(again.version.valid_to_unix_ms, Day(20));
}

TEST_P(Remember, SameBodyClosingAnOpenPeriodIsAChange) {
  Write(Id("k"), R"("x")", Day(-10));
  clock_.Advance(5);
  const WriteResult again = Write(Id("k"), R"("x")", std::nullopt, Day(10));
  EXPECT_EQ(again.action, WriteAction::kUpdated);
  EXPECT_EQ(again.version.version, 2);
}

TEST_P(Remember, SameMillisecondWritesGetIncreasingRecordedAt) {
  const WriteResult v1 = Write(Id("k"), R"("one")");
  const WriteResult v2 = Write(Id("k"), R"("two")");
  const WriteResult v3 = Write(Id("k"), R"("three")");
  EXPECT_EQ(v1.version.recorded_at_unix_ms, kNow);
  EXPECT_EQ(v2.version.recorded_at_unix_ms, kNow + 1);
  EXPECT_EQ(v3.version.recorded_at_unix_ms, kNow + 2);
  EXPECT_EQ(v1.version.version, 1);
  EXPECT_EQ(v2.version.version, 2);
  EXPECT_EQ(v3.version.version, 3);
  // The default valid_from is the (bumped) recorded time.
  EXPECT_EQ(v3.version.valid_from_unix_ms, kNow + 2);

  // The clock moving less than the bump still yields a later instant.
  clock_.Advance(1);
  const WriteResult v4 = Write(Id("k"), R"("four")");
  EXPECT_EQ(v4.version.recorded_at_unix_ms, kNow + 3);
  clock_.Advance(100);
  const WriteResult v5 = Write(Id("k"), R"("five")");
  EXPECT_EQ(v5.version.recorded_at_unix_ms, kNow + 101);

  // Every belief interval has non-zero width, so each version is visible to AsOf.
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow)), R"("one")");
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow + 1)), R"("two")");
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow + 2)), R"("three")");
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow + 3)), R"("four")");
}

TEST_P(Remember, RecordedAtIsPerIdentity) {
  const WriteResult a = Write(Id("a"), R"("one")");
  const WriteResult b = Write(Id("b"), R"("one")");
  EXPECT_EQ(a.version.recorded_at_unix_ms, kNow);
  EXPECT_EQ(b.version.recorded_at_unix_ms, kNow);
  EXPECT_NE(a.version.memory_id, b.version.memory_id);
}

TEST_P(Remember, NewVersionDoesNotInheritValidPeriod) {
  Write(Id("k"), R"("one")", Day(-10), Day(-5));
  clock_.Advance(5);
  const WriteResult v2 = Write(Id("k"), R"("two")");
  EXPECT_EQ(v2.version.valid_from_unix_ms, kNow + 5);
  EXPECT_EQ(v2.version.valid_to_unix_ms, std::nullopt);
}

TEST_P(Remember, WorkspacesAreSeparateIdentities) {
  Write(Id("k", "facts", ""), R"("global")");
  const WriteResult w = Write(Id("k", "facts", "proj"), R"("scoped")");
  EXPECT_EQ(w.action, WriteAction::kCreated);
  ASSERT_OK_AND_ASSIGN(const Version global, store_->Get(Id("k", "facts", "")));
  ASSERT_OK_AND_ASSIGN(const Version scoped, store_->Get(Id("k", "facts", "proj")));
  EXPECT_EQ(global.body_json, R"("global")");
  EXPECT_EQ(scoped.body_json, R"("scoped")");
}

TEST_P(Remember, KeepsTypeTagsSourceAndImportance) {
  WriteRequest request = Req(Id("k"), R"("x")");
  request.type = "decision";
  request.tags = {"a", "b"};
  request.source = "chat";
  request.importance = 0.75;
  ASSERT_OK(store_->Remember(request));
  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("k")));
  EXPECT_EQ(got.type, "decision");
  EXPECT_THAT(got.tags, ElementsAre("a", "b"));
  EXPECT_EQ(got.source, "chat");
  EXPECT_EQ(got.importance, 0.75);
}

TEST_P(Remember, SurvivesReopening) {
  Write(Id("k"), R"("kept")");
  store_.reset();
  ASSERT_NO_FATAL_FAILURE(OpenStore());
  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("k")));
  EXPECT_EQ(got.body_json, R"("kept")");
}

TEST_P(Remember, ValidToEqualToValidFromIsRejected) {
  EXPECT_THAT(store_->Remember(Req(Id("k"), R"("x")", Day(-1), Day(-1))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_to")));
  EXPECT_THAT(store_->History(Id("k"), 10, 0), StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_P(Remember, ValidToBeforeValidFromIsRejected) {
  EXPECT_THAT(store_->Remember(Req(Id("k"), R"("x")", Day(-1), Day(-2))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_to")));
}

TEST_P(Remember, ValidToAloneBeforeTheRecordedTimeIsRejected) {
  EXPECT_THAT(store_->Remember(Req(Id("k"), R"("x")", std::nullopt, Day(-1))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_to")));
  EXPECT_THAT(store_->Remember(Req(Id("k"), R"("x")", std::nullopt, kNow)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_to")));
  // Nothing was stored by the failed writes, not even the identity.
  EXPECT_THAT(store_->History(Id("k"), 10, 0), StatusIs(absl::StatusCode::kNotFound, _));

  const WriteResult ok = Write(Id("k"), R"("x")", std::nullopt, kNow + 1);
  EXPECT_EQ(ok.version.valid_from_unix_ms, kNow);
  EXPECT_EQ(ok.version.valid_to_unix_ms, kNow + 1);
}

TEST_P(Remember, ValidToAloneEqualToTheBumpedRecordedTimeIsRejected) {
  Write(Id("k"), R"("one")");
  // The clock has not moved, so the next version would be recorded at kNow + 1.
  EXPECT_THAT(store_->Remember(Req(Id("k"), R"("two")", std::nullopt, kNow + 1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_to")));
  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 10, 0));
  EXPECT_EQ(page.total, 1);
  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("k")));
  EXPECT_EQ(got.body_json, R"("one")");
}

TEST_P(Remember, EmptyCategoryOrKeyIsRejected) {
  EXPECT_THAT(store_->Remember(Req(Id("k", ""), R"("x")")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("category")));
  EXPECT_THAT(store_->Remember(Req(Id(""), R"("x")")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key")));
}

TEST_P(Remember, BodyThatIsNotJsonIsRejected) {
  for (const std::string body :
       {"not json", "{", "", "{\"a\":1} trailing", "'single'", "{\"a\":}", "[1,]"}) {
    EXPECT_THAT(store_->Remember(Req(Id("k"), body)),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("body_json")))
        << "body: " << body;
  }
  EXPECT_THAT(store_->History(Id("k"), 10, 0), StatusIs(absl::StatusCode::kNotFound, _));
}

// Two agent hosts launching strata on a file that does not exist yet, at the same moment:
// both create, migrate and stamp it (signature scheme, embedding space). Every write of
// that start waits for the lock; none fails at once. Then each sees the other's writes.
TEST(StoreOpen, TwoStoresCreatingOneFileAtOnceBothOpen) {
  strata::testing::TempDir dir;
  for (int i = 0; i < 40; ++i) {
    const std::string path = dir.File(absl::StrCat("race", i, ".db"));
    absl::StatusOr<std::unique_ptr<Store>> a, b;
    strata::testing::AtOnce([&] { a = Store::Open({.path = path}); },
                            [&] { b = Store::Open({.path = path}); });
    ASSERT_OK(a) << "attempt " << i;
    ASSERT_OK(b) << "attempt " << i;
    WriteRequest request;
    request.identity = {.category = "facts", .key = "shared"};
    request.body_json = R"({"text": "written by the first host"})";
    ASSERT_OK((*a)->Remember(request));
    ASSERT_OK_AND_ASSIGN(Version v, (*b)->Get(request.identity));
    EXPECT_EQ(v.body_json, request.body_json);
  }
}

// Remembers `body` in a fresh store. Returns 0 when it is rejected with InvalidArgument
// naming body_json, 1 for another error, 2 when it is stored.
int RememberRejectsBody(const std::string& body) {
  strata::testing::TempDir dir;
  FakeClock clock(kNow);
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open({.path = dir.File("deep.db"), .clock = &clock});
  if (!store.ok()) return 3;
  WriteRequest request;
  request.identity = {.category = "facts", .key = "deep"};
  request.body_json = body;
  const absl::StatusOr<WriteResult> result = (*store)->Remember(request);
  if (result.ok()) return 2;
  return result.status().code() == absl::StatusCode::kInvalidArgument &&
                 absl::StrContains(result.status().message(), "body_json")
             ? 0
             : 1;
}

// docs/design.md §9: bad input, deep nesting included, never kills the process; it gets a clear
// error. Run in a child process so that a crash fails this test only.
TEST(RememberDeathTest, DeeplyNestedBodyIsRejectedWithoutCrashing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  constexpr int kDepth = 100000;  // A 200 KB body, far below any line limit.
  const std::string body = std::string(kDepth, '[') + std::string(kDepth, ']');
  EXPECT_EXIT(std::exit(RememberRejectsBody(body)), ::testing::ExitedWithCode(0), "");
}

TEST_P(Remember, AnyJsonTextIsAccepted) {
  for (const std::string body : {R"("a string")", R"({"a":1})", "[1,2]", "42", "null"}) {
    EXPECT_OK(store_->Remember(Req(Id("k"), body))) << "body: " << body;
    clock_.Advance(1);
  }
}

// ---------------------------------------------------------------------------------------------
// Forget.

class Forget : public StoreTest {};

TEST_P(Forget, ReturnsTrueThenFalse) {
  Write(Id("k"), R"("x")");
  ASSERT_OK_AND_ASSIGN(const bool first, store_->Forget(Id("k"), "obsolete"));
  EXPECT_TRUE(first);
  ASSERT_OK_AND_ASSIGN(const bool again, store_->Forget(Id("k"), "obsolete"));
  EXPECT_FALSE(again);
}

TEST_P(Forget, UnknownIdentityReturnsFalse) {
  ASSERT_OK_AND_ASSIGN(const bool forgotten, store_->Forget(Id("never"), ""));
  EXPECT_FALSE(forgotten);
}

TEST_P(Forget, EmptyKeyIsRejected) {
  EXPECT_THAT(store_->Forget(Id(""), ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key")));
}

TEST_P(Forget, GetIsNotFoundAfterwards) {
  const WriteResult v1 = Write(Id("k"), R"("x")");
  ASSERT_OK(store_->Forget(Id("k"), ""));
  EXPECT_THAT(store_->Get(Id("k")), StatusIs(absl::StatusCode::kNotFound, HasSubstr("forgotten")));
  EXPECT_THAT(store_->GetById(v1.version.memory_id), StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_P(Forget, PastBeliefsStayVisibleToAsOfAndHistory) {
  Write(Id("k"), R"("x")");
  clock_.Advance(10);
  ASSERT_OK(store_->Forget(Id("k"), "wrong"));
  const int64_t forgotten_at = kNow + 10;

  EXPECT_EQ(Found(store_->AsOf(Id("k"), forgotten_at - 1)), R"("x")");
  EXPECT_EQ(Found(store_->AsOf(Id("k"), forgotten_at)), "<none>");
  EXPECT_EQ(Found(store_->Bitemporal(Id("k"), forgotten_at - 1, kNow)), R"("x")");
  EXPECT_EQ(Found(store_->ValidAt(Id("k"), kNow)), "<none>");

  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 10, 0));
  EXPECT_EQ(page.total, 1);
  ASSERT_EQ(page.versions.size(), 1u);
  EXPECT_EQ(page.versions[0].body_json, R"("x")");
  EXPECT_EQ(page.versions[0].superseded_at_unix_ms, forgotten_at);
  EXPECT_THAT(page.retracted_at_unix_ms, ElementsAre(forgotten_at));
}

TEST_P(Forget, InTheSameMillisecondEndsBeliefOneMillisecondLater) {
  Write(Id("k"), R"("x")");
  ASSERT_OK(store_->Forget(Id("k"), ""));
  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 10, 0));
  EXPECT_THAT(page.retracted_at_unix_ms, ElementsAre(kNow + 1));
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow)), R"("x")");
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow + 1)), "<none>");
}

TEST_P(Forget, RecallNoLongerReturnsIt) {
  Write(Id("k"), R"("zebra crossing")");
  Write(Id("other"), R"("zebra stripes")");
  ASSERT_THAT(Keys(store_->Recall(Query("zebra"))), UnorderedElementsAre("k", "other"));
  ASSERT_OK(store_->Forget(Id("k"), ""));
  EXPECT_THAT(Keys(store_->Recall(Query("zebra"))), ElementsAre("other"));
  EXPECT_THAT(Keys(store_->Recall(Query(""))), ElementsAre("other"));
  clock_.Advance(10);
  RecallRequest valid_at = Query("zebra");
  valid_at.valid_at_unix_ms = kNow;
  EXPECT_THAT(Keys(store_->Recall(valid_at)), ElementsAre("other"));
}

// The forget below is recorded at kNow + 1 (one past the write, the clock having not moved).
// docs/design.md §3: valid_at(v) is bitemporal(now, v), and a forget ends belief "now": once
// Forget has returned, reads "now" must not see the forgotten version, even while the clock
// has not yet reached the bumped instant.
TEST_P(Forget, ValidAtRightAfterASameMillisecondForgetFindsNothing) {
  Write(Id("k"), R"("zebra crossing")");
  ASSERT_OK(store_->Forget(Id("k"), ""));
  EXPECT_THAT(store_->Get(Id("k")), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_EQ(Found(store_->ValidAt(Id("k"), kNow)), "<none>");
  RecallRequest valid_at = Query("zebra");
  valid_at.valid_at_unix_ms = kNow;
  EXPECT_THAT(Keys(store_->Recall(valid_at)), IsEmpty());
}

TEST_P(Forget, RememberingAgainStartsANewVersion) {
  const WriteResult v1 = Write(Id("k"), R"("x")");
  clock_.Advance(10);
  ASSERT_OK(store_->Forget(Id("k"), ""));
  const int64_t forgotten_at = kNow + 10;
  clock_.Advance(10);
  // The same body as before the forget: still a new version, since nothing is current.
  const WriteResult v2 = Write(Id("k"), R"("x")");
  EXPECT_NE(v2.action, WriteAction::kUnchanged);
  EXPECT_EQ(v2.version.version, 2);
  EXPECT_EQ(v2.version.memory_id, v1.version.memory_id);
  EXPECT_EQ(v2.version.recorded_at_unix_ms, kNow + 20);
  EXPECT_EQ(v2.version.valid_from_unix_ms, kNow + 20);

  ASSERT_OK_AND_ASSIGN(const Version got, store_->Get(Id("k")));
  EXPECT_EQ(got.version, 2);
  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 10, 0));
  EXPECT_EQ(page.total, 2);
  EXPECT_THAT(page.retracted_at_unix_ms, ElementsAre(forgotten_at));

  // Between the forget and the revival nothing was believed, on either read.
  EXPECT_EQ(Found(store_->AsOf(Id("k"), forgotten_at + 5)), "<none>");
  EXPECT_EQ(Found(store_->Bitemporal(Id("k"), forgotten_at + 5, kNow + 1)), "<none>");
  // Before the forget the first version; after the revival the second.
  EXPECT_EQ(Found(store_->Bitemporal(Id("k"), forgotten_at - 1, kNow + 1)), R"("x")");
  ASSERT_OK_AND_ASSIGN(std::optional<Version> now, store_->ValidAt(Id("k"), kNow + 25));
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->version, 2);
}

TEST_P(Forget, RevivalStartsAfreshWithoutTheForgottenPeriods) {
  // v1 is valid from kNow on; after the forget, v2 is valid only from kNow + 20. An instant
  // before that is no longer covered by v1: the forget ended belief in the whole identity.
  Write(Id("k"), R"("old")");
  clock_.Advance(10);
  ASSERT_OK(store_->Forget(Id("k"), ""));
  clock_.Advance(10);
  Write(Id("k"), R"("new")");
  EXPECT_EQ(Found(store_->ValidAt(Id("k"), kNow + 5)), "<none>");
  EXPECT_EQ(Found(store_->ValidAt(Id("k"), kNow + 20)), R"("new")");
}

TEST_P(Forget, RevivalInTheSameMillisecondIsRecordedAfterTheForget) {
  Write(Id("k"), R"("x")");
  ASSERT_OK(store_->Forget(Id("k"), ""));  // At kNow + 1.
  const WriteResult v2 = Write(Id("k"), R"("y")");
  EXPECT_EQ(v2.version.recorded_at_unix_ms, kNow + 2);
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow + 1)), "<none>");
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow + 2)), R"("y")");
}

// ---------------------------------------------------------------------------------------------
// Purge.

class Purge : public StoreTest {};

TEST_P(Purge, ErasesEveryVersion) {
  Write(Id("k"), R"("walrus one")");
  clock_.Advance(10);
  Write(Id("k"), R"("walrus two")");
  clock_.Advance(10);
  Write(Id("keep"), R"("walrus kept")");

  ASSERT_OK_AND_ASSIGN(const int64_t erased, store_->Purge(Id("k")));
  EXPECT_EQ(erased, 2);

  EXPECT_THAT(store_->History(Id("k"), 10, 0), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_THAT(store_->Get(Id("k")), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_EQ(Found(store_->AsOf(Id("k"), kNow + 5)), "<none>");
  EXPECT_EQ(Found(store_->Bitemporal(Id("k"), kNow + 5, kNow + 5)), "<none>");
  EXPECT_THAT(Keys(store_->Recall(Query("walrus"))), ElementsAre("keep"));
  EXPECT_THAT(Keys(store_->Recall(Query(""))), ElementsAre("keep"));
}

TEST_P(Purge, RecallInThePastNeverReturnsIt) {
  Write(Id("k"), R"("narwhal one")");
  clock_.Advance(10);
  Write(Id("k"), R"("narwhal two")");
  clock_.Advance(10);
  ASSERT_OK(store_->Purge(Id("k")));

  for (const std::string query : {"narwhal", "one", ""}) {
    for (const int64_t t : {kNow, kNow + 5, kNow + 10, kNow + 15}) {
      RecallRequest as_of = Query(query);
      as_of.as_of_unix_ms = t;
      EXPECT_THAT(Keys(store_->Recall(as_of)), IsEmpty()) << query << " as_of " << t;
      RecallRequest valid_at = Query(query);
      valid_at.valid_at_unix_ms = t;
      EXPECT_THAT(Keys(store_->Recall(valid_at)), IsEmpty()) << query << " valid_at " << t;
      RecallRequest both = valid_at;
      both.as_of_unix_ms = t;
      EXPECT_THAT(Keys(store_->Recall(both)), IsEmpty()) << query << " both " << t;
    }
  }
}

// Real erasure: neither the version rows nor their keyword index entries remain in the store
// (SQLite's FTS5 table, PostgreSQL's postings of text/pg_keyword_index.h).
TEST_P(Purge, LeavesNoVersionRowsOrIndexEntries) {
  Write(Id("k"), R"("ptarmigan one")");
  clock_.Advance(1);
  Write(Id("k"), R"("ptarmigan two")");
  ASSERT_OK(store_->Forget(Id("k"), ""));
  Write(Id("kept"), R"("grouse")");
  ASSERT_OK(store_->Purge(Id("k")));

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> db,
                       temporal::testing::Connect(GetParam(), path_));
  auto count = [&db](const char* sql) -> int64_t {
    absl::StatusOr<store::Stmt> s = db->Prepare(sql);
    EXPECT_OK(s);
    if (!s.ok()) return -1;
    absl::StatusOr<bool> row = s->Step();
    EXPECT_TRUE(row.ok() && *row);
    return row.ok() && *row ? s->Int(0) : -1;
  };
  EXPECT_EQ(count("SELECT count(*) FROM versions"), 1);
  if (GetParam() == store::Dialect::kSqlite) {
    EXPECT_EQ(count("SELECT count(*) FROM fts WHERE fts MATCH 'ptarmigan'"), 0);
    EXPECT_EQ(count("SELECT count(*) FROM fts WHERE fts MATCH 'grouse'"), 1);
  } else {
    EXPECT_EQ(count("SELECT count(*) FROM text_documents, unnest(terms) AS k (key) "
                    "WHERE substr(k.key, 2) LIKE 'ptarmigan%'"), 0);
    EXPECT_EQ(count("SELECT count(*) FROM text_documents, unnest(terms) AS k (key) "
                    "WHERE substr(k.key, 2) LIKE 'grous%'"), 1);
  }
}

TEST_P(Purge, ForgottenIdentityIsPurgedToo) {
  Write(Id("k"), R"("x")");
  ASSERT_OK(store_->Forget(Id("k"), ""));
  ASSERT_OK_AND_ASSIGN(const int64_t erased, store_->Purge(Id("k")));
  EXPECT_EQ(erased, 1);
  EXPECT_THAT(store_->History(Id("k"), 10, 0), StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_P(Purge, UnknownIdentityErasesNothing) {
  ASSERT_OK_AND_ASSIGN(const int64_t erased, store_->Purge(Id("never")));
  EXPECT_EQ(erased, 0);
}

TEST_P(Purge, RememberingAfterPurgeStartsAtVersionOne) {
  Write(Id("k"), R"("one")");
  clock_.Advance(1);
  Write(Id("k"), R"("two")");
  ASSERT_OK(store_->Purge(Id("k")));
  const WriteResult again = Write(Id("k"), R"("one")");
  EXPECT_EQ(again.action, WriteAction::kCreated);
  EXPECT_EQ(again.version.version, 1);
  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 10, 0));
  EXPECT_EQ(page.total, 1);
  EXPECT_THAT(page.retracted_at_unix_ms, IsEmpty());
}

TEST_P(Purge, NeverGivesAPurgedIdToAnotherMemory) {
  const WriteResult first = Write(Id("a"), R"("the first note")");
  const WriteResult newest = Write(Id("b"), R"("the newest note, purged next")");
  ASSERT_OK(store_->Purge(Id("b")));
  // SQLite alone would hand the largest rowid + 1 out again: b's id.
  const WriteResult later = Write(Id("c"), R"("a later, different note")");
  EXPECT_GT(later.version.memory_id, newest.version.memory_id);
  const WriteResult again = Write(Id("b"), R"("b, written again")");
  EXPECT_GT(again.version.memory_id, later.version.memory_id);
  EXPECT_THAT(store_->GetById(newest.version.memory_id), StatusIs(absl::StatusCode::kNotFound, _));
  ASSERT_OK_AND_ASSIGN(const Version a, store_->GetById(first.version.memory_id));
  EXPECT_EQ(a.body_json, R"("the first note")");
}

// A version id labels the version's vector in the index; given again, the index would hold
// the purged version's vector under the new version's label.
TEST_P(Purge, NeverGivesAPurgedVersionIdToAnotherVersion) {
  Write(Id("a"), R"("the first note")");
  Write(Id("b"), R"("the newest note, purged next")");
  Write(Id("b"), R"("its second version, the largest version id")");
  auto version_ids = [&] {
    std::vector<int64_t> ids;
    absl::StatusOr<std::unique_ptr<store::Db>> db = temporal::testing::Connect(GetParam(), path_);
    EXPECT_OK(db);
    if (!db.ok()) return ids;
    absl::StatusOr<store::Stmt> s = (*db)->Prepare("SELECT id FROM versions ORDER BY id");
    EXPECT_OK(s);
    while (s.ok() && s->Step().value_or(false)) ids.push_back(s->Int(0));
    return ids;
  };
  const int64_t largest = version_ids().back();
  ASSERT_OK(store_->Purge(Id("b")));
  ASSERT_EQ(version_ids().size(), 1u);
  Write(Id("c"), R"("a later, different note")");
  Write(Id("a"), R"("the first note, second version")");
  const std::vector<int64_t> after = version_ids();
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[1], largest + 1);
  EXPECT_EQ(after[2], largest + 2);
}

// ---------------------------------------------------------------------------------------------
// History.

class History : public StoreTest {
 protected:
  void WriteFive() {
    for (int i = 1; i <= 5; ++i) {
      Write(Id("k"), absl::StrCat("\"v", i, "\""));
      clock_.Advance(1);
    }
  }
  static std::vector<int64_t> Numbers(const HistoryPage& page) {
    std::vector<int64_t> out;
    for (const Version& v : page.versions) out.push_back(v.version);
    return out;
  }
};

TEST_P(History, ListsNewestFirstWithTotal) {
  WriteFive();
  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 100, 0));
  EXPECT_EQ(page.total, 5);
  EXPECT_THAT(Numbers(page), ElementsAre(5, 4, 3, 2, 1));
  EXPECT_EQ(page.versions[0].body_json, R"("v5")");
  EXPECT_EQ(page.versions[4].body_json, R"("v1")");
  for (size_t i = 0; i + 1 < page.versions.size(); ++i) {
    EXPECT_GT(page.versions[i].recorded_at_unix_ms, page.versions[i + 1].recorded_at_unix_ms);
    EXPECT_EQ(page.versions[i + 1].superseded_at_unix_ms, page.versions[i].recorded_at_unix_ms);
  }
}

TEST_P(History, PagesWithLimitAndOffset) {
  WriteFive();
  ASSERT_OK_AND_ASSIGN(const HistoryPage first, store_->History(Id("k"), 2, 0));
  EXPECT_THAT(Numbers(first), ElementsAre(5, 4));
  EXPECT_EQ(first.total, 5);
  ASSERT_OK_AND_ASSIGN(const HistoryPage second, store_->History(Id("k"), 2, 2));
  EXPECT_THAT(Numbers(second), ElementsAre(3, 2));
  ASSERT_OK_AND_ASSIGN(const HistoryPage last, store_->History(Id("k"), 2, 4));
  EXPECT_THAT(Numbers(last), ElementsAre(1));
  ASSERT_OK_AND_ASSIGN(const HistoryPage beyond, store_->History(Id("k"), 2, 5));
  EXPECT_THAT(Numbers(beyond), IsEmpty());
  EXPECT_EQ(beyond.total, 5);
}

TEST_P(History, BadPagingIsRejected) {
  WriteFive();
  EXPECT_THAT(store_->History(Id("k"), 0, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit")));
  EXPECT_THAT(store_->History(Id("k"), 1001, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit")));
  EXPECT_THAT(store_->History(Id("k"), 10, -1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("offset")));
  EXPECT_THAT(store_->History(Id("k"), 10, kMaxHistoryOffset + 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("offset")));
  EXPECT_OK(store_->History(Id("k"), kMaxHistoryLimit, kMaxHistoryOffset));
}

TEST_P(History, UnknownIdentityIsNotFound) {
  EXPECT_THAT(store_->History(Id("never"), 10, 0),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("never")));
}

// ---------------------------------------------------------------------------------------------
// RememberBatch.

class RememberBatch : public StoreTest {};

TEST_P(RememberBatch, InvalidItemsFailAloneAndTheOthersAreStored) {
  const std::vector<WriteRequest> requests = {
      Req(Id("a"), R"("first")"),
      Req(Id(""), R"("empty key")"),
      Req(Id("b"), R"("second")"),
      Req(Id("c"), "not json"),
      Req(Id("d"), R"("bad period")", Day(-1), Day(-2)),
      Req(Id("e"), R"("third")"),
  };
  ASSERT_OK_AND_ASSIGN(const auto results, store_->RememberBatch(requests, {}));
  ASSERT_EQ(results.size(), requests.size());
  EXPECT_OK(results[0]);
  EXPECT_THAT(results[1], StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key")));
  EXPECT_OK(results[2]);
  EXPECT_THAT(results[3], StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("body_json")));
  EXPECT_THAT(results[4], StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_to")));
  EXPECT_OK(results[5]);

  for (const std::string key : {"a", "b", "e"}) EXPECT_OK(store_->Get(Id(key))) << key;
  for (const std::string key : {"c", "d"}) {
    EXPECT_THAT(store_->History(Id(key), 10, 0), StatusIs(absl::StatusCode::kNotFound, _)) << key;
  }
  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  EXPECT_EQ(stats.total_memories, 3);
}

TEST_P(RememberBatch, FailureAfterTheIdentityWasCreatedLeavesNoTrace) {
  // valid_to alone before the recorded time is found only once the recorded time is known,
  // after the new identity has been inserted; the item must still fail without a trace.
  const std::vector<WriteRequest> requests = {
      Req(Id("k"), R"("too late")", std::nullopt, Day(-1)),
      Req(Id("k"), R"("fine")"),
  };
  ASSERT_OK_AND_ASSIGN(const auto results, store_->RememberBatch(requests, {}));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_THAT(results[0], StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_to")));
  ASSERT_OK(results[1]);
  EXPECT_EQ(results[1]->action, WriteAction::kCreated);
  EXPECT_EQ(results[1]->version.version, 1);
  EXPECT_EQ(results[1]->version.recorded_at_unix_ms, kNow);
  ASSERT_OK_AND_ASSIGN(const HistoryPage page, store_->History(Id("k"), 10, 0));
  EXPECT_EQ(page.total, 1);
}

TEST_P(RememberBatch, VersionsOfOneIdentityGetIncreasingRecordedAt) {
  const std::vector<WriteRequest> requests = {
      Req(Id("k"), R"("one")"),
      Req(Id("k"), R"("two")"),
      Req(Id("k"), R"( "two" )"),
      Req(Id("k"), R"("three")"),
  };
  ASSERT_OK_AND_ASSIGN(const auto results, store_->RememberBatch(requests, {}));
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) ASSERT_OK(r);
  EXPECT_EQ(results[0]->action, WriteAction::kCreated);
  EXPECT_EQ(results[1]->action, WriteAction::kUpdated);
  EXPECT_EQ(results[2]->action, WriteAction::kUnchanged);
  EXPECT_EQ(results[3]->action, WriteAction::kUpdated);
  EXPECT_EQ(results[0]->version.recorded_at_unix_ms, kNow);
  EXPECT_EQ(results[1]->version.recorded_at_unix_ms, kNow + 1);
  EXPECT_EQ(results[3]->version.recorded_at_unix_ms, kNow + 2);
  EXPECT_EQ(results[3]->version.version, 3);
}

TEST_P(RememberBatch, EmptyBatchReturnsNoResults) {
  ASSERT_OK_AND_ASSIGN(const auto results, store_->RememberBatch({}, {}));
  EXPECT_THAT(results, IsEmpty());
}

// ---------------------------------------------------------------------------------------------
// Recall.

class Recall : public StoreTest {
 protected:
  void Add(const std::string& key, const std::string& body, const std::string& category = "facts",
           const std::string& type = "insight", std::vector<std::string> tags = {},
           const std::string& workspace = "") {
    WriteRequest request = Req(Id(key, category, workspace), body);
    request.type = type;
    request.tags = std::move(tags);
    ASSERT_OK(store_->Remember(request));
    clock_.Advance(1);
  }
};

TEST_P(Recall, Bm25PutsTheBetterMatchFirst) {
  Add("weak", R"({"text": "we talked about lunch, the weather, travel plans, and once about )"
              R"(kubernetes, then returned to lunch and dinner menus for the week ahead"})");
  Add("strong", R"({"text": "kubernetes kubernetes cluster upgrade for kubernetes"})");
  Add("none", R"({"text": "nothing relevant here"})");
  ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(Query("kubernetes")));
  EXPECT_THAT(Keys(result), ElementsAre("strong", "weak"));
  ASSERT_EQ(result.items.size(), 2u);
  EXPECT_GT(result.items[0].score, result.items[1].score);
  EXPECT_EQ(result.items[0].fts5_rank, 1);
  EXPECT_EQ(result.items[1].fts5_rank, 2);
  EXPECT_EQ(result.mode, RecallMode::kFts5);
}

TEST_P(Recall, MoreMatchingTermsRankHigher) {
  Add("one", R"("postgres tuning notes")");
  Add("two", R"("postgres vacuum tuning notes")");
  EXPECT_THAT(Keys(store_->Recall(Query("postgres vacuum"))), ElementsAre("two", "one"));
}

TEST_P(Recall, AutoModeRunsFts5WithoutEmbeddings) {
  // The default embedder's worker would soon give "k" a vector (and auto would turn hybrid).
  ASSERT_NO_FATAL_FAILURE(OpenStore("none"));
  Add("k", R"("ocelot")");
  RecallRequest request = Query("ocelot");
  request.mode = RecallMode::kAuto;
  ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(request));
  EXPECT_EQ(result.mode, RecallMode::kFts5);
  EXPECT_THAT(Keys(result), ElementsAre("k"));
}

TEST_P(Recall, PorterStemmingMatchesOtherWordForms) {
  Add("runner", R"({"text": "she runs every morning"})");
  Add("other", R"({"text": "he swims"})");
  EXPECT_THAT(Keys(store_->Recall(Query("running"))), ElementsAre("runner"));
  EXPECT_THAT(Keys(store_->Recall(Query("RUN"))), ElementsAre("runner"));
}

TEST_P(Recall, MatchesKeyAndCategoryToo) {
  Add("favourite-colour", R"("blue")", "preferences");
  EXPECT_THAT(Keys(store_->Recall(Query("colour"))), ElementsAre("favourite-colour"));
  EXPECT_THAT(Keys(store_->Recall(Query("preferences"))), ElementsAre("favourite-colour"));
}

TEST_P(Recall, SearchesOnlyStringValuesOfTheBody) {
  Add("k", R"({"marmot": 12, "list": ["lynx", {"deep": "badger"}]})");
  EXPECT_THAT(Keys(store_->Recall(Query("badger"))), ElementsAre("k"));
  EXPECT_THAT(Keys(store_->Recall(Query("lynx"))), ElementsAre("k"));
  EXPECT_THAT(Keys(store_->Recall(Query("marmot"))), IsEmpty());
}

TEST_P(Recall, ReturnsOnlyTheCurrentVersion) {
  Add("k", R"("penguin colony")");
  Add("k", R"("albatross colony")");
  ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(Query("colony")));
  ASSERT_EQ(result.items.size(), 1u);
  EXPECT_EQ(result.items[0].version.version, 2);
  EXPECT_EQ(result.items[0].version.body_json, R"("albatross colony")");
  EXPECT_THAT(Keys(store_->Recall(Query("penguin"))), IsEmpty());
}

TEST_P(Recall, FiltersByCategoryTypeWorkspaceAndTags) {
  Add("a", R"("shared word")", "cat1", "insight", {"x", "y"}, "");
  Add("b", R"("shared word")", "cat2", "insight", {"x"}, "");
  Add("c", R"("shared word")", "cat1", "decision", {"y"}, "ws");
  Add("d", R"("shared word")", "cat2", "decision", {}, "ws");

  auto with = [](auto set) {
    RecallRequest r = Query("shared");
    set(r);
    return r;
  };
  EXPECT_THAT(Keys(store_->Recall(Query("shared"))), UnorderedElementsAre("a", "b", "c", "d"));
  EXPECT_THAT(Keys(store_->Recall(with([](RecallRequest& r) { r.filters.category = "cat1"; }))),
              UnorderedElementsAre("a", "c"));
  EXPECT_THAT(Keys(store_->Recall(with([](RecallRequest& r) { r.filters.type = "decision"; }))),
              UnorderedElementsAre("c", "d"));
  EXPECT_THAT(Keys(store_->Recall(with([](RecallRequest& r) { r.filters.workspace = "ws"; }))),
              UnorderedElementsAre("c", "d"));
  EXPECT_THAT(Keys(store_->Recall(with([](RecallRequest& r) { r.filters.workspace = ""; }))),
              UnorderedElementsAre("a", "b"));
  EXPECT_THAT(Keys(store_->Recall(with([](RecallRequest& r) { r.filters.tags = {"x"}; }))),
              UnorderedElementsAre("a", "b"));
  EXPECT_THAT(Keys(store_->Recall(with([](RecallRequest& r) {
                r.filters.tags = {"x", "y"};
              }))),
              ElementsAre("a"));
  EXPECT_THAT(Keys(store_->Recall(with([](RecallRequest& r) {
                r.filters.category = "cat2";
                r.filters.type = "decision";
                r.filters.workspace = "ws";
              }))),
              ElementsAre("d"));
  EXPECT_THAT(Keys(store_->Recall(with([](RecallRequest& r) { r.filters.tags = {"z"}; }))),
              IsEmpty());
}

TEST_P(Recall, FiltersApplyToTheEmptyQueryToo) {
  Add("a", R"("one")", "cat1");
  Add("b", R"("two")", "cat2");
  RecallRequest request = Query("");
  request.filters.category = "cat2";
  EXPECT_THAT(Keys(store_->Recall(request)), ElementsAre("b"));
}

TEST_P(Recall, FiltersDoNotShrinkResultsBelowLimit) {
  // Many better-matching memories outside the filter must not crowd out the matching ones.
  for (int i = 0; i < 30; ++i) {
    Add(absl::StrCat("other", i), R"("heron heron heron")", "birds");
  }
  for (int i = 0; i < 5; ++i) {
    Add(absl::StrCat("wanted", i), R"("a heron seen once near the lake shore today")", "notes");
  }
  RecallRequest request = Query("heron");
  request.limit = 5;
  request.filters.category = "notes";
  ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(request));
  EXPECT_EQ(result.items.size(), 5u);
}

TEST_P(Recall, LimitAndOffsetPage) {
  for (int i = 0; i < 5; ++i) {
    // i + 1 occurrences: "k4" is the best match, "k0" the worst.
    std::string text;
    for (int j = 0; j <= i; ++j) text += "gecko ";
    Add(absl::StrCat("k", i), absl::StrCat("\"", text, "filler words to pad\""));
  }
  RecallRequest request = Query("gecko");
  request.limit = 2;
  ASSERT_OK_AND_ASSIGN(const RecallResult first, store_->Recall(request));
  EXPECT_THAT(Keys(first), ElementsAre("k4", "k3"));
  request.offset = 2;
  ASSERT_OK_AND_ASSIGN(const RecallResult second, store_->Recall(request));
  EXPECT_THAT(Keys(second), ElementsAre("k2", "k1"));
  ASSERT_EQ(second.items.size(), 2u);
  EXPECT_EQ(second.items[0].fts5_rank, 3);
  EXPECT_EQ(second.items[1].fts5_rank, 4);
  request.offset = 4;
  EXPECT_THAT(Keys(store_->Recall(request)), ElementsAre("k0"));
  request.offset = 5;
  EXPECT_THAT(Keys(store_->Recall(request)), IsEmpty());
}

TEST_P(Recall, LimitOutOfRangeIsRejectedNamingLimit) {
  for (const int limit : {0, -1, 1001, 5000}) {
    RecallRequest request = Query("x");
    request.limit = limit;
    EXPECT_THAT(store_->Recall(request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit")))
        << limit;
  }
  RecallRequest request = Query("x");
  request.limit = 1000;
  EXPECT_OK(store_->Recall(request));
}

TEST_P(Recall, NegativeOffsetIsRejectedNamingOffset) {
  RecallRequest request = Query("x");
  request.offset = -1;
  EXPECT_THAT(store_->Recall(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("offset")));
}

TEST_P(Recall, DenseAndHybridNeedEmbeddings) {
  ASSERT_NO_FATAL_FAILURE(OpenStore("none"));
  Add("k", R"("x marks the spot")");
  for (RecallMode mode : {RecallMode::kDense, RecallMode::kHybrid}) {
    RecallRequest request = Query("x");
    request.mode = mode;
    EXPECT_THAT(store_->Recall(request),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         absl::StrCat("mode: \"", RecallModeName(mode),
                                      "\" needs an embedder, and this server runs with "
                                      "--embedder none; use \"fts5\" or leave mode out")))
        << RecallModeName(mode);
  }
  // Keyword recall is unaffected.
  EXPECT_THAT(Keys(store_->Recall(Query("spot"))), ElementsAre("k"));
}

TEST_P(Recall, DenseAndHybridRunWithTheDefaultEmbedder) {
  Add("tea", R"({"text": "She drinks green tea after lunch"})");
  Add("coffee", R"({"text": "She drinks black coffee"})");
  Add("car", R"({"text": "He parks the blue car in the garage"})");
  // Vectors now rather than whenever the background worker gets to them.
  ASSERT_OK_AND_ASSIGN(const EmbedResult embedded, store_->Embed({.limit = 100}, {}));
  ASSERT_EQ(embedded.remaining, 0);
  ASSERT_NO_FATAL_FAILURE(WaitIndexed(*store_));
  for (RecallMode mode : {RecallMode::kDense, RecallMode::kHybrid}) {
    SCOPED_TRACE(RecallModeName(mode));
    RecallRequest request = Query("green tea");
    request.mode = mode;
    ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(request));
    EXPECT_EQ(result.mode, mode);
    // Dense ranks the memories above the similarity floor (not the car); the keyword arm
    // finds only the tea.
    ASSERT_THAT(Keys(result), ElementsAre("tea", "coffee"));
    EXPECT_EQ(result.items[0].dense_rank, 1);
    EXPECT_EQ(result.items[1].dense_rank, 2);
    EXPECT_EQ(result.items[0].fts5_rank,
              mode == RecallMode::kHybrid ? std::optional<int>(1) : std::nullopt);
    EXPECT_EQ(result.items[1].fts5_rank, std::nullopt);
    EXPECT_GT(result.items[0].score, result.items[1].score);
  }
}

TEST_P(Recall, QueriesWithFts5SyntaxNeverError) {
  Add("k", R"({"text": "alpha beta gamma near the text column"})");
  const std::vector<std::string> queries = {
      "\"",
      "\"alpha",
      "alpha\"",
      "\"\"",
      "'",
      "alpha AND",
      "AND",
      "OR",
      "NOT",
      "alpha NOT beta",
      "alpha OR OR beta",
      "NEAR(alpha beta, 2)",
      "NEAR(",
      "alpha*",
      "*",
      "al*pha",
      "^alpha",
      "^",
      "text:alpha",
      "key:",
      "{text key}:alpha",
      "-alpha",
      "+",
      "(alpha",
      "alpha)",
      "((()))",
      "alpha:beta:gamma",
      "col\"umn",
      "\\",
      "%_",
      "\x01\x02",
      std::string("a\0b", 3),
      "\xff\xfe",
      "ünïcödé ümlaut",
      "😀 emoji",
      std::string(5000, '('),
      std::string(10000, 'x'),
      "a b c d e f g h i j k l m n o p q r s t u v w x y z "
      "aa bb cc dd ee ff gg hh ii jj kk ll mm nn oo pp qq rr ss tt uu vv ww xx yy zz"};
  for (const std::string& q : queries) {
    EXPECT_OK(store_->Recall(Query(q))) << "query: " << q;
    RecallRequest temporal = Query(q);
    temporal.valid_at_unix_ms = kNow;
    EXPECT_OK(store_->Recall(temporal)) << "query: " << q;
  }
  // Syntax characters are ignored, the words still match.
  EXPECT_THAT(Keys(store_->Recall(Query("NEAR(alpha* \"beta\") AND text:gamma"))),
              ElementsAre("k"));
  EXPECT_THAT(Keys(store_->Recall(Query("^alpha"))), ElementsAre("k"));
}

TEST_P(Recall, StopWordsAloneStillSearch) {
  Add("k", R"("to be or not to be")");
  Add("other", R"("unrelated")");
  EXPECT_THAT(Keys(store_->Recall(Query("to be"))), ElementsAre("k"));
}

TEST_P(Recall, EmptyQueryListsNewestFirst) {
  Add("first", R"("one")");
  Add("second", R"("two")");
  Add("third", R"("three")");
  Add("first", R"("one again")");
  ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(Query("")));
  EXPECT_THAT(Keys(result), ElementsAre("first", "third", "second"));
  for (const RecallItem& item : result.items) EXPECT_EQ(item.fts5_rank, std::nullopt);
  EXPECT_THAT(Keys(store_->Recall(Query("  !!! ... ()"))), ElementsAre("first", "third", "second"));

  RecallRequest paged = Query("");
  paged.limit = 1;
  paged.offset = 1;
  EXPECT_THAT(Keys(store_->Recall(paged)), ElementsAre("third"));
}

TEST_P(Recall, IsAPureRead) {
  Add("a", R"("kiwi fruit")");
  Add("b", R"("kiwi bird")");
  ASSERT_OK_AND_ASSIGN(const RecallResult first, store_->Recall(Query("kiwi")));
  ASSERT_OK_AND_ASSIGN(const RecallResult second, store_->Recall(Query("kiwi")));
  EXPECT_EQ(Keys(first), Keys(second));
  ASSERT_EQ(first.items.size(), second.items.size());
  for (size_t i = 0; i < first.items.size(); ++i) {
    EXPECT_EQ(first.items[i].score, second.items[i].score);
  }
}

TEST_P(Recall, AsOfSearchesWhatWasBelievedThen) {
  Add("k", R"({"text": "apples in the basket"})");  // Recorded at kNow.
  clock_.Advance(100);
  Add("k", R"({"text": "oranges in the basket"})");  // Recorded at kNow + 101.
  const int64_t before = kNow + 50;
  const int64_t after = kNow + 101;

  auto as_of = [](std::string q, int64_t t) {
    RecallRequest r = Query(std::move(q));
    r.as_of_unix_ms = t;
    return r;
  };
  EXPECT_THAT(Keys(store_->Recall(as_of("apples", before))), ElementsAre("k"));
  EXPECT_THAT(Keys(store_->Recall(as_of("oranges", before))), IsEmpty());
  EXPECT_THAT(Keys(store_->Recall(as_of("apples", after))), IsEmpty());
  EXPECT_THAT(Keys(store_->Recall(as_of("oranges", after))), ElementsAre("k"));
  EXPECT_THAT(Keys(store_->Recall(Query("apples"))), IsEmpty());
  EXPECT_THAT(Keys(store_->Recall(as_of("apples", kNow - 1))), IsEmpty());

  ASSERT_OK_AND_ASSIGN(const RecallResult then, store_->Recall(as_of("basket", before)));
  ASSERT_EQ(then.items.size(), 1u);
  EXPECT_EQ(then.items[0].version.version, 1);
  ASSERT_OK_AND_ASSIGN(const RecallResult empty_then, store_->Recall(as_of("", before)));
  ASSERT_EQ(empty_then.items.size(), 1u);
  EXPECT_EQ(empty_then.items[0].version.version, 1);
}

TEST_P(Recall, AsOfBeforeAForgetStillFindsIt) {
  Add("k", R"("pelican")");
  clock_.Advance(10);
  ASSERT_OK(store_->Forget(Id("k"), ""));
  RecallRequest request = Query("pelican");
  request.as_of_unix_ms = kNow + 5;
  EXPECT_THAT(Keys(store_->Recall(request)), ElementsAre("k"));
  request.as_of_unix_ms = kNow + 20;
  EXPECT_THAT(Keys(store_->Recall(request)), IsEmpty());
}

TEST_P(Recall, ValidAtFollowsTheWalk) {
  // Out-of-order arrival: "falcon" [-5d, inf), then "eagle" [-90d, -5d).
  Write(Id("bird"), R"("falcon")", Day(-5));
  clock_.Advance(kMinute);
  Write(Id("bird"), R"("eagle")", Day(-90), Day(-5));
  // A later version starting later closes the earlier one: "wolf" [-100d, inf) is closed at
  // -50d by "bear" [-50d, inf).
  Write(Id("animal"), R"("wolf")", Day(-100));
  clock_.Advance(kMinute);
  Write(Id("animal"), R"("bear")", Day(-50));

  auto valid_at = [](std::string q, int64_t v) {
    RecallRequest r = Query(std::move(q));
    r.valid_at_unix_ms = v;
    return r;
  };
  EXPECT_THAT(Keys(store_->Recall(valid_at("falcon", Day(-1)))), ElementsAre("bird"));
  EXPECT_THAT(Keys(store_->Recall(valid_at("eagle", Day(-1)))), IsEmpty());
  EXPECT_THAT(Keys(store_->Recall(valid_at("eagle", Day(-40)))), ElementsAre("bird"));
  EXPECT_THAT(Keys(store_->Recall(valid_at("falcon", Day(-40)))), IsEmpty());
  EXPECT_THAT(Keys(store_->Recall(valid_at("eagle", Day(-100)))), IsEmpty());

  EXPECT_THAT(Keys(store_->Recall(valid_at("wolf", Day(-75)))), ElementsAre("animal"));
  EXPECT_THAT(Keys(store_->Recall(valid_at("wolf", Day(-10)))), IsEmpty());
  EXPECT_THAT(Keys(store_->Recall(valid_at("bear", Day(-10)))), ElementsAre("animal"));

  ASSERT_OK_AND_ASSIGN(const RecallResult listed, store_->Recall(valid_at("", Day(-40))));
  ASSERT_EQ(listed.items.size(), 2u);
  for (const RecallItem& item : listed.items) {
    const std::string expected = item.version.identity.key == "bird" ? R"("eagle")" : R"("bear")";
    EXPECT_EQ(item.version.body_json, expected) << item.version.identity.key;
  }
}

TEST_P(Recall, AsOfWithValidAtIsBitemporal) {
  // Scenario 3: "on-track" then "at-risk", both valid from -20d.
  const int64_t t0 = clock_.NowUnixMs();
  Write(Id("status"), R"("on-track")", Day(-20));
  clock_.Advance(kMinute);
  Write(Id("status"), R"("at-risk")", Day(-20));

  RecallRequest request = Query("track");
  request.valid_at_unix_ms = Day(-10);
  request.as_of_unix_ms = t0;
  EXPECT_THAT(Keys(store_->Recall(request)), ElementsAre("status"));
  request.as_of_unix_ms = std::nullopt;
  EXPECT_THAT(Keys(store_->Recall(request)), IsEmpty());
  request.query = "risk";
  EXPECT_THAT(Keys(store_->Recall(request)), ElementsAre("status"));
  request.as_of_unix_ms = t0;
  EXPECT_THAT(Keys(store_->Recall(request)), IsEmpty());
}

TEST_P(Recall, ValidAtPagesOverWinnersOnly) {
  // Each identity has a losing older version that also matches; paging counts winners.
  for (int i = 0; i < 4; ++i) {
    const Identity id = Id(absl::StrCat("k", i));
    Write(id, R"("heron old")", Day(-100));
    clock_.Advance(1);
    Write(id, R"("heron new")", Day(-50));
    clock_.Advance(1);
  }
  RecallRequest request = Query("heron");
  request.valid_at_unix_ms = Day(-10);
  request.limit = 3;
  ASSERT_OK_AND_ASSIGN(const RecallResult first, store_->Recall(request));
  ASSERT_EQ(first.items.size(), 3u);
  request.offset = 3;
  ASSERT_OK_AND_ASSIGN(const RecallResult rest, store_->Recall(request));
  ASSERT_EQ(rest.items.size(), 1u);
  EXPECT_EQ(rest.items[0].fts5_rank, 4);
  std::vector<std::string> all = Keys(first);
  all.push_back(rest.items[0].version.identity.key);
  EXPECT_THAT(all, UnorderedElementsAre("k0", "k1", "k2", "k3"));
  for (const RecallItem& item : first.items) EXPECT_EQ(item.version.body_json, R"("heron new")");
}

// ---------------------------------------------------------------------------------------------
// Opening.

// The SQLite file itself (PostgreSQL's schema and refusal: tests/pg/schema_test.cc).
class Open : public StoreTest {};

TEST_P(Open, FileFromANewerStrataIsRefusedAndLeftUntouched) {
  Write(Id("k"), R"("x")");
  store_.reset();
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> db, store::Db::Open(path_, {}));
    ASSERT_OK(db->Exec("PRAGMA user_version = 99"));
  }
  EXPECT_THAT(Store::Open({.path = path_, .clock = &clock_}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("newer")));

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> db, store::Db::Open(path_, {}));
  ASSERT_OK_AND_ASSIGN(const int schema_version, store::SchemaVersion(*db));
  EXPECT_EQ(schema_version, 99);
  ASSERT_OK_AND_ASSIGN(store::Stmt s, db->Prepare("SELECT count(*) FROM versions"));
  ASSERT_OK_AND_ASSIGN(const bool row, s.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(s.Int(0), 1);
}

// Schema 9 tokenizes the keyword index with "strata": a store written before it is
// reindexed on open, and finds what unicode61 could not (docs/design.md §5).
TEST_P(Open, SchemaEightStoreIsReindexedForEveryScript) {
  store_.reset();
  const std::string old_path = dir_.File("schema8.db");
  // Bodies as an older strata stored and indexed them; version 6 had left the index.
  const std::vector<std::vector<std::string>> rows = {
      {"1", "zh", R"({"text": "我们决定使用数据库来存储发票"})"},
      {"2", "ja", R"({"text": "請求書はデータベースに保存します"})"},
      {"3", "ko", R"({"text": "청구서는 데이터베이스에 저장합니다"})"},
      {"4", "de", R"({"text": "Die Rechnungen werden gespeichert"})"},
      {"5", "en", R"({"text": "The billing service stores every invoice"})"},
      {"6", "gone", R"({"text": "Rechnung ohne Index"})"},
  };
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> db, store::Db::Open(old_path, {}));
    ASSERT_OK(store::Migrate(*db, 8));
    for (const std::vector<std::string>& row : rows) {
      ASSERT_OK_AND_ASSIGN(store::Stmt memory,
                           db->Prepare("INSERT INTO memories (id, category, key, "
                                       "created_at_unix_ms, last_event_at_unix_ms, "
                                       "current_version_id, version_count) "
                                       "VALUES (?1, 'notes', ?2, ?3, ?3, ?1, 1)"));
      memory.Bind(1, int64_t{std::stoi(row[0])}).Bind(2, row[1]).Bind(3, kNow);
      ASSERT_OK(memory.Run());
      ASSERT_OK_AND_ASSIGN(store::Stmt version,
                           db->Prepare("INSERT INTO versions (id, memory_id, version, body_json, "
                                       "body_hash, type, valid_from_unix_ms, recorded_at_unix_ms) "
                                       "VALUES (?1, ?1, 1, ?2, 0, 'insight', ?3, ?3)"));
      version.Bind(1, int64_t{std::stoi(row[0])}).Bind(2, row[2]).Bind(3, kNow);
      ASSERT_OK(version.Run());
      if (row[1] == "gone") continue;
      ASSERT_OK_AND_ASSIGN(store::Stmt fts,
                           db->Prepare("INSERT INTO fts (rowid, text, key, category) "
                                       "SELECT id, json_extract(body_json, '$.text'), ?2, "
                                       "'notes' FROM versions WHERE id = ?1"));
      fts.Bind(1, int64_t{std::stoi(row[0])}).Bind(2, row[1]);
      ASSERT_OK(fts.Run());
    }
    // The control: unicode61 took the sentence for one token.
    ASSERT_OK_AND_ASSIGN(store::Stmt match,
                         db->Prepare("SELECT count(*) FROM fts WHERE fts MATCH '\"数据库\"'"));
    ASSERT_OK_AND_ASSIGN(const bool row, match.Step());
    ASSERT_TRUE(row);
    EXPECT_EQ(match.Int(0), 0);
  }
  ASSERT_OK_AND_ASSIGN(store_,
                       Store::Open({.path = old_path, .clock = &clock_, .embedder = "none"}));
  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  EXPECT_EQ(stats.schema_version, GetParam() == store::Dialect::kSqlite
                                      ? store::LatestSchemaVersion()
                                      : pg::LatestSchemaVersion());
  EXPECT_THAT(Keys(store_->Recall(Query("数据库"))), ElementsAre("zh"));
  EXPECT_THAT(Keys(store_->Recall(Query("データベース"))), ElementsAre("ja"));
  EXPECT_THAT(Keys(store_->Recall(Query("데이터베이스"))), ElementsAre("ko"));
  // "Rechnung" finds the German plural; the version the old index did not hold stays out.
  EXPECT_THAT(Keys(store_->Recall(Query("Rechnung"))), ElementsAre("de"));
  EXPECT_THAT(Keys(store_->Recall(Query("invoices stored"))), ElementsAre("en"));
  // Keys and categories were indexed again too.
  EXPECT_THAT(Keys(store_->Recall(Query("ko"))), ElementsAre("ko"));
  EXPECT_EQ(Keys(store_->Recall(Query("notes"))).size(), 5u);
}

TEST_P(Open, EmptyPathIsRejected) {
  EXPECT_THAT(Store::Open({.path = ""}), StatusIs(absl::StatusCode::kInvalidArgument, _));
}

TEST_P(Open, FileThatIsNotADatabaseIsRefused) {
  const std::string garbage = dir_.File("garbage.db");
  {
    FILE* f = std::fopen(garbage.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::string junk(8192, 'j');
    std::fwrite(junk.data(), 1, junk.size(), f);
    std::fclose(f);
  }
  EXPECT_THAT(Store::Open({.path = garbage, .clock = &clock_}), Not(IsOk()));
}

// ---------------------------------------------------------------------------------------------
// Stats.

class StatsTest : public StoreTest {};

TEST_P(StatsTest, CountsMemoriesVersionsAndCategories) {
  Write(Id("a", "people"), R"("one")");
  clock_.Advance(1);
  Write(Id("a", "people"), R"("two")");
  Write(Id("b", "people"), R"("one")");
  Write(Id("c", "places"), R"("one")");
  Write(Id("d", "places"), R"("one")");
  ASSERT_OK(store_->Forget(Id("d", "places"), ""));

  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  EXPECT_EQ(stats.total_memories, 4);
  EXPECT_EQ(stats.active_memories, 3);
  EXPECT_EQ(stats.versions, 5);
  EXPECT_THAT(stats.active_by_category,
              ElementsAre(::testing::Pair("people", 2), ::testing::Pair("places", 1)));
  EXPECT_EQ(stats.schema_version, GetParam() == store::Dialect::kSqlite
                                      ? store::LatestSchemaVersion()
                                      : pg::LatestSchemaVersion());
  EXPECT_EQ(stats.path, path_);
  EXPECT_EQ(stats.durability, Durability::kNormal);
  EXPECT_GT(stats.db_file_bytes + stats.wal_file_bytes, 0);

  ASSERT_OK(store_->Purge(Id("a", "people")));
  ASSERT_OK_AND_ASSIGN(const Stats after, store_->GetStats());
  EXPECT_EQ(after.total_memories, 3);
  EXPECT_EQ(after.active_memories, 2);
  EXPECT_EQ(after.versions, 3);
  EXPECT_THAT(after.active_by_category,
              ElementsAre(::testing::Pair("people", 1), ::testing::Pair("places", 1)));
}

TEST_P(StatsTest, DescribesTheEmbeddingsOnlyWithAnEmbedder) {
  Write(Id("a"), R"("one")");
  ASSERT_OK_AND_ASSIGN(const EmbedResult embedded, store_->Embed({.limit = 100}, {}));
  ASSERT_EQ(embedded.remaining, 0);
  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  ASSERT_TRUE(stats.embeddings.has_value());
  EXPECT_THAT(stats.embeddings->embedder, ::testing::StartsWith("builtin/"));
  EXPECT_GT(stats.embeddings->dimension, 0);
  EXPECT_EQ(stats.embeddings->vectors, 1);
  EXPECT_EQ(stats.embeddings->pending, 0);
  EXPECT_EQ(stats.embeddings->last_error, "");

  ASSERT_NO_FATAL_FAILURE(OpenStore("none"));
  ASSERT_OK_AND_ASSIGN(const Stats without, store_->GetStats());
  EXPECT_FALSE(without.embeddings.has_value());
  EXPECT_EQ(without.versions, 1);
}

TEST_P(StatsTest, EmptyStoreCountsNothing) {
  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  EXPECT_EQ(stats.total_memories, 0);
  EXPECT_EQ(stats.active_memories, 0);
  EXPECT_EQ(stats.versions, 0);
  EXPECT_THAT(stats.active_by_category, IsEmpty());
}

TEST(StorePath, PostgresUrisAreRecognizedAndTheirPasswordsRedacted) {
  EXPECT_TRUE(IsPostgresUri("postgresql://u@h/db"));
  EXPECT_TRUE(IsPostgresUri("postgres:///db?host=/tmp"));
  EXPECT_FALSE(IsPostgresUri("/var/lib/strata/memory.db"));
  EXPECT_FALSE(IsPostgresUri("postgresql.db"));
  EXPECT_EQ(RedactedStorePath("/x/memory.db"), "/x/memory.db");
  EXPECT_EQ(RedactedStorePath("postgresql://u:s3cret@h:5432/db"), "postgresql://u:***@h:5432/db");
  EXPECT_EQ(RedactedStorePath("postgresql://u@h/db"), "postgresql://u@h/db");
  EXPECT_EQ(RedactedStorePath("postgresql://h/db?user=u&password=s3cret&sslmode=require"),
            "postgresql://h/db?user=u&password=***&sslmode=require");
  EXPECT_EQ(RedactedStorePath("postgres:///db?password=p"), "postgres:///db?password=***");
  // A '@' or ':' after the authority is not a password's.
  EXPECT_EQ(RedactedStorePath("postgresql://h/db?application_name=a:b@c"),
            "postgresql://h/db?application_name=a:b@c");
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a single write's keyword rows, written beside the writers after its commit
// (docs/decisions.md, "The keyword upkeep behind the write").

// The postings of "ptarmigan", in any field: its versions' row terms (the field's digit, then
// the term) that are it.
constexpr char kPtarmiganPostings[] =
    "SELECT count(*) FROM text_documents, unnest(terms) AS k (key) "
    "WHERE substr(k.key, 2) = 'ptarmigan'";

class KeywordRowsBeside : public StoreTest {
 protected:
  // Versions are unindexed here on purpose: no catch-up but the tests' own.
  KeywordRowsBeside() { background_work_ = false; }
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_OK_AND_ASSIGN(db_, temporal::testing::Connect(GetParam(), path_));
  }
  // The first column of the first row of `sql`, -1 on failure (which fails the test).
  int64_t Count(const std::string& sql) { return CountOn(*db_, sql); }
  static int64_t CountOn(store::Db& db, const std::string& sql) {
    absl::StatusOr<store::Stmt> s = db.Prepare(sql);
    EXPECT_OK(s);
    if (!s.ok()) return -1;
    absl::StatusOr<bool> row = s->Step();
    EXPECT_TRUE(row.ok() && *row) << sql;
    return row.ok() && *row ? s->Int(0) : -1;
  }
  int64_t VersionIdOf(const std::string& key) {
    return Count(absl::StrCat("SELECT v.id FROM versions v JOIN memories m ON m.id = v.memory_id "
                              "WHERE m.key = '", key, "'"));
  }
  // Unindexes a version as a node stopped between a write's two commits leaves it.
  void Unindex(int64_t version_id) {
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*db_));
    ASSERT_OK_AND_ASSIGN(store::Stmt values,
                         db_->Prepare("SELECT v.body_json, m.key, m.category FROM versions v "
                                      "JOIN memories m ON m.id = v.memory_id WHERE v.id = ?1"));
    values.Bind(1, version_id);
    ASSERT_THAT(values.Step(), IsOkAndHolds(true));
    ASSERT_OK(text::FtsIndex(db_.get()).Remove(version_id, values.Text(0), values.Text(1),
                                               values.Text(2)));
    ASSERT_OK(txn.Commit());
  }
  // Writes memories m0 .. m<count - 1>, "note <i><words>", unindexed: their version ids in
  // `ids`.
  void WriteUnindexed(int count, const std::string& words, std::vector<int64_t>& ids) {
    for (int i = 0; i < count; ++i) {
      Write(Id(absl::StrCat("m", i)), absl::StrCat(R"("note )", i, words, R"(")"));
      ids.push_back(VersionIdOf(absl::StrCat("m", i)));
      ASSERT_NO_FATAL_FAILURE(Unindex(ids.back()));
    }
  }
  // Statistics rows (not saturated) whose count is not their postings' within what credits
  // allow: no fewer, and at most kReservedDocuments - 1 more for each of `indexes` (the
  // PgKeywordIndex instances that wrote beside the writers).
  int64_t MiscountedStatistics(int indexes = 1) {
    return Count(absl::StrCat(
        "SELECT count(*) FROM (SELECT documents - (SELECT count(*) FROM text_documents d "
        "WHERE CAST(s.field AS text) || s.term = ANY(d.terms)) AS over FROM text_term_stats s "
        "WHERE documents < ", text::kSaturatedDocuments, ") AS c WHERE over < 0 OR over > ",
        indexes * (text::kReservedDocuments - 1)));
  }

  std::unique_ptr<store::Db> db_;
};

TEST_P(KeywordRowsBeside, AVersionLeftWithoutThemIsIndexedByACatchUpAfterTheGrace) {
  Write(Id("bird"), R"("a ptarmigan in winter plumage")");
  Write(Id("other"), R"("a grouse")");
  ASSERT_OK_AND_ASSIGN(const RecallResult before, store_->Recall(Query("ptarmigan")));
  ASSERT_THAT(Keys(before), ElementsAre("bird"));
  const int64_t documents = Count("SELECT documents FROM text_totals WHERE field = 0");
  ASSERT_NO_FATAL_FAILURE(Unindex(VersionIdOf("bird")));
  EXPECT_THAT(Keys(store_->Recall(Query("ptarmigan"))), IsEmpty());

  text::FtsIndex index(db_.get());
  text::KeywordBacklog backlog;
  const auto start = std::chrono::steady_clock::now();
  // Its writer may still be about to write them: left alone within the grace.
  EXPECT_THAT(backlog.CatchUp(*db_, index, start), IsOkAndHolds(0));
  EXPECT_THAT(backlog.CatchUp(*db_, index, start + text::kKeywordGrace / 2), IsOkAndHolds(0));
  EXPECT_THAT(Keys(store_->Recall(Query("ptarmigan"))), IsEmpty());
  EXPECT_THAT(backlog.CatchUp(*db_, index, start + text::kKeywordGrace), IsOkAndHolds(1));
  ASSERT_OK_AND_ASSIGN(const RecallResult after, store_->Recall(Query("ptarmigan")));
  ASSERT_THAT(Keys(after), ElementsAre("bird"));
  EXPECT_EQ(after.items[0].score, before.items[0].score);
  EXPECT_EQ(Count("SELECT documents FROM text_totals WHERE field = 0"), documents);
  // Two indexes wrote beside the writers: the store's and this one.
  EXPECT_EQ(MiscountedStatistics(/*indexes=*/2), 0);
  // Nothing left: the next scan indexes nothing.
  EXPECT_THAT(backlog.CatchUp(*db_, index, start + 2 * text::kKeywordGrace), IsOkAndHolds(0));
}

TEST_P(KeywordRowsBeside, AServingNodeIndexesAVersionLeftWithoutThemWhileNobodyWrites) {
  Write(Id("bird"), R"("a ptarmigan in winter plumage")");
  ASSERT_OK_AND_ASSIGN(const RecallResult before, store_->Recall(Query("ptarmigan")));
  ASSERT_THAT(Keys(before), ElementsAre("bird"));
  ASSERT_NO_FATAL_FAILURE(Unindex(VersionIdOf("bird")));
  ASSERT_THAT(Keys(store_->Recall(Query("ptarmigan"))), IsEmpty());
  // A node serving the store (its background work on) that nobody writes to.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> idle,
                       Store::Open({.path = path_, .clock = &clock_, .embedder = "none"}));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::vector<std::string> found;
  while (found.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    found = Keys(store_->Recall(Query("ptarmigan")));
  }
  ASSERT_THAT(found, ElementsAre("bird"));
  ASSERT_OK_AND_ASSIGN(const RecallResult after, store_->Recall(Query("ptarmigan")));
  EXPECT_EQ(after.items[0].score, before.items[0].score);
  EXPECT_EQ(MiscountedStatistics(/*indexes=*/2), 0);  // The store's and the idle node's.
}

TEST_P(KeywordRowsBeside, AServingNodeMergesTheIndexsPendingEntriesOnceWritesStop) {
  for (int i = 0; i < 5; ++i) {
    Write(Id(absl::StrCat("bird", i)),
          absl::StrCat(R"("a ptarmigan in winter plumage )", i, R"(")"));
  }
  ASSERT_OK(db_->Exec("CREATE EXTENSION IF NOT EXISTS pgstattuple"));
  const std::string pending = "SELECT pending_tuples FROM pgstatginindex('text_documents_terms')";
  // GIN keeps a write's entries aside (nothing here merges them: no serving node yet).
  ASSERT_GT(Count(pending), 0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> idle,
                       Store::Open({.path = path_, .clock = &clock_, .embedder = "none"}));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Count(pending) > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(Count(pending), 0);
  EXPECT_THAT(Keys(store_->Recall(Query("ptarmigan"))), SizeIs(5));
}

TEST_P(KeywordRowsBeside, ATermIsCountedOnceForSeveralVersionsAndNeverBelowItsPostings) {
  constexpr int kVersions = 2 * text::kReservedDocuments + 3;
  std::vector<int64_t> ids;
  ASSERT_NO_FATAL_FAILURE(WriteUnindexed(kVersions, "", ids));
  // Indexed here with a word of their own, which only this index counts.
  const auto text = [](int i) { return absl::StrCat("ptarmigan note ", i); };
  const std::string documents =
      "SELECT COALESCE((SELECT documents FROM text_term_stats WHERE term = 'ptarmigan' "
      "AND field = 0), 0)";
  text::FtsIndex index(db_.get());
  // A purged version, or one indexed already, reserves nothing: the rows it does not write
  // give no credit for the next versions to use.
  ASSERT_OK(store_->Purge(Id("m1")));
  ASSERT_OK(index.AddBeside(ids[1], text(1), "m1", "facts"));
  EXPECT_EQ(Count(documents), 0);
  ASSERT_OK(index.AddBeside(ids[0], text(0), "m0", "facts"));
  EXPECT_EQ(Count(documents), text::kReservedDocuments);
  ASSERT_OK(index.AddBeside(ids[0], text(0), "m0", "facts"));
  EXPECT_EQ(MiscountedStatistics(/*indexes=*/2), 0);  // The store's and this one.
  for (int i = 2; i < kVersions; ++i) {
    ASSERT_OK(index.AddBeside(ids[i], text(i), absl::StrCat("m", i), "facts"));
    EXPECT_EQ(MiscountedStatistics(/*indexes=*/2), 0) << i;
  }
  // kVersions - 1 versions hold it, counted in three reservations.
  EXPECT_EQ(Count(documents), 3 * text::kReservedDocuments);
  EXPECT_EQ(Count(kPtarmiganPostings), kVersions - 1);
  EXPECT_EQ(Count("SELECT documents FROM text_totals WHERE field = 0"), kVersions - 1);
}

TEST_P(KeywordRowsBeside, SeveralVersionsInOneTransactionAreEachCountedOnce) {
  constexpr int kVersions = 40;
  std::vector<int64_t> ids;
  ASSERT_NO_FATAL_FAILURE(WriteUnindexed(kVersions, "", ids));
  const auto text = [](int i) { return absl::StrCat("ptarmigan note ", i); };
  text::FtsIndex index(db_.get());
  ASSERT_OK(store_->Purge(Id("m1")));
  ASSERT_OK(index.AddBeside(ids[0], text(0), "m0", "facts"));
  // One transaction: a version indexed already and a purged one among them write nothing.
  std::vector<text::KeywordDocument> documents;
  for (int i = 0; i < kVersions; ++i) {
    documents.push_back({.version_id = ids[i],
                         .text = text(i),
                         .key = absl::StrCat("m", i),
                         .category = "facts"});
  }
  ASSERT_OK(index.AddBeside(documents));
  EXPECT_EQ(Count("SELECT count(*) FROM text_documents"), kVersions - 1);
  EXPECT_EQ(Count("SELECT documents FROM text_totals WHERE field = 0"), kVersions - 1);
  EXPECT_EQ(Count(kPtarmiganPostings), kVersions - 1);
  // Each reservation's credits served the versions after it in the same transaction.
  EXPECT_EQ(Count("SELECT documents FROM text_term_stats WHERE term = 'ptarmigan' AND field = 0"),
            3 * text::kReservedDocuments);
  EXPECT_EQ(MiscountedStatistics(/*indexes=*/2), 0);  // The store's and this one.
  EXPECT_THAT(Keys(store_->Recall(Query("ptarmigan note 7"))), Contains("m7"));
}

// A transaction's statements are sent together and read together: a term new to the index
// is reserved by the first version holding it, and counted by each later one of the round
// trip for itself alone (the reservation's credits are known only once it is read).
TEST_P(KeywordRowsBeside, ARoundTripsVersionsReserveANewTermOnce) {
  constexpr int kVersions = 3;
  std::vector<int64_t> ids;
  ASSERT_NO_FATAL_FAILURE(WriteUnindexed(kVersions, "", ids));
  std::vector<text::KeywordDocument> documents;
  for (int i = 0; i < kVersions; ++i) {
    documents.push_back({.version_id = ids[i],
                         .text = absl::StrCat("ptarmigan note ", i),
                         .key = absl::StrCat("m", i),
                         .category = "facts"});
  }
  text::FtsIndex index(db_.get());
  ASSERT_OK(index.AddBeside(documents));
  const std::string ptarmigan =
      "SELECT documents FROM text_term_stats WHERE term = 'ptarmigan' AND field = 0";
  EXPECT_EQ(Count(ptarmigan), text::kReservedDocuments + kVersions - 1);
  EXPECT_EQ(Count(kPtarmiganPostings), kVersions);
  EXPECT_EQ(MiscountedStatistics(/*indexes=*/2), 0);  // The store's and this one.
  // The next version uses the credits.
  Write(Id("m3"), R"("note 3")");
  ids.push_back(VersionIdOf("m3"));
  ASSERT_NO_FATAL_FAILURE(Unindex(ids.back()));
  ASSERT_OK(index.AddBeside(ids.back(), "ptarmigan note 3", "m3", "facts"));
  EXPECT_EQ(Count(ptarmigan), text::kReservedDocuments + kVersions - 1);
  EXPECT_EQ(Count(kPtarmiganPostings), kVersions + 1);
}

TEST_P(KeywordRowsBeside, WrittenOnceAndNeverForAPurgedVersion) {
  Write(Id("bird"), R"("a ptarmigan in winter plumage")");
  const int64_t id = VersionIdOf("bird");
  const int64_t postings = Count("SELECT count(*) FROM text_documents, unnest(terms)");
  text::FtsIndex index(db_.get());
  // Indexed already (a catch-up racing its writer): nothing changes.
  ASSERT_OK(index.AddBeside(id, "a ptarmigan in winter plumage", "bird", "facts"));
  EXPECT_EQ(Count("SELECT count(*) FROM text_documents, unnest(terms)"), postings);
  EXPECT_EQ(Count("SELECT documents FROM text_totals WHERE field = 0"), 1);
  // Purged (before a catch-up's or a stopped writer's rows came): none are written.
  ASSERT_OK(store_->Purge(Id("bird")));
  ASSERT_OK(index.AddBeside(id, "a ptarmigan in winter plumage", "bird", "facts"));
  EXPECT_EQ(Count("SELECT count(*) FROM text_documents, unnest(terms)"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM text_documents"), 0);
  EXPECT_EQ(Count("SELECT documents FROM text_totals WHERE field = 0"), 0);
}

TEST_P(KeywordRowsBeside, TwoNodesIndexingTheSameVersionsAtOnceCountEachOnce) {
  constexpr int kMemories = 40;
  std::vector<int64_t> ids;
  ASSERT_NO_FATAL_FAILURE(WriteUnindexed(kMemories, " about shared words", ids));
  ASSERT_EQ(Count("SELECT count(*) FROM text_documents"), 0);
  // Two connections write every version's rows, in opposite orders: the statistics rows
  // they share are taken in one order (text_totals' first), so neither deadlocks.
  std::vector<absl::Status> failures(2);
  std::vector<std::thread> nodes;
  for (int n = 0; n < 2; ++n) {
    nodes.emplace_back([&, n] {
      absl::StatusOr<std::unique_ptr<store::Db>> db =
          temporal::testing::Connect(GetParam(), path_);
      if (!db.ok()) {
        failures[n] = db.status();
        return;
      }
      text::FtsIndex index(db->get());
      for (int i = 0; i < kMemories; ++i) {
        const int m = n == 0 ? i : kMemories - 1 - i;
        absl::Status s = index.AddBeside(ids[m], absl::StrCat("note ", m, " about shared words"),
                                         absl::StrCat("m", m), "facts");
        if (!s.ok()) failures[n] = s;
      }
    });
  }
  for (std::thread& t : nodes) t.join();
  EXPECT_OK(failures[0]);
  EXPECT_OK(failures[1]);
  EXPECT_EQ(Count("SELECT count(*) FROM text_documents"), kMemories);
  EXPECT_EQ(Count("SELECT documents FROM text_totals WHERE field = 0"), kMemories);
  EXPECT_EQ(MiscountedStatistics(/*indexes=*/3), 0);  // The store's and the two here.
  EXPECT_THAT(Keys(store_->Recall(Query("note 7"))), Contains("m7"));
}

// ---------------------------------------------------------------------------------------------
// Group commit (Store::set_commit_ticket): on PostgreSQL single writes under a ticket share a
// transaction; on SQLite they commit as they go.

class GroupCommit : public StoreTest {
 protected:
  GroupCommit() { background_work_ = false; }
  void SetUp() override {
    StoreTest::SetUp();
    // A second node's view, opened before any group holds the change lock.
    ASSERT_OK_AND_ASSIGN(other_, Store::Open({.path = path_,
                                              .clock = &clock_,
                                              .embedder = "none",
                                              .background_work = false}));
  }
  bool grouped() const { return GetParam() == store::Dialect::kPostgres; }

  std::unique_ptr<Store> other_;
};

TEST_P(GroupCommit, WritesUnderATicketAreKeptOnceTheirGroupCommits) {
  auto ticket = std::make_shared<CommitTicket>();
  store_->set_commit_ticket(ticket);
  Write(Id("bird"), R"("a ptarmigan in winter plumage")");
  Write(Id("moor"), R"("a grouse on the moor")");
  store_->set_commit_ticket(nullptr);
  if (!grouped()) {
    EXPECT_EQ(store_->uncommitted_writes(), 0);
    EXPECT_FALSE(ticket->joined());
    EXPECT_OK(other_->Get(Id("bird")));
    ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
    EXPECT_EQ(stats.group_commit.groups, 0);
    EXPECT_EQ(stats.group_commit.writes, 0);
    return;
  }
  EXPECT_EQ(store_->uncommitted_writes(), 2);
  EXPECT_TRUE(ticket->joined());
  EXPECT_THAT(other_->Get(Id("bird")), StatusIs(absl::StatusCode::kNotFound, _));
  ASSERT_OK(store_->CommitGroup());
  EXPECT_OK(ticket->Wait());
  EXPECT_EQ(store_->uncommitted_writes(), 0);
  EXPECT_OK(other_->Get(Id("bird")));
  EXPECT_OK(other_->Get(Id("moor")));
  // Their keyword rows followed, in one transaction beside the writers.
  ASSERT_OK_AND_ASSIGN(const RecallResult found, other_->Recall(Query("grouse")));
  EXPECT_THAT(Keys(found), ElementsAre("moor"));
  ASSERT_OK_AND_ASSIGN(const RecallResult both, other_->Recall(Query("a")));
  EXPECT_THAT(Keys(both), UnorderedElementsAre("bird", "moor"));
  // Counted by the node that committed them.
  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  EXPECT_EQ(stats.group_commit.groups, 1);
  EXPECT_EQ(stats.group_commit.writes, 2);
  ASSERT_OK_AND_ASSIGN(const Stats others, other_->GetStats());
  EXPECT_EQ(others.group_commit.groups, 0);
}

TEST_P(GroupCommit, ACallOfAnotherKindCommitsTheGroupFirstAndSeesIt) {
  auto ticket = std::make_shared<CommitTicket>();
  store_->set_commit_ticket(ticket);
  Write(Id("bird"), R"("a ptarmigan in winter plumage")");
  // A second write of the same memory in the group sees the first.
  EXPECT_EQ(Write(Id("bird"), R"("a ptarmigan in winter plumage")").action,
            WriteAction::kUnchanged);
  store_->set_commit_ticket(nullptr);
  EXPECT_EQ(store_->uncommitted_writes(), grouped() ? 2 : 0);
  ASSERT_OK_AND_ASSIGN(const Version current, store_->Get(Id("bird")));
  EXPECT_EQ(current.body_json, R"("a ptarmigan in winter plumage")");
  EXPECT_EQ(store_->uncommitted_writes(), 0);
  EXPECT_OK(ticket->Wait());
  EXPECT_OK(other_->Get(Id("bird")));
}

TEST_P(GroupCommit, AWriteRefusedInAGroupLeavesTheOthersToCommit) {
  auto ticket = std::make_shared<CommitTicket>();
  store_->set_commit_ticket(ticket);
  Write(Id("bird"), R"("a ptarmigan in winter plumage")");
  EXPECT_THAT(store_->Remember(Req(Id("bad"), "not json")),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(store_->Remember(Req(Id("late"), R"("x")", kNow, kNow - 1)),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  store_->set_commit_ticket(nullptr);
  EXPECT_EQ(store_->uncommitted_writes(), grouped() ? 1 : 0);
  ASSERT_OK(store_->CommitGroup());
  EXPECT_OK(ticket->Wait());
  EXPECT_OK(other_->Get(Id("bird")));
  EXPECT_THAT(other_->Get(Id("late")), StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_P(GroupCommit, AGroupAWriteOfWhichFailsKeepsNoneOfItsWrites) {
  if (!grouped()) GTEST_SKIP() << "SQLite's writes commit as they go";
  auto ticket = std::make_shared<CommitTicket>();
  store_->set_commit_ticket(ticket);
  Write(Id("bird"), R"("a ptarmigan in winter plumage")");
  // The server ends the group's session (a restart would), which sits in its transaction.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> admin,
                       temporal::testing::Connect(GetParam(), path_));
  ASSERT_OK_AND_ASSIGN(
      store::Stmt terminate,
      admin->Prepare("SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity "
                     "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                     "AND state = 'idle in transaction'"));
  ASSERT_THAT(terminate.Step(), IsOkAndHolds(true));
  ASSERT_EQ(terminate.Int(0), 1);
  EXPECT_FALSE(store_->Remember(Req(Id("moor"), R"("a grouse on the moor")")).ok());
  store_->set_commit_ticket(nullptr);
  EXPECT_EQ(store_->uncommitted_writes(), 0);
  EXPECT_THAT(ticket->Wait(), StatusIs(absl::StatusCode::kAborted, HasSubstr("not stored")));
  // The node goes on, in a new session; neither write was kept.
  EXPECT_THAT(store_->Get(Id("bird")), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_THAT(other_->Get(Id("moor")), StatusIs(absl::StatusCode::kNotFound, _));
  Write(Id("bird"), R"("a ptarmigan in winter plumage")");
  EXPECT_OK(other_->Get(Id("bird")));
}


// Engine-neutral suites on both engines; the SQLite file's own on SQLite.
INSTANTIATE_TEST_SUITE_P(Engines, Scenario, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, TimeAxis, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, Remember, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, Forget, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, Purge, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, History, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, RememberBatch, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, Recall, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, StatsTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, GroupCommit, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Sqlite, Open, ::testing::Values(store::Dialect::kSqlite),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Postgres, KeywordRowsBeside,
                         ::testing::Values(store::Dialect::kPostgres),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata
