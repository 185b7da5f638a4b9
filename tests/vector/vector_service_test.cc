// vector::VectorService and the embeddings table over a real database (store::Db, migrated)
// with versions inserted directly and a fake embedder that can be made to fail: spaces, the
// backlog and its scopes, backfill, the worker (including recovery from a failing embedder)
// and the index search. The stored-vector helpers are tested on both engines in
// embeddings_test.cc.

#include "vector/vector_service.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "embed/embedder.h"
#include "store/db.h"
#include "store/schema.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/fts5_extensions.h"
#include "vector/embed_worker.h"
#include "vector/embeddings.h"
#include "vector/published_index.h"

namespace strata::vector {
namespace {

using ::strata::testing::IsOkAndHolds;
using ::testing::_;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1772323200000;
constexpr int kDim = 64;
// Sanitizer builds (tools/sanitize) run several times slower, and hnswlib without SIMD there.
#if defined(__SANITIZE_ADDRESS__)
constexpr auto kDeadline = std::chrono::seconds(300);
#else
constexpr auto kDeadline = std::chrono::seconds(30);
#endif

bool Eventually(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A deterministic embedder: each text's vector is a seeded random unit vector of its bytes,
// so equal texts have similarity 1 and different ones are nearly orthogonal. It fails with
// Unavailable while `failing` is set, and returns one vector too few while `short_answer` is.
// Thread safety: Embed from any thread.
class FakeEmbedder final : public embed::Embedder {
 public:
  explicit FakeEmbedder(std::string options = "")
      : info_{.name = "fake", .version = "1", .dimension = kDim, .options = std::move(options)} {}

  const embed::EmbedderInfo& info() const override { return info_; }
  int batch_size() const override { return 7; }

  absl::StatusOr<std::vector<float>> Embed(std::span<const std::string> texts,
                                           embed::Role) override {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms.load()));
    if (failing) return absl::UnavailableError("fake embedder: connection refused");
    std::vector<float> out;
    for (const std::string& text : texts) {
      const std::vector<float> v = VectorOf(text);
      out.insert(out.end(), v.begin(), v.end());
    }
    if (short_answer && !out.empty()) out.resize(out.size() - kDim);
    return out;
  }

  static std::vector<float> VectorOf(const std::string& text) {
    uint64_t seed = 1469598103934665603ULL;
    for (unsigned char c : text) seed = (seed ^ c) * 1099511628211ULL;
    std::vector<float> v(kDim);
    double norm = 0;
    for (float& x : v) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      x = static_cast<float>(static_cast<int64_t>(seed >> 11) % 2001 - 1000);
      norm += double{x} * x;
    }
    for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
    return v;
  }

  std::atomic<bool> failing{false};
  std::atomic<bool> short_answer{false};
  std::atomic<int> calls{0};
  std::atomic<int> delay_ms{0};  // Each call takes at least this long.

 private:
  embed::EmbedderInfo info_;
};

class VectorServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(text::InstallFts5Extensions());
    ASSERT_OK_AND_ASSIGN(db_, store::Db::Open(path_, {}));
    ASSERT_OK(store::Migrate(*db_));
  }

  void TearDown() override { service_.reset(); }

  // Inserts a memory with one version per body; returns the version ids.
  std::vector<int64_t> Insert(const std::string& category, const std::string& key,
                              const std::vector<std::string>& bodies) {
    std::vector<int64_t> ids;
    absl::StatusOr<store::Stmt> memory = db_->Prepare(
        "INSERT INTO memories (category, key, workspace, created_at_unix_ms, "
        "last_event_at_unix_ms, version_count) VALUES (?, ?, '', ?, ?, ?)");
    EXPECT_OK(memory);
    if (!memory.ok()) return ids;
    memory->Bind(1, std::string_view(category))
        .Bind(2, std::string_view(key))
        .Bind(3, kNow)
        .Bind(4, kNow)
        .Bind(5, static_cast<int64_t>(bodies.size()));
    EXPECT_OK(memory->Run());
    const int64_t memory_id = db_->LastInsertRowId();
    for (size_t i = 0; i < bodies.size(); ++i) {
      absl::StatusOr<store::Stmt> version = db_->Prepare(
          "INSERT INTO versions (memory_id, version, body_json, body_hash, type, "
          "valid_from_unix_ms, recorded_at_unix_ms) VALUES (?, ?, ?, 0, 'insight', ?, ?)");
      EXPECT_OK(version);
      if (!version.ok()) return ids;
      version->Bind(1, memory_id)
          .Bind(2, static_cast<int64_t>(i) + 1)
          .Bind(3, std::string_view(bodies[i]))
          .Bind(4, kNow)
          .Bind(5, kNow + static_cast<int64_t>(i));
      EXPECT_OK(version->Run());
      ids.push_back(db_->LastInsertRowId());
    }
    return ids;
  }

  int64_t MemoryIdOf(const std::string& key) {
    absl::StatusOr<store::Stmt> s = db_->Prepare("SELECT id FROM memories WHERE key = ?");
    EXPECT_OK(s);
    if (!s.ok()) return 0;
    s->Bind(1, std::string_view(key));
    absl::StatusOr<bool> row = s->Step();
    EXPECT_TRUE(row.ok() && *row);
    return row.ok() && *row ? s->Int(0) : 0;
  }

  void StartService(std::unique_ptr<FakeEmbedder> embedder = std::make_unique<FakeEmbedder>()) {
    embedder_ = embedder.get();
    ASSERT_OK_AND_ASSIGN(service_, VectorService::Start(VectorService::IndexPath(path_), Opener(),
                                                        std::move(embedder), *db_, kNow,
                                                        /*embed_in_background=*/true));
  }

  // The worker's connection: the test's file, as the store opens it.
  VectorService::DbOpener Opener() const {
    return [path = path_]() -> absl::StatusOr<std::unique_ptr<store::Db>> {
      return store::Db::Open(path, {});
    };
  }

  VectorStats StatsOrDie() {
    absl::StatusOr<VectorStats> stats = service_->Stats(*db_);
    EXPECT_OK(stats);
    return stats.ok() ? *stats : VectorStats{};
  }

  strata::testing::TempDir dir_;
  std::string path_ = dir_.File("memory.db");
  std::unique_ptr<store::SqliteDb> db_;
  FakeEmbedder* embedder_ = nullptr;  // Owned by service_.
  std::unique_ptr<VectorService> service_;
};

// ---------------------------------------------------------------------------------------------
// The service.

TEST_F(VectorServiceTest, BackfillEmbedsTheBacklogAndIndexesIt) {
  for (int i = 0; i < 20; ++i) {
    Insert("cat", absl::StrCat("k", i), {absl::StrCat(R"(")", "body ", i, R"(")")});
  }
  StartService();
  std::vector<std::pair<int64_t, int64_t>> progress;
  ASSERT_OK_AND_ASSIGN(
      const BackfillResult result,
      service_->Backfill(*db_, {}, 1000, {.progress = [&](int64_t done, int64_t total) {
        progress.emplace_back(done, total);
      }}));
  EXPECT_EQ(result.remaining, 0);
  EXPECT_EQ(result.failed, 0);
  EXPECT_EQ(result.error, "");
  ASSERT_TRUE(Eventually([&] { return StatsOrDie().index_state == IndexState::kReady; }));
  ASSERT_TRUE(Eventually([&] { return StatsOrDie().indexed == 20; })) << StatsOrDie().indexed;
  const VectorStats stats = StatsOrDie();
  EXPECT_EQ(stats.vectors, 20);
  EXPECT_EQ(stats.pending, 0);
  EXPECT_EQ(stats.embedder, "fake/1/64/");
  EXPECT_EQ(stats.dimension, kDim);
  for (size_t i = 1; i < progress.size(); ++i) EXPECT_GT(progress[i].first, progress[i - 1].first);

  // The text of k7 finds k7's version first, with similarity ~1.
  ASSERT_OK_AND_ASSIGN(const std::vector<float> query,
                       service_->EmbedQuery(EmbeddingText("k7", R"("body 7")")));
  const std::optional<std::vector<Neighbor>> found = service_->SearchIndex(query, 3);
  ASSERT_TRUE(found.has_value());
  ASSERT_FALSE(found->empty());
  EXPECT_EQ((*found)[0].label, 8);  // Versions were inserted in key order from id 1.
  EXPECT_NEAR((*found)[0].similarity, 1.0f, 0.01f);
  EXPECT_EQ(service_->IndexedCount(), std::optional<size_t>(20));
}

TEST_F(VectorServiceTest, BackfillHonorsItsLimitAndScope) {
  for (int i = 0; i < 10; ++i) Insert("a", absl::StrCat("k", i), {R"("x")"});
  for (int i = 0; i < 10; ++i) Insert("b", absl::StrCat("k", i), {R"("y")"});
  StartService();
  // The worker may take part of the backlog meanwhile: what Backfill itself did is bounded by
  // its limit, and nothing in its scope remains.
  ASSERT_OK_AND_ASSIGN(const BackfillResult result,
                       service_->Backfill(*db_, {.category = "a"}, 1000, {}));
  EXPECT_EQ(result.remaining, 0);
  EXPECT_EQ(*CountPending(*db_, service_->space().id, {.category = "a"}), 0);
  ASSERT_OK_AND_ASSIGN(const BackfillResult limited,
                       service_->Backfill(*db_, {.category = "b"}, 3, {}));
  EXPECT_LE(limited.embedded, 3);
  EXPECT_LE(limited.attempted, 3);
}

TEST_F(VectorServiceTest, BackfillGoesBeforeTheBackgroundBacklog) {
  // 43 batches of 7 for the background thread, 20 ms each.
  for (int i = 0; i < 300; ++i) Insert("filler", absl::StrCat("k", i), {R"("x")"});
  Insert("target", "t", {R"("y")"});
  auto embedder = std::make_unique<FakeEmbedder>();
  embedder->delay_ms = 20;
  StartService(std::move(embedder));
  ASSERT_TRUE(Eventually([&] { return embedder_->calls > 0; }));
  ASSERT_OK_AND_ASSIGN(const BackfillResult result,
                       service_->Backfill(*db_, {.category = "target"}, 10, {}));
  EXPECT_EQ(result.embedded, 1);
  // It waited for the batch in progress, not for the whole backlog.
  EXPECT_GT(StatsOrDie().pending, 100);
  // And the background thread goes on afterwards.
  EXPECT_TRUE(Eventually([&] { return StatsOrDie().pending == 0; }));
}

TEST_F(VectorServiceTest, BackfillWithAFailingEmbedderReportsTheErrorAndKeepsTheBacklog) {
  for (int i = 0; i < 5; ++i) Insert("cat", absl::StrCat("k", i), {R"("x")"});
  auto embedder = std::make_unique<FakeEmbedder>();
  embedder->failing = true;
  StartService(std::move(embedder));
  ASSERT_OK_AND_ASSIGN(const BackfillResult result, service_->Backfill(*db_, {}, 100, {}));
  EXPECT_EQ(result.embedded, 0);
  EXPECT_GT(result.attempted, 0);
  EXPECT_EQ(result.failed, result.attempted);
  EXPECT_EQ(result.remaining, 5);
  EXPECT_THAT(result.error, HasSubstr("connection refused"));
  EXPECT_THAT(StatsOrDie().last_error, HasSubstr("connection refused"));
  EXPECT_EQ(StatsOrDie().pending, 5);

  embedder_->failing = false;
  ASSERT_OK_AND_ASSIGN(const BackfillResult retried, service_->Backfill(*db_, {}, 100, {}));
  EXPECT_EQ(retried.remaining, 0);
  EXPECT_EQ(retried.error, "");
  EXPECT_EQ(StatsOrDie().last_error, "");
}

TEST_F(VectorServiceTest, AnAnswerOfTheWrongSizeIsAnErrorNotAVector) {
  Insert("cat", "k", {R"("x")"});
  auto embedder = std::make_unique<FakeEmbedder>();
  embedder->short_answer = true;
  StartService(std::move(embedder));
  ASSERT_OK_AND_ASSIGN(const BackfillResult result, service_->Backfill(*db_, {}, 100, {}));
  EXPECT_EQ(result.embedded, 0);
  EXPECT_EQ(result.remaining, 1);
  EXPECT_NE(result.error, "");
  EXPECT_EQ(StatsOrDie().vectors, 0);
}

TEST_F(VectorServiceTest, WorkerEmbedsTheBacklogAndNewVersions) {
  for (int i = 0; i < 30; ++i) Insert("cat", absl::StrCat("k", i), {R"("x")"});
  StartService();
  ASSERT_TRUE(Eventually([&] {
    const VectorStats s = StatsOrDie();
    return s.pending == 0 && s.indexed == 30;
  })) << StatsOrDie().pending;
  EXPECT_EQ(StatsOrDie().embedded_since_start, 30);
  service_->WroteThrough(Insert("cat", "late", {R"("y")"}).back());
  ASSERT_TRUE(Eventually([&] {
    const VectorStats s = StatsOrDie();
    return s.pending == 0 && s.indexed == 31;
  }));
}

// Two processes on one store: each embeds the versions it wrote, and indexes the other's
// from their stored vectors.
TEST_F(VectorServiceTest, EachWriterEmbedsItsOwnVersionsOnce) {
  StartService();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<VectorService> other,
                       VectorService::Start(VectorService::IndexPath(path_) + ".other", Opener(),
                                            std::make_unique<FakeEmbedder>(), *db_, kNow,
                                            /*embed_in_background=*/true));
  for (int i = 0; i < 20; ++i) {
    Insert("cat", absl::StrCat("k", i), {absl::StrCat("\"", i, "\"")});
    const int64_t memory_id = MemoryIdOf(absl::StrCat("k", i));
    (i % 2 == 0 ? *service_ : *other).Wrote({&memory_id, 1});
  }
  const auto settled = [&](VectorService& service) {
    absl::StatusOr<VectorStats> s = service.Stats(*db_);
    return s.ok() && s->pending == 0 && s->indexed == 20;
  };
  ASSERT_TRUE(Eventually([&] { return settled(*service_) && settled(*other); }));
  EXPECT_EQ(StatsOrDie().embedded_since_start, 10);
  ASSERT_OK_AND_ASSIGN(const VectorStats others, other->Stats(*db_));
  EXPECT_EQ(others.embedded_since_start, 10);
}

// A version no process claims (its writer stopped before embedding it) is embedded all the
// same, once its writer has had its time.
TEST_F(VectorServiceTest, AVersionItsWriterLeftIsEmbeddedByAnother) {
  StartService();
  Insert("cat", "orphan", {R"("z")"});
  ASSERT_TRUE(Eventually([&] {
    const VectorStats s = StatsOrDie();
    return s.pending == 0 && s.indexed == 1;
  }));
  EXPECT_EQ(StatsOrDie().embedded_since_start, 1);
}

// A process writing steadily still embeds another's orphan once its writer has had its
// time, and its cursor moves past it: the backlog's scan takes its turn between the batches of
// the process's own versions, not only when they run out (the first scan after a node's
// load passed over every version of it).
TEST_F(VectorServiceTest, ABusyWriterStillEmbedsAnOrphanAfterTheGrace) {
  FakeEmbedder embedder;
  ASSERT_OK_AND_ASSIGN(const Space space, RegisterSpace(*db_, embedder.info(), kNow));
  PublishedIndex index(/*file_path=*/"", space);
  EmbedWorker worker(embedder, space, index);
  const int64_t orphan = Insert("cat", "orphan", {R"("z")"}).back();
  int64_t cursor = 0;
  const auto until = std::chrono::steady_clock::now() + kForeignGrace + std::chrono::seconds(2);
  for (int i = 0; std::chrono::steady_clock::now() < until; ++i) {
    const std::string key = absl::StrCat("mine-", i);
    Insert("cat", key, {absl::StrCat("\"", i, "\"")});
    const int64_t memory_id = MemoryIdOf(key);
    worker.Claim({&memory_id, 1});
    ASSERT_OK_AND_ASSIGN(const int64_t embedded, worker.EmbedBacklogBatch(*db_, cursor));
    ASSERT_GE(embedded, 1);  // Its own version: never a turn without claimed work.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(cursor, orphan);
  ASSERT_OK_AND_ASSIGN(store::Stmt s,
                       db_->Prepare("SELECT count(*) FROM embeddings WHERE version_id = ?"));
  s.Bind(1, orphan);
  ASSERT_THAT(s.Step(), IsOkAndHolds(true));
  EXPECT_EQ(s.Int(0), 1);
}

// Another writer's backlog, many scan windows long, waits out one grace, not one for each
// window the scan moves on to: once the grace has passed since the scan first found them
// stored, every turn embeds a full batch until none is left (the drain of a 1M backlog was
// held to ~4 windows a grace).
TEST_F(VectorServiceTest, AForeignBacklogWaitsOutOneGraceNotOneAWindow) {
  FakeEmbedder embedder;
  ASSERT_OK_AND_ASSIGN(const Space space, RegisterSpace(*db_, embedder.info(), kNow));
  PublishedIndex index(/*file_path=*/"", space);
  EmbedWorker worker(embedder, space, index);
  constexpr int kVersions = 100;  // More than 3 windows of 4 batches of 7.
  for (int i = 0; i < kVersions; ++i) {
    Insert("cat", absl::StrCat("theirs-", i), {absl::StrCat("\"", i, "\"")});
  }
  int64_t cursor = 0;
  ASSERT_THAT(worker.EmbedBacklogBatch(*db_, cursor), IsOkAndHolds(0));  // Seen: in its grace.
  std::this_thread::sleep_for(kForeignGrace + std::chrono::milliseconds(100));
  for (int turn = 0; turn < kVersions / embedder.batch_size(); ++turn) {
    ASSERT_THAT(worker.EmbedBacklogBatch(*db_, cursor), IsOkAndHolds(embedder.batch_size()))
        << "turn " << turn;
  }
  ASSERT_THAT(worker.EmbedBacklogBatch(*db_, cursor),
              IsOkAndHolds(kVersions % embedder.batch_size()));
  ASSERT_OK_AND_ASSIGN(const VectorCounts counts, CountVectorsAndPending(*db_, space.id));
  EXPECT_EQ(counts.vectors, kVersions);
  EXPECT_EQ(counts.pending, 0);
}

TEST_F(VectorServiceTest, WorkerRecordsAFailingEmbedderAndRecovers) {
  for (int i = 0; i < 10; ++i) Insert("cat", absl::StrCat("k", i), {R"("x")"});
  auto embedder = std::make_unique<FakeEmbedder>();
  embedder->failing = true;
  StartService(std::move(embedder));
  ASSERT_TRUE(Eventually([&] { return !StatsOrDie().last_error.empty(); }));
  EXPECT_THAT(StatsOrDie().last_error, HasSubstr("connection refused"));
  EXPECT_EQ(StatsOrDie().pending, 10);
  // Searching works meanwhile (nothing indexed yet).
  ASSERT_TRUE(Eventually([&] { return service_->IndexedCount().has_value(); }));
  EXPECT_EQ(service_->IndexedCount(), std::optional<size_t>(0));
  embedder_->failing = false;
  service_->Wrote({});  // Ends the back-off now rather than after it.
  ASSERT_TRUE(Eventually([&] {
    const VectorStats s = StatsOrDie();
    return s.pending == 0 && s.indexed == 10 && s.last_error.empty();
  })) << StatsOrDie().last_error;
}

TEST_F(VectorServiceTest, IndexFileIsRebuiltForAnotherSpace) {
  for (int i = 0; i < 10; ++i) Insert("cat", absl::StrCat("k", i), {R"("x")"});
  StartService();
  ASSERT_OK(service_->Backfill(*db_, {}, 100, {}));
  ASSERT_TRUE(Eventually([&] { return StatsOrDie().indexed == 10; }));
  service_.reset();
  // Another space: its index starts empty and its backlog is everything.
  ASSERT_OK_AND_ASSIGN(
      service_,
      VectorService::Start(VectorService::IndexPath(path_), Opener(),
                           std::make_unique<FakeEmbedder>("model=y"), *db_, kNow,
                           /*embed_in_background=*/true));
  EXPECT_EQ(service_->space().fingerprint, "fake/1/64/model=y");
  const VectorStats fresh = StatsOrDie();
  EXPECT_EQ(fresh.vectors + fresh.pending, 10);
  ASSERT_OK(service_->Backfill(*db_, {}, 100, {}));
  ASSERT_TRUE(Eventually([&] {
    const VectorStats s = StatsOrDie();
    return s.index_state == IndexState::kReady && s.indexed == 10 && s.vectors == 10;
  }));
}

TEST_F(VectorServiceTest, IndexCheckCountsExactNeighboursAndNearTies) {
  for (int i = 0; i < 300; ++i) Insert("cat", absl::StrCat("k", i), {absl::StrCat("\"", i, "\"")});
  StartService();
  ASSERT_OK(service_->Backfill(*db_, {}, 1000, {}));
  ASSERT_TRUE(Eventually([&] {
    const VectorStats s = StatsOrDie();
    return s.index_state == IndexState::kReady && s.indexed == 300;
  }));
  ASSERT_OK_AND_ASSIGN(const IndexCheck check, service_->MeasureIndexRecall(*db_, 20, 10));
  // 300 vectors: the graph finds the exact neighbours. A result among the exact top 10 is
  // within 1% of the 10th's distance, so epsilon recall is never the lower.
  EXPECT_GE(check.recall, 0.95);
  EXPECT_LE(check.recall, 1.0);
  EXPECT_GE(check.epsilon_recall, check.recall);
  EXPECT_LE(check.epsilon_recall, 1.0);
}

TEST_F(VectorServiceTest, EachVectorIsStoredWithItsLinksInTheWritersIndex) {
  StartService();
  ASSERT_TRUE(Eventually([&] { return StatsOrDie().index_state == IndexState::kReady; }));
  absl::flat_hash_set<int64_t> versions;
  for (int i = 0; i < 20; ++i) {
    for (const int64_t id :
         Insert("cat", absl::StrCat("k", i), {absl::StrCat(R"(")", "body ", i, R"(")")})) {
      versions.insert(id);
    }
  }
  ASSERT_OK(service_->Backfill(*db_, {}, 1000, {}).status());
  int64_t rows = 0, after = 0;
  ASSERT_OK(ReadVectorsAfter(*db_, service_->space().id, kDim, after, 1000,
                             [&](int64_t, int64_t version, std::span<const float>,
                                 std::span<const int64_t> links) {
                               ++rows;
                               // Every one of a batch links to another once the batch is in.
                               EXPECT_FALSE(links.empty()) << "version " << version;
                               for (const int64_t link : links) {
                                 EXPECT_TRUE(versions.contains(link)) << link;
                                 EXPECT_NE(link, version);
                               }
                             })
                .status());
  EXPECT_EQ(rows, 20);
}

TEST_F(VectorServiceTest, StatsNameTheIndexStates) {
  EXPECT_STREQ(IndexStateName(IndexState::kLoading), "loading");
  EXPECT_STREQ(IndexStateName(IndexState::kBuilding), "building");
  EXPECT_STREQ(IndexStateName(IndexState::kReady), "ready");
  EXPECT_EQ(VectorService::IndexPath("/x/memory.db"), "/x/memory.db.hnsw");
}

}  // namespace
}  // namespace strata::vector
