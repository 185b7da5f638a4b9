// Explicit corrections through the public API (`WriteRequest::supersedes`): the
// predecessor's valid period ends where the successor's begins, recall stops returning it in
// every mode, both histories name each other, reads of the past answer as before, and a
// correction that cannot be made writes nothing, alone in a batch too. On a SQLite file and on
// a PostgreSQL database (temporal/engines.h).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/db.h"
#include "strata/strata.h"
#include "temporal/engines.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "util/clock.h"

namespace strata {
namespace {

using ::strata::testing::IsOkAndHolds;
using ::strata::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int64_t kDay = 24 * 60 * 60 * 1000;
constexpr int64_t kMinute = 60 * 1000;

constexpr int64_t Day(int64_t days) { return kNow + days * kDay; }

constexpr char kGo[] =
    R"({"text": "Maria leads the storage team and prefers Go for new services"})";
constexpr char kRust[] =
    R"({"text": "Maria leads the storage team and prefers Rust for new services"})";

// The body a time-axis read found, "<none>" when it found nothing, or the error.
std::string Found(const absl::StatusOr<std::optional<Version>>& found) {
  if (!found.ok()) return "<error: " + found.status().ToString() + ">";
  return found->has_value() ? (*found)->body_json : "<none>";
}

std::vector<std::string> Keys(const absl::StatusOr<RecallResult>& result) {
  if (!result.ok()) return {"<error: " + result.status().ToString() + ">"};
  std::vector<std::string> keys;
  for (const RecallItem& item : result->items) keys.push_back(item.version.identity.key);
  return keys;
}

std::vector<std::string> LinkKeys(const std::vector<SupersessionLink>& links) {
  std::vector<std::string> keys;
  for (const SupersessionLink& link : links) keys.push_back(link.identity.key);
  return keys;
}

class SupersedesTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    path_ = temporal::testing::NewStorePath(GetParam(), dir_);
    ASSERT_FALSE(path_.empty());
    ASSERT_NO_FATAL_FAILURE(OpenStore("none"));
  }

  void OpenStore(const std::string& embedder) {
    store_.reset();
    ASSERT_OK_AND_ASSIGN(store_,
                         Store::Open({.path = path_, .clock = &clock_, .embedder = embedder}));
  }

  static Identity Id(std::string key, std::string category = "people") {
    return {.category = std::move(category), .key = std::move(key)};
  }

  static WriteRequest Req(const Identity& identity, std::string body_json,
                          std::optional<int64_t> valid_from = std::nullopt,
                          std::optional<Identity> supersedes = std::nullopt) {
    WriteRequest request;
    request.identity = identity;
    request.body_json = std::move(body_json);
    request.valid_from_unix_ms = valid_from;
    request.supersedes = std::move(supersedes);
    request.dedup = false;
    return request;
  }

  WriteResult Write(const WriteRequest& request) {
    absl::StatusOr<WriteResult> result = store_->Remember(request);
    EXPECT_OK(result);
    return result.ok() ? *result : WriteResult{};
  }

  absl::StatusOr<RecallResult> Recall(const std::string& query, RecallMode mode = RecallMode::kFts5,
                                      std::optional<int64_t> as_of = std::nullopt,
                                      std::optional<int64_t> valid_at = std::nullopt) {
    RecallRequest request;
    request.query = query;
    request.mode = mode;
    request.as_of_unix_ms = as_of;
    request.valid_at_unix_ms = valid_at;
    return store_->Recall(request);
  }

  int64_t Versions() {
    absl::StatusOr<Stats> stats = store_->GetStats();
    return stats.ok() ? stats->versions : -1;
  }

  int64_t SupersessionRows() {
    absl::StatusOr<std::unique_ptr<store::Db>> db = temporal::testing::Connect(GetParam(), path_);
    if (!db.ok()) return -1;
    absl::StatusOr<store::Stmt> s = (*db)->Prepare("SELECT count(*) FROM supersessions");
    if (!s.ok() || !s->Step().value_or(false)) return -1;
    return s->Int(0);
  }

  // maria-go "prefers Go" true from Day(-100); a minute later maria-rust "prefers Rust" true
  // from Day(-10), superseding it. Returns the correction's result.
  WriteResult Correct() {
    Write(Req(Id("maria-go"), kGo, Day(-100)));
    clock_.Advance(kMinute);
    return Write(Req(Id("maria-rust"), kRust, Day(-10), Id("maria-go")));
  }

  strata::testing::TempDir dir_;
  std::string path_;
  FakeClock clock_{kNow};
  std::unique_ptr<Store> store_;
};

TEST_P(SupersedesTest, RebuildingSignaturesLeavesASupersededMemoryOut) {
  Correct();
  // maria-rust only: a superseded memory is no merge target, before or after a rebuild.
  EXPECT_THAT(store_->RebuildSignatures(), IsOkAndHolds(1));
  clock_.Advance(kMinute);
  Write(Req(Id("maria-go"), kGo, Day(-5)));
  EXPECT_THAT(store_->RebuildSignatures(), IsOkAndHolds(2));
}

TEST_P(SupersedesTest, ResultNamesThePredecessor) {
  const WriteResult result = Correct();
  EXPECT_EQ(result.action, WriteAction::kCreated);
  ASSERT_TRUE(result.supersedes.has_value());
  EXPECT_EQ(result.supersedes->identity.key, "maria-go");
  ASSERT_OK_AND_ASSIGN(const Version go, store_->Get(Id("maria-go")));
  EXPECT_EQ(result.supersedes->memory_id, go.memory_id);
  EXPECT_EQ(result.supersedes->at_unix_ms, result.version.recorded_at_unix_ms);
}

TEST_P(SupersedesTest, ValidAtBeforeTheSuccessorsValidFromFindsThePredecessorAndAfterDoesNot) {
  Correct();
  EXPECT_EQ(Found(store_->ValidAt(Id("maria-go"), Day(-50))), kGo);
  EXPECT_EQ(Found(store_->ValidAt(Id("maria-go"), Day(-10) - 1)), kGo);
  EXPECT_EQ(Found(store_->ValidAt(Id("maria-go"), Day(-10))), "<none>");
  EXPECT_EQ(Found(store_->ValidAt(Id("maria-go"), Day(0))), "<none>");
  EXPECT_EQ(Found(store_->ValidAt(Id("maria-rust"), Day(0))), kRust);
}

TEST_P(SupersedesTest, PredecessorGetsAClosingVersionRecordedWithTheSuccessor) {
  const WriteResult rust = Correct();
  ASSERT_OK_AND_ASSIGN(const Version go, store_->Get(Id("maria-go")));
  EXPECT_EQ(go.version, 2);
  EXPECT_EQ(go.body_json, kGo);
  EXPECT_EQ(go.valid_from_unix_ms, Day(-100));
  EXPECT_EQ(go.valid_to_unix_ms, Day(-10));
  EXPECT_EQ(go.recorded_at_unix_ms, rust.version.recorded_at_unix_ms);
}

TEST_P(SupersedesTest, CorrectionIsRecordedAfterBothMemoriesLastEvents) {
  // The predecessor's next event is 2 ms ahead of the still clock; the successor's is now.
  Write(Req(Id("maria-go"), R"("one")"));
  Write(Req(Id("maria-go"), R"("two")"));
  const WriteResult rust = Write(Req(Id("maria-rust"), kRust, Day(1), Id("maria-go")));
  EXPECT_EQ(rust.version.recorded_at_unix_ms, kNow + 2);
  ASSERT_OK_AND_ASSIGN(const Version go, store_->Get(Id("maria-go")));
  EXPECT_EQ(go.recorded_at_unix_ms, kNow + 2);
}

TEST_P(SupersedesTest, RecallNowReturnsTheSuccessorOnly) {
  Correct();
  EXPECT_THAT(Keys(Recall("Maria storage team")), ElementsAre("maria-rust"));
  EXPECT_THAT(Keys(Recall("prefers Go")), ElementsAre("maria-rust"));
  EXPECT_THAT(Keys(Recall("")), ElementsAre("maria-rust"));  // A listing, too.
}

TEST_P(SupersedesTest, AsOfBeforeTheCorrectionAnswersAsItDid) {
  Write(Req(Id("maria-go"), kGo, Day(-100)));
  const int64_t before = clock_.NowUnixMs();
  clock_.Advance(kMinute);
  const WriteResult rust = Write(Req(Id("maria-rust"), kRust, Day(-10), Id("maria-go")));

  ASSERT_OK_AND_ASSIGN(const std::optional<Version> then, store_->AsOf(Id("maria-go"), before));
  ASSERT_TRUE(then.has_value());
  EXPECT_EQ(then->version, 1);
  EXPECT_EQ(then->valid_to_unix_ms, std::nullopt);
  EXPECT_EQ(Found(store_->Bitemporal(Id("maria-go"), before, Day(0))), kGo);
  EXPECT_THAT(Keys(Recall("Maria storage", RecallMode::kFts5, before)), ElementsAre("maria-go"));
  EXPECT_THAT(Keys(Recall("Maria storage", RecallMode::kFts5, before, Day(0))),
              ElementsAre("maria-go"));
  // From the correction on, what is believed changed.
  const int64_t after = rust.version.recorded_at_unix_ms;
  EXPECT_THAT(Keys(Recall("Maria storage", RecallMode::kFts5, after)), ElementsAre("maria-rust"));
  EXPECT_EQ(Found(store_->Bitemporal(Id("maria-go"), after, Day(0))), "<none>");
}

TEST_P(SupersedesTest, RecallAtAValidInstantFindsThePredecessorOnlyBeforeTheSuccessorBegins) {
  Correct();
  EXPECT_THAT(Keys(Recall("Maria storage", RecallMode::kFts5, std::nullopt, Day(-50))),
              ElementsAre("maria-go"));
  EXPECT_THAT(Keys(Recall("Maria storage", RecallMode::kFts5, std::nullopt, Day(-5))),
              ElementsAre("maria-rust"));
}

TEST_P(SupersedesTest, OutOfOrderVersionsOfThePredecessorAreCutToo) {
  // docs/design.md §3 scenario 4: a later-recorded version about an older period leaves the newer
  // one standing; the correction ends both.
  const Identity model = Id("model.default", "config");
  Write(Req(model, R"("opus-4-8")", Day(-5)));
  clock_.Advance(kMinute);
  WriteRequest older = Req(model, R"("opus-4-7")", Day(-90));
  older.valid_to_unix_ms = Day(-5);
  Write(older);
  clock_.Advance(kMinute);
  Write(Req(Id("model.pinned", "config"), R"("opus-5")", Day(0), model));

  EXPECT_EQ(Found(store_->ValidAt(model, Day(-40))), R"("opus-4-7")");
  EXPECT_EQ(Found(store_->ValidAt(model, Day(-1))), R"("opus-4-8")");
  EXPECT_EQ(Found(store_->ValidAt(model, Day(1))), "<none>");
  EXPECT_THAT(Keys(Recall("opus", RecallMode::kFts5, std::nullopt, Day(1))),
              ElementsAre("model.pinned"));
  EXPECT_THAT(Keys(Recall("opus", RecallMode::kFts5, std::nullopt, Day(-1))),
              ElementsAre("model.default"));
}

TEST_P(SupersedesTest, HistoryNamesEachOtherAndKeepsEveryVersion) {
  const WriteResult rust = Correct();
  ASSERT_OK_AND_ASSIGN(const HistoryPage go, store_->History(Id("maria-go"), 10, 0));
  EXPECT_EQ(go.total, 2);
  EXPECT_THAT(LinkKeys(go.successors), ElementsAre("maria-rust"));
  EXPECT_THAT(go.predecessors, IsEmpty());
  EXPECT_EQ(go.successors[0].memory_id, rust.version.memory_id);
  EXPECT_EQ(go.successors[0].at_unix_ms, rust.version.recorded_at_unix_ms);
  EXPECT_EQ(go.versions[1].valid_to_unix_ms, std::nullopt);  // The original, kept.

  ASSERT_OK_AND_ASSIGN(const HistoryPage r, store_->History(Id("maria-rust"), 10, 0));
  EXPECT_THAT(LinkKeys(r.predecessors), ElementsAre("maria-go"));
  EXPECT_THAT(r.successors, IsEmpty());
}

TEST_P(SupersedesTest, MissingTargetIsAnErrorAndWritesNothing) {
  Write(Req(Id("maria-go"), kGo));
  const int64_t versions = Versions();
  EXPECT_THAT(
      store_->Remember(Req(Id("maria-rust"), kRust, std::nullopt, Id("maria"))),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr(R"(supersedes: no memory with category "people" and key "maria")")));
  EXPECT_THAT(store_->Get(Id("maria-rust")), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_EQ(Versions(), versions);
}

TEST_P(SupersedesTest, MissingTargetFailsAloneInABatch) {
  Write(Req(Id("maria-go"), kGo, Day(-100)));
  clock_.Advance(kMinute);
  ASSERT_OK_AND_ASSIGN(
      const std::vector<absl::StatusOr<WriteResult>> results,
      store_->RememberBatch(
          {Req(Id("a"), R"("first")"), Req(Id("b"), R"("second")", std::nullopt, Id("nobody")),
           Req(Id("maria-rust"), kRust, Day(-10), Id("maria-go"))},
          {}));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_OK(results[0]);
  EXPECT_THAT(results[1],
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(R"(key "nobody")")));
  ASSERT_OK(results[2]);
  EXPECT_TRUE(results[2]->supersedes.has_value());
  EXPECT_THAT(store_->Get(Id("b")), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_EQ(Found(store_->ValidAt(Id("maria-go"), Day(0))), "<none>");
}

TEST_P(SupersedesTest, AliasNamesTheMemoryItWasMergedInto) {
  WriteRequest original = Req(Id("maria-go"), kGo, Day(-100));
  original.dedup = true;
  Write(original);
  WriteRequest copy = Req(Id("maria-copy"), kGo);
  copy.dedup = true;
  ASSERT_EQ(Write(copy).action, WriteAction::kDeduped);
  clock_.Advance(kMinute);

  const WriteResult rust = Write(Req(Id("maria-rust"), kRust, Day(-10), Id("maria-copy")));
  ASSERT_TRUE(rust.supersedes.has_value());
  EXPECT_EQ(rust.supersedes->identity.key, "maria-go");
  EXPECT_EQ(Found(store_->ValidAt(Id("maria-go"), Day(0))), "<none>");
  EXPECT_THAT(Keys(Recall("Maria storage")), ElementsAre("maria-rust"));
}

TEST_P(SupersedesTest, ForgottenTargetIsAnErrorAndWritesNothing) {
  Write(Req(Id("maria-go"), kGo));
  ASSERT_OK(store_->Forget(Id("maria-go"), ""));
  const int64_t versions = Versions();
  EXPECT_THAT(store_->Remember(Req(Id("maria-rust"), kRust, std::nullopt, Id("maria-go"))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("was forgotten")));
  EXPECT_THAT(store_->Get(Id("maria-rust")), StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_EQ(Versions(), versions);
}

TEST_P(SupersedesTest, ItselfIsAnError) {
  Write(Req(Id("maria-go"), kGo));
  EXPECT_THAT(store_->Remember(Req(Id("maria-go"), kRust, std::nullopt, Id("maria-go"))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cannot supersede itself")));
  EXPECT_EQ(Found(store_->ValidAt(Id("maria-go"), kNow)), kGo);
}

TEST_P(SupersedesTest, SuccessorStartingNoLaterThanThePredecessorIsAnErrorAndWritesNothing) {
  Write(Req(Id("maria-go"), kGo, Day(10)));
  const int64_t versions = Versions();
  // Without valid_from the successor starts now, before the predecessor does.
  EXPECT_THAT(store_->Remember(Req(Id("maria-rust"), kRust, std::nullopt, Id("maria-go"))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must start later")));
  EXPECT_THAT(store_->Remember(Req(Id("maria-rust"), kRust, Day(10), Id("maria-go"))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must start later")));
  EXPECT_EQ(Versions(), versions);
}

TEST_P(SupersedesTest, AnAlreadySupersededMemoryIsAnErrorButARetryChangesNothing) {
  Correct();
  const int64_t versions = Versions();
  EXPECT_THAT(store_->Remember(Req(Id("maria-zig"), R"("Zig")", std::nullopt, Id("maria-go"))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(R"(already superseded by memory "people/maria-rust")")));
  ASSERT_OK_AND_ASSIGN(const WriteResult retry,
                       store_->Remember(Req(Id("maria-rust"), kRust, Day(-10), Id("maria-go"))));
  EXPECT_EQ(retry.action, WriteAction::kUnchanged);
  ASSERT_TRUE(retry.supersedes.has_value());
  EXPECT_EQ(retry.supersedes->identity.key, "maria-go");
  EXPECT_EQ(Versions(), versions);
}

TEST_P(SupersedesTest, AnUnchangedRewriteCanNameWhatItSupersedes) {
  // The flow `similar` suggests: write, then name the memory it corrects.
  Write(Req(Id("maria-go"), kGo, Day(-100)));
  clock_.Advance(kMinute);
  const WriteResult first = Write(Req(Id("maria-rust"), kRust));
  clock_.Advance(kMinute);
  const WriteResult again = Write(Req(Id("maria-rust"), kRust, std::nullopt, Id("maria-go")));
  EXPECT_EQ(again.action, WriteAction::kUnchanged);
  ASSERT_TRUE(again.supersedes.has_value());
  ASSERT_OK_AND_ASSIGN(const Version go, store_->Get(Id("maria-go")));
  EXPECT_EQ(go.valid_to_unix_ms, first.version.valid_from_unix_ms);
  EXPECT_THAT(Keys(Recall("Maria storage")), ElementsAre("maria-rust"));
}

TEST_P(SupersedesTest, RewritingThePredecessorAfterwardsMakesItRecalledAgain) {
  Correct();
  clock_.Advance(kMinute);
  Write(Req(Id("maria-go"), R"({"text": "Maria now leads the storage team's Go rewrite"})"));
  EXPECT_THAT(Keys(Recall("Maria storage")),
              ::testing::UnorderedElementsAre("maria-go", "maria-rust"));
}

TEST_P(SupersedesTest, PurgingEitherMemoryLeavesNoLink) {
  Correct();
  ASSERT_EQ(SupersessionRows(), 1);
  ASSERT_OK(store_->Purge(Id("maria-rust")));
  EXPECT_EQ(SupersessionRows(), 0);
  ASSERT_OK_AND_ASSIGN(const HistoryPage go, store_->History(Id("maria-go"), 10, 0));
  EXPECT_THAT(go.successors, IsEmpty());

  clock_.Advance(kMinute);
  Write(Req(Id("maria-rust"), kRust, Day(-5), Id("maria-go")));
  ASSERT_EQ(SupersessionRows(), 1);
  ASSERT_OK(store_->Purge(Id("maria-go")));
  EXPECT_EQ(SupersessionRows(), 0);
  ASSERT_OK_AND_ASSIGN(const HistoryPage rust, store_->History(Id("maria-rust"), 10, 0));
  EXPECT_THAT(rust.predecessors, IsEmpty());
}

// Dense and hybrid recall filter predecessors the same way (with the builtin embedder).
TEST_P(SupersedesTest, RecallNowReturnsTheSuccessorOnlyInEveryMode) {
  ASSERT_NO_FATAL_FAILURE(OpenStore("builtin"));
  Correct();
  ASSERT_OK_AND_ASSIGN(const EmbedResult embedded, store_->Embed({.limit = 1000}, {}));
  EXPECT_EQ(embedded.remaining, 0);
  // Wait (against hangs only) for the index to hold every vector.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
    ASSERT_TRUE(stats.embeddings.has_value());
    if (stats.embeddings->index_state == "ready" && stats.embeddings->pending == 0 &&
        stats.embeddings->indexed == stats.embeddings->vectors) {
      break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (RecallMode mode : {RecallMode::kFts5, RecallMode::kDense, RecallMode::kHybrid}) {
    SCOPED_TRACE(RecallModeName(mode));
    EXPECT_THAT(Keys(Recall("Maria prefers Go", mode)), ElementsAre("maria-rust"));
    EXPECT_THAT(Keys(Recall("Maria prefers Go", mode, std::nullopt, Day(-50))),
                ElementsAre("maria-go"));
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, SupersedesTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata
