#include "vector/vector_service.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "absl/time/time.h"
#include "temporal/version_table.h"
#include "util/status_macros.h"

namespace strata::vector {
namespace {

// Until the index is ready, dense recall scans exactly when the store had at most this many
// vectors at start (an exact scan costs about 3 us a vector: 6 ms).
constexpr int64_t kMaxExactScanAtStart = 2000;
// How often an idle worker looks for versions written by another process.
constexpr auto kPollInterval = std::chrono::milliseconds(250);
// After embedding a partial batch, the worker waits this long for more writes to gather.
constexpr auto kGatherInterval = std::chrono::milliseconds(100);
// The worker catches a backlog up on PublishedIndex::kBuildThreads threads once writes have
// paused this long; while they go on (and for what trickles in), on one.
constexpr auto kQuietBeforeParallelBuild = std::chrono::milliseconds(500);

int64_t FileBytes(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(bytes);
}

}  // namespace

VectorService::VectorService(std::string index_path, std::unique_ptr<embed::Embedder> embedder,
                             Space space, int64_t rows_at_start, bool embed_in_background)
    : embedder_(std::move(embedder)),
      space_(std::move(space)),
      rows_at_start_(rows_at_start),
      embed_in_background_(embed_in_background),
      index_(std::move(index_path), space_),
      embedding_(*embedder_, space_, index_) {}

absl::StatusOr<std::unique_ptr<VectorService>> VectorService::Start(
    std::string index_path, const DbOpener& open_db, std::unique_ptr<embed::Embedder> embedder,
    store::Db& db, int64_t now_unix_ms, bool embed_in_background) {
  ASSIGN_OR_RETURN(Space space, RegisterSpace(db, embedder->info(), now_unix_ms));
  ASSIGN_OR_RETURN(const int64_t rows, LastVectorRow(db));
  // What is pending at start is this process's to embed as much as anyone's.
  ASSIGN_OR_RETURN(const int64_t newest, temporal::VersionTable(&db).NewestVersionId());
  ASSIGN_OR_RETURN(std::unique_ptr<store::Db> worker_db, open_db());
  std::unique_ptr<VectorService> service(new VectorService(
      std::move(index_path), std::move(embedder), std::move(space), rows, embed_in_background));
  service->embedding_.ClaimThrough(newest);
  service->worker_ =
      std::jthread([s = service.get(), wdb = std::move(worker_db)](std::stop_token stop) mutable {
        s->Run(stop, std::move(wdb));
      });
  return service;
}

VectorService::~VectorService() {
  worker_.request_stop();
  // Under the lock: the worker either has not checked for a stop yet or is waiting.
  absl::MutexLock lock(&wake_mu_);
  wake_.SignalAll();
}

void VectorService::Wrote(std::span<const int64_t> memory_ids) {
  embedding_.Claim(memory_ids);
  Wake();
}

void VectorService::WroteThrough(int64_t version_id) {
  embedding_.ClaimThrough(version_id);
  Wake();
}

void VectorService::Wake() {
  absl::MutexLock lock(&wake_mu_);
  woken_ = true;
  last_write_ = std::chrono::steady_clock::now();
  wake_.SignalAll();
}

void VectorService::Forget(std::span<const int64_t> version_ids) { index_.Forget(version_ids); }

void VectorService::Run(std::stop_token stop, std::unique_ptr<store::Db> db) {
  // Before the index: a recall may come while a large index loads.
  embedding_.MeasureFloor();
  if (absl::Status s = index_.LoadOrRebuild(*db, stop); !s.ok()) embedding_.SetError(s);
  // Versions up to here have a vector or are someone else's to embed. Version ids only rise
  // (schema 5) and are given in commit order, so none appears behind it later.
  int64_t cursor = 0;
  int failures = 0;
  bool backlog = true;  // Until a batch comes short: what a start finds may be a backlog.
  while (!stop.stop_requested()) {
    bool quiet;
    {
      absl::MutexLock lock(&wake_mu_);
      quiet = std::chrono::steady_clock::now() - last_write_ >= kQuietBeforeParallelBuild;
    }
    const int threads = backlog && quiet ? PublishedIndex::kBuildThreads : 1;
    if (absl::Status s = index_.CatchUp(*db, threads).status(); !s.ok()) embedding_.SetError(s);
    embedding_.MeasureFloor();  // Again while the embedder could not be reached.
    absl::StatusOr<int64_t> embedded = 0;
    if (embed_in_background_) embedded = embedding_.EmbedBacklogBatch(*db, cursor);
    std::chrono::milliseconds pause = kPollInterval;
    bool wakeable = true;
    if (!embedded.ok()) {
      embedding_.SetError(embedded.status());
      // Back off while the embedder is down: 0.5 s, 1 s, ... up to 30 s.
      failures = std::min(failures + 1, 7);
      pause = std::chrono::milliseconds(std::min(30000, 250 << failures));
    } else {
      failures = 0;
      backlog = *embedded >= embedder_->batch_size();
      if (backlog) continue;  // Keep going.
      if (*embedded > 0) {
        // Writes are trickling in: let them gather, so one vector transaction covers many
        // writes instead of doubling the commits of a stream of single writes.
        pause = kGatherInterval;
        wakeable = false;
      }
    }
    const absl::Time deadline = absl::Now() + absl::FromChrono(pause);
    absl::MutexLock lock(&wake_mu_);
    while (!stop.stop_requested() && !(wakeable && woken_)) {
      if (wake_.WaitWithDeadline(&wake_mu_, deadline)) break;  // Timed out.
    }
    woken_ = false;
  }
  index_.SaveIfWorthIt();
}

absl::StatusOr<BackfillResult> VectorService::Backfill(store::Db& db, const BacklogScope& scope,
                                                       int64_t limit, const WorkControl& control) {
  absl::StatusOr<BackfillResult> result = embedding_.Backfill(db, scope, limit, control);
  Wake();  // The worker stood aside meanwhile.
  return result;
}

absl::StatusOr<std::vector<float>> VectorService::EmbedQuery(std::string_view query) {
  const std::string text(query);
  return embedder_->Embed(std::span<const std::string>(&text, 1), embed::Role::kQuery);
}

std::optional<std::vector<Neighbor>> VectorService::SearchIndex(std::span<const float> query,
                                                                size_t k) const {
  std::shared_ptr<HnswIndex> idx = index_.Get();
  if (idx == nullptr) return std::nullopt;
  return idx->Search(query, k);
}

std::optional<ChanceLevel> VectorService::IndexChance(std::span<const float> query) const {
  std::shared_ptr<HnswIndex> idx = index_.Get();
  if (idx == nullptr) return std::nullopt;
  return idx->Chance(query);
}

std::optional<size_t> VectorService::IndexedCount() const {
  std::shared_ptr<HnswIndex> idx = index_.Get();
  if (idx == nullptr) return std::nullopt;
  return idx->size();
}

bool VectorService::DenseReady() const {
  if (std::optional<size_t> indexed = IndexedCount()) return *indexed > 0;
  return rows_at_start_ > 0 && rows_at_start_ <= kMaxExactScanAtStart;
}

float VectorService::SimilarityFloor() const { return embedding_.SimilarityFloor(); }

absl::StatusOr<IndexCheck> VectorService::MeasureIndexRecall(store::Db& db, int queries, int k) {
  return index_.MeasureRecall(db, queries, k);
}

absl::StatusOr<VectorStats> VectorService::Stats(store::Db& db) {
  VectorStats stats{.embedder = space_.fingerprint, .dimension = space_.dimension};
  ASSIGN_OR_RETURN(const VectorCounts counts, CountVectorsAndPending(db, space_.id));
  stats.vectors = counts.vectors;
  stats.pending = counts.pending;
  std::shared_ptr<HnswIndex> idx = index_.Get();
  stats.indexed = idx ? static_cast<int64_t>(idx->size()) : 0;
  stats.index_file_bytes = FileBytes(index_.file_path());
  stats.index_state = index_.state();
  EmbedWorker::Counters counters = embedding_.counters();
  stats.embedded_since_start = counters.embedded;
  stats.last_error = std::move(counters.last_error);
  stats.similarity_floor = counters.similarity_floor;
  return stats;
}

}  // namespace strata::vector
