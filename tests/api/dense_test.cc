// Dense and hybrid recall through the public API: backfill and the background worker, embedder
// spaces and switching between them, the index file (rebuilt when missing or corrupt), a
// second Store on the same data, filters and the time axes in every mode, the index's
// over-fetch falling back to an exact scan, fusion ranks, and mode "auto". On a SQLite file
// and on a PostgreSQL database (temporal/engines.h), whose node saves its index in index_dir.
//
// The worker makes some states eventual: tests poll with a generous deadline and never
// assert on timing.

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "embed/registry.h"
#include "pg/db.h"
#include "pg/schema.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/engines.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "util/clock.h"
#include "vector/codec.h"
#include "vector/embeddings.h"

namespace strata {
namespace {

using ::strata::testing::ReadAll;
using ::strata::testing::StatusIs;
using ::strata::testing::WriteAll;
using ::testing::_;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int64_t kDay = 24 * 60 * 60 * 1000;
constexpr int64_t kMinute = 60 * 1000;
// Sanitizer builds (tools/sanitize) run several times slower, and hnswlib without SIMD there.
#if defined(__SANITIZE_ADDRESS__)
constexpr auto kDeadline = std::chrono::seconds(300);
#else
constexpr auto kDeadline = std::chrono::seconds(30);
#endif

// Polls `done` until it holds or `deadline` passes; returns whether it held.
bool Eventually(const std::function<bool()>& done,
                std::chrono::steady_clock::duration deadline = kDeadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The store's embedding stats; a default (embedder "<error>") on failure.
EmbeddingStats Embeddings(Store& store) {
  absl::StatusOr<Stats> stats = store.GetStats();
  if (!stats.ok() || !stats->embeddings) return EmbeddingStats{.embedder = "<error>"};
  return *stats->embeddings;
}

int64_t Versions(Store& store) {
  absl::StatusOr<Stats> stats = store.GetStats();
  return stats.ok() ? stats->versions : -1;
}

// Every version has a vector of this store's space and the index holds them all.
bool CaughtUp(Store& store) {
  const EmbeddingStats e = Embeddings(store);
  return e.index_state == "ready" && e.pending == 0 && e.vectors == Versions(store) &&
         e.indexed == e.vectors;
}

std::string Describe(Store& store) {
  const EmbeddingStats e = Embeddings(store);
  return absl::StrCat("embedder ", e.embedder, " state ", e.index_state, " vectors ", e.vectors,
                      " pending ", e.pending, " indexed ", e.indexed, " versions ", Versions(store),
                      " last_error \"", e.last_error, "\"");
}

std::vector<std::string> Keys(const absl::StatusOr<RecallResult>& result) {
  if (!result.ok()) return {"<error: " + result.status().ToString() + ">"};
  std::vector<std::string> keys;
  for (const RecallItem& item : result->items) keys.push_back(item.version.identity.key);
  return keys;
}

std::set<std::string> KeySet(const absl::StatusOr<RecallResult>& result) {
  const std::vector<std::string> keys = Keys(result);
  return std::set<std::string>(keys.begin(), keys.end());
}

class DenseTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    path_ = temporal::testing::NewStorePath(GetParam(), dir_, "memory.db");
    ASSERT_FALSE(path_.empty());
  }

  absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& embedder = "builtin") {
    return Store::Open(
        {.path = path_, .index_dir = index_dir_, .clock = &clock_, .embedder = embedder});
  }

  // Where the store saves its vector index (".meta" beside it): beside a SQLite file, or in
  // index_dir_ under a PostgreSQL database's store id ("" and a test failure without one).
  std::string IndexFile() const {
    if (GetParam() == store::Dialect::kSqlite) return path_ + ".hnsw";
    absl::StatusOr<std::unique_ptr<pg::PgDb>> db = pg::PgDb::Open(path_);
    EXPECT_OK(db);
    if (!db.ok()) return "";
    absl::StatusOr<std::string> store_id = pg::StoreId((*db)->connection());
    EXPECT_OK(store_id);
    if (!store_id.ok()) return "";
    return (std::filesystem::path(index_dir_) / absl::StrCat(*store_id, ".hnsw")).string();
  }

  // Closes the store and deletes its saved index, so that the next open rebuilds it; returns
  // the index file's path.
  std::string CloseAndDeleteIndex() {
    const std::string index = IndexFile();
    store_.reset();
    std::filesystem::remove(index);
    std::filesystem::remove(index + ".meta");
    return index;
  }

  void OpenStore(const std::string& embedder = "builtin") {
    store_.reset();
    ASSERT_OK_AND_ASSIGN(store_, Open(embedder));
  }

  static WriteRequest Req(std::string key, std::string body_json, std::string category = "notes") {
    WriteRequest request;
    request.identity = {.category = std::move(category), .key = std::move(key)};
    request.body_json = std::move(body_json);
    request.dedup = false;  // These tests are about vectors, not near-duplicates.
    return request;
  }

  WriteResult Write(Store& store, const WriteRequest& request) {
    absl::StatusOr<WriteResult> result = store.Remember(request);
    EXPECT_OK(result);
    clock_.Advance(1);
    return result.ok() ? *result : WriteResult{};
  }
  WriteResult Write(const WriteRequest& request) { return Write(*store_, request); }

  // Embeds every version now; fails the test unless nothing remains.
  void EmbedAll(Store& store) {
    ASSERT_OK_AND_ASSIGN(const EmbedResult result, store.Embed({.limit = int64_t{1} << 40}, {}));
    EXPECT_EQ(result.remaining, 0);
    EXPECT_EQ(result.failed, 0);
    EXPECT_EQ(result.error, "");
  }

  void WaitCaughtUp(Store& store) {
    ASSERT_TRUE(Eventually([&] { return CaughtUp(store); })) << Describe(store);
  }

  // EmbedAll, then waits for the index to hold every vector: Embed alone does not guarantee
  // it while the worker is still loading the index (see RecallRightAfterEmbed... below).
  void Settle(Store& store) {
    ASSERT_NO_FATAL_FAILURE(EmbedAll(store));
    ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(store));
  }

  static absl::StatusOr<RecallResult> Recall(Store& store, const std::string& query,
                                             RecallMode mode, int limit = 10) {
    RecallRequest request;
    request.query = query;
    request.mode = mode;
    request.limit = limit;
    return store.Recall(request);
  }

  // What the dense arm should score `item` for `query`: the cosine of the query's vector and
  // the version's own stored vector (its text embedded, then quantized).
  double OwnSimilarity(const std::string& query, const Version& version) {
    if (embedder_ == nullptr) {
      absl::StatusOr<std::unique_ptr<embed::Embedder>> e = embed::MakeEmbedder("builtin");
      EXPECT_TRUE(e.ok());
      embedder_ = std::move(*e);
    }
    const std::string texts[] = {query,
                                 vector::EmbeddingText(version.identity.key, version.body_json)};
    absl::StatusOr<std::vector<float>> v = embedder_->Embed(texts, embed::Role::kDocument);
    EXPECT_TRUE(v.ok());
    const size_t dim = embedder_->info().dimension;
    std::vector<float> stored(dim);
    EXPECT_TRUE(
        vector::Decode(vector::Encode(std::span<const float>(v->data() + dim, dim)), stored));
    return vector::Dot(std::span<const float>(v->data(), dim), stored);
  }

  // A small corpus on distinct topics, each with a word no other memory uses.
  void WriteCorpus() {
    Write(Req("tea", R"({"text": "She drinks green tea after lunch"})", "habits"));
    Write(Req("billing-db", R"({"text": "We chose PostgreSQL for billing"})", "decisions"));
    Write(Req("quokka", R"({"text": "A quokka lives on Rottnest island"})", "animals"));
    Write(Req("deploy", R"({"text": "Kubernetes cluster upgrades happen on Fridays"})", "ops"));
    Write(Req("colour", R"({"text": "Alice's favourite colour is turquoise"})", "people"));
  }

  strata::testing::TempDir dir_;
  std::string path_;  // The store: a SQLite file in dir_, or a PostgreSQL database's URI.
  // Where a PostgreSQL store's node saves its index (a SQLite store saves it beside its file).
  std::string index_dir_ = dir_.File("index");
  FakeClock clock_{kNow};
  std::unique_ptr<Store> store_;
  std::unique_ptr<embed::Embedder> embedder_;  // For OwnSimilarity.
};

// ---------------------------------------------------------------------------------------------
// Embedding: on demand and in the background.

TEST_P(DenseTest, EmbedLeavesNothingPendingAndOneVectorPerVersion) {
  OpenStore();
  for (int i = 0; i < 60; ++i) {
    Write(Req(absl::StrCat("k", i), absl::StrCat(R"({"text": "note number )", i, R"("})")));
  }
  for (int i = 0; i < 20; ++i) {  // Second versions: every version gets a vector.
    Write(Req(absl::StrCat("k", i), absl::StrCat(R"({"text": "revised note )", i, R"("})")));
  }
  int64_t last_done = 0;
  int calls = 0;
  ASSERT_OK_AND_ASSIGN(
      const EmbedResult result,
      store_->Embed({.limit = 100000}, {.progress = [&](int64_t done, int64_t total) {
                      EXPECT_GT(done, last_done);
                      EXPECT_LE(done, total);
                      last_done = done;
                      ++calls;
                    }}));
  EXPECT_EQ(result.remaining, 0);
  EXPECT_EQ(result.failed, 0);
  EXPECT_EQ(result.attempted, result.embedded);
  EXPECT_EQ(calls > 0, result.embedded > 0);
  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  ASSERT_TRUE(stats.embeddings.has_value());
  EXPECT_EQ(stats.versions, 80);
  EXPECT_EQ(stats.embeddings->vectors, stats.versions);
  EXPECT_EQ(stats.embeddings->pending, 0);
  EXPECT_EQ(stats.embeddings->dimension, 384);
  EXPECT_THAT(stats.embeddings->embedder, HasSubstr("builtin/"));
  EXPECT_EQ(stats.embeddings->last_error, "");
}

TEST_P(DenseTest, EmbedOfOneCategoryOrIdentityLeavesNothingPendingInScope) {
  OpenStore();
  WriteCorpus();
  ASSERT_OK_AND_ASSIGN(const EmbedResult by_category,
                       store_->Embed({.category = "animals", .limit = 1000}, {}));
  EXPECT_EQ(by_category.remaining, 0);
  ASSERT_OK_AND_ASSIGN(
      const EmbedResult by_identity,
      store_->Embed({.identity = Identity{.category = "ops", .key = "deploy"}, .limit = 1000}, {}));
  EXPECT_EQ(by_identity.remaining, 0);
  EXPECT_LE(by_identity.embedded, 1);
}

TEST_P(DenseTest, EmbedRejectsBadRequests) {
  OpenStore();
  Write(Req("k", R"("x")"));
  EXPECT_THAT(store_->Embed({.limit = 0}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit")));
  EXPECT_THAT(store_->Embed({.identity = Identity{.category = "notes", .key = "absent"}}, {}),
              StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_P(DenseTest, BackgroundWorkerEmbedsWithoutEmbedBeingCalled) {
  OpenStore();
  WriteCorpus();
  Write(Req("tea", R"({"text": "She drinks jasmine tea after lunch now"})", "habits"));
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  const EmbeddingStats e = Embeddings(*store_);
  EXPECT_EQ(e.vectors, 6);
  EXPECT_GE(e.embedded_since_start, 1);
  // The worker's vectors serve dense recall.
  EXPECT_THAT(Keys(Recall(*store_, "quokka", RecallMode::kDense, 1)), ElementsAre("quokka"));
}

TEST_P(DenseTest, DenseScoresAreEachVersionsOwnCosine) {
  OpenStore();
  WriteCorpus();
  ASSERT_NO_FATAL_FAILURE(Settle(*store_));
  for (const std::string query : {"beverage", "drank", "database for invoices", "quokka island"}) {
    ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall(*store_, query, RecallMode::kDense, 5));
    EXPECT_EQ(result.mode, RecallMode::kDense);
    // Up to 5: only what is above the embedder's similarity floor.
    ASSERT_FALSE(result.items.empty()) << query;
    ASSERT_LE(result.items.size(), 5u) << query;
    const std::optional<double> floor = Embeddings(*store_).similarity_floor;
    ASSERT_TRUE(floor.has_value());
    for (size_t i = 0; i < result.items.size(); ++i) {
      const RecallItem& item = result.items[i];
      EXPECT_NEAR(item.score, OwnSimilarity(query, item.version), 1e-4)
          << query << " / " << item.version.identity.key;
      EXPECT_EQ(item.dense_rank, static_cast<int>(i) + 1);
      EXPECT_EQ(item.fts5_rank, std::nullopt);
      EXPECT_GT(item.score, *floor) << query << " / " << item.version.identity.key;
      if (i > 0) {
        EXPECT_LE(item.score, result.items[i - 1].score);
      }
    }
  }
  EXPECT_THAT(Keys(Recall(*store_, "beverage", RecallMode::kDense, 1)), ElementsAre("tea"));
}

// ---------------------------------------------------------------------------------------------
// Spaces: switching embedders.

TEST_P(DenseTest, SwitchingEmbedderReembedsInTheNewSpaceAndKeepsTheOld) {
  OpenStore("builtin");
  WriteCorpus();
  Write(Req("quokka", R"({"text": "A quokka lives on Rottnest island, near Perth"})", "animals"));
  ASSERT_NO_FATAL_FAILURE(Settle(*store_));
  const int64_t versions = Versions(*store_);
  ASSERT_EQ(versions, 6);
  const std::string default_space = Embeddings(*store_).embedder;

  OpenStore("builtin:dim=512");
  {
    const EmbeddingStats e = Embeddings(*store_);
    EXPECT_NE(e.embedder, default_space);
    EXPECT_EQ(e.dimension, 512);
    // The new space starts empty; the worker may already have begun on it.
    EXPECT_EQ(e.vectors + e.pending, versions);
  }
  EmbedAll(*store_);
  EXPECT_EQ(Embeddings(*store_).vectors, versions);
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  EXPECT_THAT(Keys(Recall(*store_, "quokka", RecallMode::kDense, 1)), ElementsAre("quokka"));
  EXPECT_THAT(Keys(Recall(*store_, "PostgreSQL billing", RecallMode::kDense, 1)),
              ElementsAre("billing-db"));
  ASSERT_OK_AND_ASSIGN(const RecallResult hybrid,
                       Recall(*store_, "quokka", RecallMode::kHybrid, 1));
  EXPECT_THAT(Keys(hybrid), ElementsAre("quokka"));

  OpenStore("builtin");
  {
    // The first space's vectors were kept: nothing to embed again.
    const EmbeddingStats e = Embeddings(*store_);
    EXPECT_EQ(e.embedder, default_space);
    EXPECT_EQ(e.vectors, versions);
    EXPECT_EQ(e.pending, 0);
  }
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  EXPECT_EQ(Embeddings(*store_).embedded_since_start, 0);
  EXPECT_THAT(Keys(Recall(*store_, "quokka", RecallMode::kDense, 1)), ElementsAre("quokka"));
}

// ---------------------------------------------------------------------------------------------
// The index file.

TEST_P(DenseTest, IndexIsRebuiltWhenItsFileIsDeleted) {
  OpenStore();
  WriteCorpus();
  // Few enough for the HNSW graph to link every node (more, and a near-duplicate crowd can
  // leave a node unreachable: see InScopeVersionsTheIndexCannotReachAreStillFound).
  for (int i = 0; i < 20; ++i) {
    Write(Req(absl::StrCat("filler", i), absl::StrCat(R"({"text": "filler memory )", i, R"("})")));
  }
  EmbedAll(*store_);
  const std::string index = CloseAndDeleteIndex();

  OpenStore();
  // Whether the index is still building or already rebuilt, dense recall answers correctly.
  EXPECT_THAT(Keys(Recall(*store_, "quokka", RecallMode::kDense, 1)), ElementsAre("quokka"));
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  const EmbeddingStats e = Embeddings(*store_);
  EXPECT_EQ(e.indexed, 25);
  EXPECT_EQ(e.embedded_since_start, 0);  // Rebuilt from stored vectors, not re-embedded.
  EXPECT_THAT(Keys(Recall(*store_, "quokka", RecallMode::kDense, 1)), ElementsAre("quokka"));
  // A rebuilt index is saved.
  EXPECT_TRUE(Eventually([&] { return std::filesystem::exists(index + ".meta"); }));
  EXPECT_GT(Embeddings(*store_).index_file_bytes, 0);
}

TEST_P(DenseTest, IndexWithManyNewVectorsIsSavedOnCloseAndLoadedOnOpen) {
  OpenStore();
  // The empty index built at the start is saved.
  ASSERT_TRUE(Eventually([&] { return Embeddings(*store_).index_file_bytes > 0; }));
  const int64_t empty_bytes = Embeddings(*store_).index_file_bytes;
  std::vector<WriteRequest> batch;
  for (int i = 0; i < 1200; ++i) {
    batch.push_back(Req(absl::StrCat("m", i), absl::StrCat(R"({"text": "memory )", i, R"("})")));
  }
  ASSERT_OK(store_->RememberBatch(batch, {}));
  Write(Req("quokka", R"({"text": "A quokka lives on Rottnest island"})", "animals"));
  // The worker alone embeds (no Embed racing it, so no vector is stored twice and re-added):
  // once caught up, the graph no longer changes and is what gets saved.
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  // What the index answers before closing; the loaded index must answer the same.
  const std::vector<std::string> queries = {"quokka Rottnest", "memory 17", "memory 1100"};
  std::vector<absl::StatusOr<RecallResult>> before;
  for (const std::string& query : queries)
    before.push_back(Recall(*store_, query, RecallMode::kDense, 20));
  const std::string index = IndexFile();
  store_.reset();
  EXPECT_GT(static_cast<int64_t>(std::filesystem::file_size(index)), empty_bytes);

  OpenStore();
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  EXPECT_EQ(Embeddings(*store_).indexed, 1201);
  EXPECT_EQ(Embeddings(*store_).embedded_since_start, 0);
  for (size_t q = 0; q < queries.size(); ++q) {
    ASSERT_OK(before[q]);
    ASSERT_OK_AND_ASSIGN(const RecallResult after,
                         Recall(*store_, queries[q], RecallMode::kDense, 20));
    ASSERT_EQ(after.items.size(), before[q]->items.size()) << queries[q];
    for (size_t i = 0; i < after.items.size(); ++i) {
      EXPECT_EQ(after.items[i].version.memory_id, before[q]->items[i].version.memory_id)
          << queries[q] << " #" << i;
      EXPECT_EQ(after.items[i].score, before[q]->items[i].score) << queries[q] << " #" << i;
    }
  }
}

// Embed promises that the index is up to date when it returns, even while the worker is
// rebuilding it at startup: the rebuild takes its last vectors and publishes under the same
// lock as Backfill's catch-up, so a vector stored meanwhile is in the published index.
TEST_P(DenseTest, RecallRightAfterEmbedFindsTheVectorWhileTheIndexIsRebuilt) {
  OpenStore();
  std::vector<WriteRequest> batch;
  for (int i = 0; i < 5000; ++i) {
    batch.push_back(Req(absl::StrCat("m", i), absl::StrCat(R"({"text": "memory )", i, R"("})")));
  }
  ASSERT_OK(store_->RememberBatch(batch, {}));
  EmbedAll(*store_);
  CloseAndDeleteIndex();

  OpenStore();  // The worker starts rebuilding the index from 5,000 stored vectors.
  Write(Req("axolotl", R"({"text": "The axolotl regrows its limbs"})", "animals"));
  EmbedAll(*store_);
  int recalls = 0;
  std::vector<std::string> misses;
  auto recall = [&](const std::string& state) {
    ++recalls;
    const std::vector<std::string> keys =
        Keys(Recall(*store_, "axolotl limbs", RecallMode::kDense, 1));
    if (keys != std::vector<std::string>{"axolotl"}) {
      misses.push_back(absl::StrCat(keys.empty() ? "<nothing>" : keys[0], " (", state, ")"));
    }
  };
  recall(Embeddings(*store_).index_state);  // Most likely still building: an exact scan.
  // From the moment the index is published, recall as often as possible until it caught up.
  bool caught_up = false;
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (!caught_up && std::chrono::steady_clock::now() < until) {
    const EmbeddingStats e = Embeddings(*store_);
    if (e.index_state == "ready") {
      recall(absl::StrCat("ready, ", e.indexed, " indexed of ", e.vectors));
      caught_up = e.pending == 0 && e.indexed == e.vectors;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ASSERT_TRUE(caught_up) << Describe(*store_);
  EXPECT_THAT(misses, IsEmpty()) << "of " << recalls << " recalls";
}

class CorruptIndexTest : public DenseTest {
 protected:
  // Saves an index of the corpus, lets `damage` have its file, and opens the store again: it
  // opens, and the index is rebuilt from the stored vectors.
  void StoreOpensAndRebuildsTheIndexAfter(const std::function<void(const std::string&)>& damage) {
    OpenStore();
    WriteCorpus();
    EmbedAll(*store_);
    // Make the file hold the vectors: a rebuild saves what it built.
    const std::string index = CloseAndDeleteIndex();
    OpenStore();
    ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
    ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(index + ".meta"); }));
    store_.reset();

    ASSERT_GT(ReadAll(index).size(), 100u);
    damage(index);

    OpenStore();
    EXPECT_THAT(Keys(Recall(*store_, "quokka", RecallMode::kDense, 1)), ElementsAre("quokka"));
    ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
    EXPECT_EQ(Embeddings(*store_).indexed, 5);
    EXPECT_EQ(Embeddings(*store_).embedded_since_start, 0);
    EXPECT_THAT(Keys(Recall(*store_, "quokka", RecallMode::kDense, 1)), ElementsAre("quokka"));
    EXPECT_THAT(Keys(Recall(*store_, "PostgreSQL billing", RecallMode::kHybrid, 1)),
                ElementsAre("billing-db"));
  }
};

TEST_P(CorruptIndexTest, TruncatedIndexIsRebuilt) {
  StoreOpensAndRebuildsTheIndexAfter([](const std::string& index) {
    const std::string bytes = ReadAll(index);
    WriteAll(index, bytes.substr(0, bytes.size() / 2));
  });
}

TEST_P(CorruptIndexTest, GarbageIndexIsRebuilt) {
  StoreOpensAndRebuildsTheIndexAfter([](const std::string& index) {
    std::string garbage = ReadAll(index);
    for (size_t i = 0; i < garbage.size(); i += 7)
      garbage[i] = static_cast<char>(garbage[i] ^ 0x5a);
    WriteAll(index, garbage);
  });
}

TEST_P(CorruptIndexTest, EmptyIndexIsRebuilt) {
  StoreOpensAndRebuildsTheIndexAfter([](const std::string& index) { WriteAll(index, ""); });
}

TEST_P(CorruptIndexTest, IndexWithAGarbageMetaIsRebuilt) {
  StoreOpensAndRebuildsTheIndexAfter(
      [](const std::string& index) { WriteAll(index + ".meta", "\x01\x02 not json"); });
}

// A meta file that is JSON with a field of another type (here "bytes" as a string) once made
// HnswIndex::Load throw on the worker thread and std::terminate the process at open; it must
// only make the index rebuild.
class DenseDeathTest : public DenseTest {};

TEST_P(DenseDeathTest, MetaWithAFieldOfTheWrongTypeDoesNotCrashTheStore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  OpenStore();
  ASSERT_TRUE(Eventually([&] { return Embeddings(*store_).index_state == "ready"; }));
  const std::string meta_path = IndexFile() + ".meta";
  store_.reset();
  ASSERT_TRUE(std::filesystem::exists(meta_path));
  std::string meta = ReadAll(meta_path);
  const size_t at = meta.find("\"bytes\":");
  ASSERT_NE(at, std::string::npos) << meta;
  meta.insert(at + 8, "\"");
  meta.insert(meta.find_first_of(",}", at + 9), "\"");
  WriteAll(meta_path, meta);
  // The child runs the test again from its start, in a directory of its own, and _Exit runs
  // no destructor: it closes its store (whose worker may be saving the index there: a file
  // it wrote during remove_all kept the directory) and removes its directory itself.
  const auto exit_with = [this](absl::StatusOr<std::unique_ptr<Store>>& store, int code) {
    if (store.ok()) store->reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_.path(), ignored);
    std::_Exit(code);
  };
  EXPECT_EXIT(
      {
        absl::StatusOr<std::unique_ptr<Store>> store = Open();
        if (!store.ok()) exit_with(store, 2);
        const bool ready = Eventually([&] { return Embeddings(**store).index_state == "ready"; });
        exit_with(store, ready ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

// ---------------------------------------------------------------------------------------------
// Two Stores (two processes' worth of connections and workers) on one store.

TEST_P(DenseTest, AnotherStoresWritesBecomeVisibleToDenseRecall) {
  OpenStore();
  WriteCorpus();
  ASSERT_NO_FATAL_FAILURE(Settle(*store_));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> other, Open());
  Write(*other, Req("axolotl", R"({"text": "The axolotl regrows its limbs"})", "animals"));
  EmbedAll(*other);
  // This store's worker polls for rows another connection wrote.
  EXPECT_TRUE(Eventually([&] {
    return Keys(Recall(*store_, "axolotl limbs", RecallMode::kDense, 1)) ==
           std::vector<std::string>{"axolotl"};
  })) << Describe(*store_);
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  EXPECT_EQ(Embeddings(*store_).indexed, 6);
  EXPECT_THAT(Keys(Recall(*store_, "axolotl limbs", RecallMode::kHybrid, 1)),
              ElementsAre("axolotl"));
  // And the other way round, without an explicit Embed: the workers do it.
  Write(*store_, Req("narwhal", R"({"text": "A narwhal tusk is a tooth"})", "animals"));
  EXPECT_TRUE(Eventually([&] {
    return Keys(Recall(*other, "narwhal tusk", RecallMode::kDense, 1)) ==
           std::vector<std::string>{"narwhal"};
  })) << Describe(*other);
}

// ---------------------------------------------------------------------------------------------
// Filters and the time axes: every mode agrees on which memories are in scope.

class DenseScopeTest : public DenseTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(DenseTest::SetUp());
    ASSERT_NO_FATAL_FAILURE(OpenStore());
    // Every memory mentions a heron, so each mode returns the whole scope (limit allowing).
    Add("a", "a heron fishing at dawn", "cat1", "insight", {"x", "y"}, "");
    Add("b", "heron feathers are grey", "cat2", "insight", {"x"}, "");
    Add("c", "we decided to photograph the heron", "cat1", "decision", {"y"}, "ws");
    Add("d", "heron nesting season starts in march", "cat2", "decision", {}, "ws");
  }

  void Add(const std::string& key, const std::string& text, const std::string& category,
           const std::string& type, std::vector<std::string> tags, const std::string& workspace) {
    WriteRequest request = Req(key, absl::StrCat(R"({"text": ")", text, R"("})"), category);
    request.identity.workspace = workspace;
    request.type = type;
    request.tags = std::move(tags);
    Write(request);
  }

  // The keys recalled for `request` in each mode; all three must agree.
  std::set<std::string> InEveryMode(RecallRequest request) {
    std::set<std::string> first;
    for (RecallMode mode : {RecallMode::kFts5, RecallMode::kDense, RecallMode::kHybrid}) {
      request.mode = mode;
      absl::StatusOr<RecallResult> result = store_->Recall(request);
      EXPECT_OK(result) << RecallModeName(mode);
      const std::set<std::string> keys = KeySet(result);
      if (mode == RecallMode::kFts5) {
        first = keys;
      } else {
        EXPECT_EQ(keys, first) << "mode " << RecallModeName(mode) << " disagrees with fts5 for \""
                               << request.query << "\"";
      }
    }
    return first;
  }

  static RecallRequest Query(const std::string& query) {
    RecallRequest request;
    request.query = query;
    request.limit = 50;
    return request;
  }
};

TEST_P(DenseScopeTest, FiltersSelectTheSameMemoriesInEveryMode) {
  ASSERT_NO_FATAL_FAILURE(Settle(*store_));
  auto with = [](auto set) {
    RecallRequest r = Query("heron");
    set(r);
    return r;
  };
  using Set = std::set<std::string>;
  EXPECT_EQ(InEveryMode(Query("heron")), (Set{"a", "b", "c", "d"}));
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) { r.filters.category = "cat1"; })),
            (Set{"a", "c"}));
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) { r.filters.type = "decision"; })),
            (Set{"c", "d"}));
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) { r.filters.workspace = "ws"; })),
            (Set{"c", "d"}));
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) { r.filters.workspace = ""; })), (Set{"a", "b"}));
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) { r.filters.tags = {"x"}; })), (Set{"a", "b"}));
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) { r.filters.tags = {"x", "y"}; })), (Set{"a"}));
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) {
              r.filters.category = "cat2";
              r.filters.type = "decision";
              r.filters.workspace = "ws";
            })),
            (Set{"d"}));
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) { r.filters.tags = {"z"}; })), Set{});
  EXPECT_EQ(InEveryMode(with([](RecallRequest& r) { r.filters.category = "nope"; })), Set{});
}

TEST_P(DenseScopeTest, AsOfBeforeAnUpdateFindsTheOldVersionInEveryMode) {
  const int64_t before_update = clock_.NowUnixMs();
  clock_.Advance(kMinute);
  Add("a", "a heron fishing by the lake at dusk", "cat1", "insight", {"x", "y"}, "");
  ASSERT_NO_FATAL_FAILURE(Settle(*store_));

  RecallRequest past = Query("heron");
  past.as_of_unix_ms = before_update;
  for (RecallMode mode : {RecallMode::kFts5, RecallMode::kDense, RecallMode::kHybrid}) {
    past.mode = mode;
    ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(past));
    EXPECT_EQ(KeySet(result), (std::set<std::string>{"a", "b", "c", "d"})) << RecallModeName(mode);
    for (const RecallItem& item : result.items) {
      if (item.version.identity.key == "a") {
        EXPECT_EQ(item.version.version, 1) << RecallModeName(mode);
      }
    }
  }
  // Without as_of: only the current version, even for a query closer to the old text.
  RecallRequest now = Query("heron fishing at dawn");
  for (RecallMode mode : {RecallMode::kFts5, RecallMode::kDense, RecallMode::kHybrid}) {
    now.mode = mode;
    ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(now));
    int versions_of_a = 0;
    for (const RecallItem& item : result.items) {
      if (item.version.identity.key != "a") continue;
      ++versions_of_a;
      EXPECT_EQ(item.version.version, 2) << RecallModeName(mode);
    }
    EXPECT_EQ(versions_of_a, 1) << RecallModeName(mode);
  }
}

TEST_P(DenseScopeTest, ValidAtFindsWhatWasTrueThenInEveryMode) {
  WriteRequest early = Req("season", R"({"text": "heron season began early"})", "cat3");
  early.valid_from_unix_ms = kNow - 300 * kDay;
  early.valid_to_unix_ms = kNow - 60 * kDay;
  Write(early);
  WriteRequest late = Req("season", R"({"text": "heron season began late"})", "cat3");
  late.valid_from_unix_ms = kNow - 60 * kDay;
  Write(late);
  ASSERT_NO_FATAL_FAILURE(Settle(*store_));

  RecallRequest then = Query("heron season");
  then.filters.category = "cat3";
  then.valid_at_unix_ms = kNow - 150 * kDay;
  for (RecallMode mode : {RecallMode::kFts5, RecallMode::kDense, RecallMode::kHybrid}) {
    then.mode = mode;
    ASSERT_OK_AND_ASSIGN(const RecallResult result, store_->Recall(then));
    ASSERT_EQ(result.items.size(), 1u) << RecallModeName(mode);
    EXPECT_EQ(result.items[0].version.body_json, early.body_json) << RecallModeName(mode);
  }
  then.valid_at_unix_ms = kNow - 10 * kDay;
  EXPECT_EQ(InEveryMode(then), (std::set<std::string>{"season"}));
  then.valid_at_unix_ms = kNow - 400 * kDay;
  EXPECT_EQ(InEveryMode(then), std::set<std::string>{});
  // Memories a-d became valid when recorded (kNow): none was true a day earlier.
  RecallRequest before = Query("heron");
  before.valid_at_unix_ms = kNow - kDay;
  EXPECT_EQ(InEveryMode(before), (std::set<std::string>{"season"}));
}

TEST_P(DenseScopeTest, ForgottenMemoryIsNotRecalledInAnyMode) {
  ASSERT_NO_FATAL_FAILURE(Settle(*store_));
  const int64_t before_forget = clock_.NowUnixMs();
  clock_.Advance(kMinute);
  ASSERT_OK_AND_ASSIGN(const bool forgot, store_->Forget({.category = "cat2", .key = "b"}, "test"));
  ASSERT_TRUE(forgot);
  // "heron feathers" is b's own text: the nearest vector, and still forgotten.
  EXPECT_EQ(InEveryMode(Query("heron feathers grey")), (std::set<std::string>{"a", "c", "d"}));
  RecallRequest past = Query("heron feathers grey");
  past.as_of_unix_ms = before_forget;
  EXPECT_EQ(InEveryMode(past), (std::set<std::string>{"a", "b", "c", "d"}));
}

// ---------------------------------------------------------------------------------------------
// The index's over-fetch and its exact-scan fallback.

class SelectiveFilterTest : public DenseTest {
 protected:
  // `common` memories in category "many" about one topic, then `few` in "few" about another.
  void Fill(int common, int few) {
    std::vector<WriteRequest> batch;
    for (int i = 0; i < common; ++i) {
      batch.push_back(
          Req(absl::StrCat("many", i),
              absl::StrCat(R"({"text": "kubernetes cluster deploy rollout number )", i, R"("})"),
              "many"));
    }
    for (int i = 0; i < few; ++i) {
      // Farther from the query than every "many" memory, but related: above the floor.
      batch.push_back(
          Req(absl::StrCat("few", i),
              absl::StrCat(R"({"text": "apple pie for the kubernetes team, recipe )", i, R"("})"),
              "few"));
    }
    ASSERT_OK(store_->RememberBatch(batch, {}));
    EmbedAll(*store_);
    ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  }

  absl::StatusOr<RecallResult> Filtered(RecallMode mode, int limit, int offset = 0) {
    RecallRequest request;
    request.query = "kubernetes cluster deploy";
    request.mode = mode;
    request.limit = limit;
    request.offset = offset;
    request.filters.category = "few";
    return store_->Recall(request);
  }
};

TEST_P(SelectiveFilterTest, LimitIsHonoredWhenTheFilterMatchesFewerThanTheOverFetch) {
  OpenStore();
  ASSERT_NO_FATAL_FAILURE(Fill(300, 3));
  EXPECT_THAT(Keys(Filtered(RecallMode::kDense, 10)), UnorderedElementsAre("few0", "few1", "few2"));
  EXPECT_EQ(Keys(Filtered(RecallMode::kDense, 2)).size(), 2u);
  EXPECT_EQ(Keys(Filtered(RecallMode::kDense, 10, 1)).size(), 2u);
  EXPECT_THAT(Keys(Filtered(RecallMode::kHybrid, 10)),
              UnorderedElementsAre("few0", "few1", "few2"));
  EXPECT_THAT(Keys(Filtered(RecallMode::kDense, 1000)),
              UnorderedElementsAre("few0", "few1", "few2"));
}

TEST_P(SelectiveFilterTest, IndexTooLargeToReachTheScopeFallsBackToAnExactScan) {
  // Over-fetch grows 40, 160, 640, 2560, then gives up: with 3000 closer memories outside the
  // filter, only an exact scan finds the three inside it.
  OpenStore();
  ASSERT_NO_FATAL_FAILURE(Fill(3000, 3));
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Filtered(RecallMode::kDense, 10));
  EXPECT_THAT(Keys(result), UnorderedElementsAre("few0", "few1", "few2"));
  for (const RecallItem& item : result.items) {
    EXPECT_NEAR(item.score, OwnSimilarity("kubernetes cluster deploy", item.version), 1e-4);
  }
  EXPECT_EQ(Keys(Filtered(RecallMode::kDense, 2)).size(), 2u);
  EXPECT_THAT(Keys(Filtered(RecallMode::kHybrid, 5)), UnorderedElementsAre("few0", "few1", "few2"));
  // Unfiltered, the index answers with the right topic.
  RecallRequest unfiltered;
  unfiltered.query = "kubernetes cluster deploy";
  unfiltered.mode = RecallMode::kDense;
  unfiltered.limit = 20;
  ASSERT_OK_AND_ASSIGN(const RecallResult all, store_->Recall(unfiltered));
  ASSERT_EQ(all.items.size(), 20u);
  for (const RecallItem& item : all.items) EXPECT_EQ(item.version.identity.category, "many");
}

// An HNSW search does not return every element even when k exceeds the index size: nodes
// whose in-links were pruned are unreachable (here typically 2-5% of 600 near-identical
// vectors). DenseArm must take a short answer as "the index cannot reach more" and find the
// rest by the exact scan, not drop them. The index is built nondeterministically, so the test
// tries a few stores; treating a short answer as the end would almost surely lose a version.
TEST_P(SelectiveFilterTest, InScopeVersionsTheIndexCannotReachAreStillFound) {
  constexpr int kStores = 4;
  constexpr int kMemories = 600;
  constexpr int kEvery = 20;  // Every 20th memory is in category "few": 30 of them.
  for (int attempt = 0; attempt < kStores && !HasFailure(); ++attempt) {
    strata::testing::TempDir dir;
    path_ = temporal::testing::NewStorePath(GetParam(), dir, "memory.db");
    OpenStore();
    std::vector<WriteRequest> batch;
    for (int i = 0; i < kMemories; ++i) {
      batch.push_back(
          Req(absl::StrCat("many", i),
              absl::StrCat(R"({"text": "kubernetes cluster deploy rollout number )", i, R"("})"),
              i % kEvery == 0 ? "few" : "many"));
    }
    ASSERT_OK(store_->RememberBatch(batch, {}));
    EmbedAll(*store_);
    ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
    ASSERT_EQ(Keys(Filtered(RecallMode::kFts5, 100)).size(),
              static_cast<size_t>(kMemories / kEvery));
    ASSERT_OK_AND_ASSIGN(const RecallResult result, Filtered(RecallMode::kDense, 100));
    EXPECT_EQ(result.items.size(), static_cast<size_t>(kMemories / kEvery))
        << "store " << attempt << ": the filter matches " << kMemories / kEvery
        << " memories with vectors";
    store_.reset();
  }
}

// ---------------------------------------------------------------------------------------------
// Hybrid and auto.

TEST_P(DenseTest, HybridItemsCarryTheirArmsRanksAndRepeatExactly) {
  OpenStore();
  WriteCorpus();
  for (int i = 0; i < 20; ++i) {
    Write(
        Req(absl::StrCat("tea", i), absl::StrCat(R"({"text": "tea tasting session )", i, R"("})")));
  }
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  const std::string query = "green tea after lunch";
  ASSERT_OK_AND_ASSIGN(const RecallResult first, Recall(*store_, query, RecallMode::kHybrid, 20));
  ASSERT_OK_AND_ASSIGN(const RecallResult second, Recall(*store_, query, RecallMode::kHybrid, 20));
  EXPECT_EQ(first.mode, RecallMode::kHybrid);
  ASSERT_EQ(first.items.size(), 20u);
  ASSERT_EQ(second.items.size(), first.items.size());
  EXPECT_EQ(first.items[0].version.identity.key, "tea");
  for (size_t i = 0; i < first.items.size(); ++i) {
    const RecallItem& item = first.items[i];
    EXPECT_EQ(item.version.memory_id, second.items[i].version.memory_id) << i;
    EXPECT_EQ(item.score, second.items[i].score) << i;
    EXPECT_EQ(item.fts5_rank, second.items[i].fts5_rank) << i;
    EXPECT_EQ(item.dense_rank, second.items[i].dense_rank) << i;
    EXPECT_TRUE(item.fts5_rank || item.dense_rank) << i;
    // The fused score is the sum of reciprocal ranks of the arms that found it.
    double expected = 0;
    if (item.fts5_rank) expected += 1.0 / (60 + *item.fts5_rank);
    if (item.dense_rank) expected += 1.0 / (60 + *item.dense_rank);
    EXPECT_DOUBLE_EQ(item.score, expected) << i;
    if (i > 0) {
      EXPECT_LE(item.score, first.items[i - 1].score);
    }
  }
  // The exact match is first in both arms.
  EXPECT_EQ(first.items[0].fts5_rank, 1);
  EXPECT_EQ(first.items[0].dense_rank, 1);
  // Paging through hybrid results gives the same order.
  RecallRequest page;
  page.query = query;
  page.mode = RecallMode::kHybrid;
  page.limit = 5;
  page.offset = 5;
  ASSERT_OK_AND_ASSIGN(const RecallResult paged, store_->Recall(page));
  ASSERT_EQ(paged.items.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(paged.items[i].version.memory_id, first.items[5 + i].version.memory_id) << i;
  }
}

// Terms in most of the index (here "shared", "platform") carry no keyword evidence: alone, the
// keyword arm lists their matches after the rare terms' (newest first); as an arm of hybrid it
// gives fusion only what a selective term matched.
TEST_P(DenseTest, HybridKeywordArmRanksOnlyMatchesOfSelectiveTerms) {
  OpenStore();
  for (int i = 0; i < 1100; ++i) {  // past text::kPruneMinRows, where terms are judged common
    Write(Req(absl::StrCat("note", i),
              absl::StrCat(R"({"text": "note )", i, R"( about the shared platform"})")));
  }
  Write(Req("zebra", R"({"text": "the shared platform caches zebra stripes"})"));
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  ASSERT_OK_AND_ASSIGN(const RecallResult keyword,
                       Recall(*store_, "shared zebra", RecallMode::kFts5, 20));
  ASSERT_EQ(keyword.items.size(), 20u);
  EXPECT_EQ(keyword.items[0].version.identity.key, "zebra");
  ASSERT_OK_AND_ASSIGN(const RecallResult hybrid,
                       Recall(*store_, "shared zebra", RecallMode::kHybrid, 20));
  ASSERT_FALSE(hybrid.items.empty());
  EXPECT_EQ(hybrid.items[0].version.identity.key, "zebra");
  for (size_t i = 1; i < hybrid.items.size(); ++i) {
    EXPECT_EQ(hybrid.items[i].fts5_rank, std::nullopt)
        << i << ": " << hybrid.items[i].version.identity.key;
  }
}

TEST_P(DenseTest, HybridFindsAParaphraseThatKeywordsMiss) {
  OpenStore();
  WriteCorpus();
  ASSERT_NO_FATAL_FAILURE(Settle(*store_));
  // "drank" is not a stem of "drinks" (no keyword match); the lexicon relates them.
  EXPECT_THAT(Keys(Recall(*store_, "drank", RecallMode::kFts5)), IsEmpty());
  ASSERT_OK_AND_ASSIGN(const RecallResult hybrid, Recall(*store_, "drank", RecallMode::kHybrid, 1));
  ASSERT_THAT(Keys(hybrid), ElementsAre("tea"));
  EXPECT_EQ(hybrid.items[0].fts5_rank, std::nullopt);
  EXPECT_EQ(hybrid.items[0].dense_rank, 1);
}

TEST_P(DenseTest, AutoIsHybridOnceTheIndexHoldsVectors) {
  OpenStore();
  // Nothing embedded yet: keyword recall.
  ASSERT_TRUE(Eventually([&] { return Embeddings(*store_).index_state == "ready"; }));
  ASSERT_OK_AND_ASSIGN(const RecallResult empty, Recall(*store_, "quokka", RecallMode::kAuto));
  EXPECT_EQ(empty.mode, RecallMode::kFts5);
  WriteCorpus();
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall(*store_, "quokka", RecallMode::kAuto));
  EXPECT_EQ(result.mode, RecallMode::kHybrid);
  EXPECT_THAT(Keys(result), Contains("quokka"));
  EXPECT_EQ(Keys(result)[0], "quokka");
  // A query without words lists memories, newest first, whatever the mode.
  for (RecallMode mode : {RecallMode::kAuto, RecallMode::kDense, RecallMode::kHybrid}) {
    ASSERT_OK_AND_ASSIGN(const RecallResult listing, Recall(*store_, "", mode, 2));
    EXPECT_EQ(listing.mode, RecallMode::kFts5) << RecallModeName(mode);
    EXPECT_THAT(Keys(listing), ElementsAre("colour", "deploy")) << RecallModeName(mode);
  }
}

TEST_P(DenseTest, WithoutAnEmbedderAutoIsKeywordAndDenseIsRejected) {
  OpenStore("none");
  WriteCorpus();
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall(*store_, "quokka", RecallMode::kAuto));
  EXPECT_EQ(result.mode, RecallMode::kFts5);
  EXPECT_THAT(Keys(result), ElementsAre("quokka"));
  for (RecallMode mode : {RecallMode::kDense, RecallMode::kHybrid}) {
    EXPECT_THAT(Recall(*store_, "quokka", mode),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("embedder")))
        << RecallModeName(mode);
  }
  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  EXPECT_FALSE(stats.embeddings.has_value());
  EXPECT_THAT(store_->Embed({}, {}), StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_FALSE(std::filesystem::exists(IndexFile()));
}

TEST_P(DenseTest, UnknownEmbedderIsRejectedAtOpen) {
  EXPECT_THAT(Open("foo"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("foo")));
  EXPECT_THAT(Open("builtin:dim=3"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dim")));
}

// ---------------------------------------------------------------------------------------------
// Purge of the newest version, then a new one: before schema 5 SQLite gave the new version the
// purged one's id (neither engine does now); these guard what that broke.

// After the newest memory is purged, the next version reuses its id, which the worker's
// cursor has already passed; Purge sends the cursor back, so the worker embeds it.
TEST_P(DenseTest, WorkerEmbedsANewVersionWhoseIdAPurgeFreed) {
  OpenStore();
  Write(Req("tea", R"({"text": "She drinks green tea after lunch"})"));
  Write(Req("billing-db", R"({"text": "We chose PostgreSQL for billing"})"));
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  ASSERT_OK_AND_ASSIGN(const int64_t purged,
                       store_->Purge({.category = "notes", .key = "billing-db"}));
  ASSERT_EQ(purged, 1);
  Write(Req("sailing", R"({"text": "We go sailing on the lake every summer"})"));
  // The worker polls every 250 ms; 10 s is ample.
  EXPECT_TRUE(
      Eventually([&] { return Embeddings(*store_).pending == 0; }, std::chrono::seconds(10)))
      << Describe(*store_);
}

// The index must not keep a purged version's vector under its id: a new version that reuses
// the id would inherit it, and dense recall would return the new memory for the purged
// memory's topic. Purge marks the label deleted.
TEST_P(DenseTest, NewVersionReusingAPurgedIdIsNotRecalledByThePurgedVector) {
  OpenStore();
  Write(Req("tea", R"({"text": "She drinks green tea after lunch"})"));
  Write(Req("billing-db", R"({"text": "We chose PostgreSQL for billing"})"));
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  ASSERT_OK(store_->Purge({.category = "notes", .key = "billing-db"}));
  Write(Req("sailing", R"({"text": "We go sailing on the lake every summer"})"));
  const std::string query = "PostgreSQL billing";
  ASSERT_OK_AND_ASSIGN(const RecallResult result, Recall(*store_, query, RecallMode::kDense));
  for (const RecallItem& item : result.items) {
    EXPECT_NEAR(item.score, OwnSimilarity(query, item.version), 1e-4)
        << item.version.identity.key << " scored as another memory's vector";
  }
}

TEST_P(DenseTest, PurgedMemoryIsNeverRecalled) {
  OpenStore();
  WriteCorpus();
  Write(Req("z-last", R"({"text": "the newest memory stays"})"));
  ASSERT_NO_FATAL_FAILURE(WaitCaughtUp(*store_));
  ASSERT_OK(store_->Purge({.category = "animals", .key = "quokka"}));
  for (RecallMode mode : {RecallMode::kDense, RecallMode::kHybrid}) {
    EXPECT_THAT(Keys(Recall(*store_, "quokka Rottnest island", mode)), Not(Contains("quokka")))
        << RecallModeName(mode);
  }
  ASSERT_OK_AND_ASSIGN(const Stats stats, store_->GetStats());
  EXPECT_EQ(stats.embeddings->vectors, stats.versions);
  EXPECT_EQ(stats.embeddings->pending, 0);
}

// Every suite on both engines.
INSTANTIATE_TEST_SUITE_P(Engines, DenseTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, CorruptIndexTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, DenseDeathTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, DenseScopeTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, SelectiveFilterTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata
