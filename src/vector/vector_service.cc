#include "vector/vector_service.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"
#include "vector/codec.h"
#include "vector/similarity_floor.h"

namespace strata::vector {
namespace {

// Until the index is ready, dense recall scans exactly when the store had at most this many
// vectors at start (an exact scan costs about 3 us a vector: 6 ms).
constexpr int64_t kMaxExactScanAtStart = 2000;
// How often an idle worker looks for versions written by another process.
constexpr auto kPollInterval = std::chrono::milliseconds(250);
// After embedding a partial batch, the worker waits this long for more writes to gather.
constexpr auto kGatherInterval = std::chrono::milliseconds(100);
// Rows read per step when rebuilding the index or catching it up.
constexpr int64_t kReadChunk = 20000;
// Threads that insert a backlog into the index once writes have paused this long. While
// writes go on (and for what trickles in) one does: the other core serves the writes.
constexpr int kBuildThreads = 2;
constexpr auto kQuietBeforeParallelBuild = std::chrono::milliseconds(500);
// On shutdown the index is saved only when at least this many vectors (and 1% of it) are
// not in the file yet.
constexpr int64_t kMinUnsavedToSave = 1000;

int64_t FileBytes(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(bytes);
}

}  // namespace

const char* IndexStateName(IndexState state) {
  switch (state) {
    case IndexState::kLoading:
      return "loading";
    case IndexState::kBuilding:
      return "building";
    case IndexState::kReady:
      return "ready";
  }
  return "unknown";
}

VectorService::VectorService(std::string path, std::unique_ptr<embed::Embedder> embedder,
                             Space space, int64_t rows_at_start, bool embed_in_background)
    : path_(std::move(path)),
      embedder_(std::move(embedder)),
      space_(std::move(space)),
      rows_at_start_(rows_at_start),
      embed_in_background_(embed_in_background) {}

absl::StatusOr<std::unique_ptr<VectorService>> VectorService::Start(
    const std::string& path, const store::DbOptions& db_options,
    std::unique_ptr<embed::Embedder> embedder, store::Db& db, int64_t now_unix_ms,
    bool embed_in_background) {
  ASSIGN_OR_RETURN(Space space, RegisterSpace(db, embedder->info(), now_unix_ms));
  ASSIGN_OR_RETURN(const int64_t rows, LastVectorRow(db));
  ASSIGN_OR_RETURN(std::unique_ptr<store::Db> worker_db, store::Db::Open(path, db_options));
  std::unique_ptr<VectorService> service(
      new VectorService(path, std::move(embedder), std::move(space), rows, embed_in_background));
  service->worker_ =
      std::jthread([s = service.get(), wdb = std::move(worker_db)](std::stop_token stop) mutable {
        s->Run(stop, std::move(wdb));
      });
  return service;
}

VectorService::~VectorService() {
  worker_.request_stop();
  wake_.notify_all();
}

void VectorService::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
    last_write_ = std::chrono::steady_clock::now();
  }
  wake_.notify_all();
}

void VectorService::Forget(std::span<const int64_t> version_ids) {
  if (std::shared_ptr<HnswIndex> idx = index()) {
    for (int64_t id : version_ids) idx->Remove(id);
  }
}

std::shared_ptr<HnswIndex> VectorService::index() const {
  std::lock_guard lock(mu_);
  return index_;
}

void VectorService::SetError(const absl::Status& status) {
  std::lock_guard lock(mu_);
  last_error_ = status.ok() ? "" : std::string(status.message());
}

void VectorService::Run(std::stop_token stop, std::unique_ptr<store::Db> db) {
  // Before the index: a recall may come while a large index loads.
  MeasureFloor();
  LoadOrRebuild(*db, stop);
  // Versions up to here have a vector or are someone else's to embed. Version ids only rise
  // (schema 5) and are given in commit order, so none appears behind it later.
  int64_t cursor = 0;
  int failures = 0;
  bool backlog = true;  // Until a batch comes short: what a start finds may be a backlog.
  while (!stop.stop_requested()) {
    bool quiet;
    {
      std::lock_guard lock(mu_);
      quiet = std::chrono::steady_clock::now() - last_write_ >= kQuietBeforeParallelBuild;
    }
    const int threads = backlog && quiet ? kBuildThreads : 1;
    if (absl::Status s = CatchUp(*db, threads).status(); !s.ok()) SetError(s);
    MeasureFloor();  // Again while the embedder could not be reached.
    absl::StatusOr<int64_t> embedded = 0;
    // A waiting Backfill goes first (it answers a caller; this thread would otherwise take
    // the lock again at once, batch after batch), and wakes this thread when it is done.
    if (embed_in_background_ && backfills_waiting_ == 0) {
      if (std::unique_lock embedding(embed_mu_, std::try_to_lock); embedding.owns_lock()) {
        embedded = EmbedBatch(*db, BacklogScope{}, cursor, embedder_->batch_size(), nullptr);
      }
    }
    std::chrono::milliseconds pause = kPollInterval;
    bool wakeable = true;
    if (!embedded.ok()) {
      SetError(embedded.status());
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
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, stop, pause, [this, wakeable] { return wakeable && woken_; });
    woken_ = false;
  }
  std::shared_ptr<HnswIndex> idx = index();
  int64_t watermark;
  {
    std::lock_guard lock(mu_);
    watermark = watermark_;
    // A few vectors are cheaper to catch up at the next start than a whole index to rewrite.
    const int64_t worth_saving =
        std::max<int64_t>(kMinUnsavedToSave, idx ? static_cast<int64_t>(idx->size()) / 100 : 0);
    if (idx == nullptr || added_since_save_ < worth_saving) return;
  }
  SaveIndex(*idx, watermark);
}

void VectorService::SaveIndex(const HnswIndex& idx, int64_t watermark) const {
  // Not saving costs only time at the next start (a rebuild or a longer catch-up).
  if (absl::Status s = idx.Save(IndexPath(path_), {space_.fingerprint, watermark}); !s.ok()) {
    std::fprintf(stderr, "strata: could not save the vector index: %s\n",
                 std::string(s.message()).c_str());
  }
}

void VectorService::LoadOrRebuild(store::Db& db, std::stop_token stop) {
  std::shared_ptr<HnswIndex> idx;
  int64_t watermark = 0;
  auto loaded = HnswIndex::Load(IndexPath(path_), space_.fingerprint, space_.dimension);
  if (loaded.ok()) {
    // The file matches the embedder, but is it this database's? One restored from a backup,
    // or one that lost its last commits (power loss), is behind the index: new vectors would
    // reuse row ids under the watermark and never be added, and labels would name versions
    // that are not there. Rebuilt, then.
    absl::StatusOr<int64_t> sequence = VectorRowSequence(db);
    if (!sequence.ok()) {
      loaded = sequence.status();
    } else if (loaded->second.watermark > *sequence) {
      loaded = absl::FailedPreconditionError(
          absl::StrCat("the saved index holds vector rows up to ", loaded->second.watermark,
                       " but the database has given only ", *sequence,
                       " (restored from a backup, or its last commits were lost)"));
    }
  }
  const bool rebuilt = !loaded.ok();
  if (loaded.ok()) {
    idx = std::move(loaded->first);
    watermark = loaded->second.watermark;
  } else {
    if (loaded.status().code() != absl::StatusCode::kNotFound) {
      std::fprintf(stderr, "strata: rebuilding the vector index: %s\n",
                   std::string(loaded.status().message()).c_str());
    }
    {
      std::lock_guard lock(mu_);
      state_ = IndexState::kBuilding;
    }
    idx = std::make_shared<HnswIndex>(space_.dimension);
    if (absl::Status s = AddVectorsAfter(db, *idx, watermark, &stop, kBuildThreads).status();
        !s.ok()) {
      SetError(s);
      return;  // The index stays unavailable; dense recall scans exactly.
    }
  }
  if (stop.stop_requested()) return;
  int64_t unsaved = 0;
  {
    // The last vectors and the publication under the catch-up lock: a Backfill that stored
    // vectors meanwhile found no index to add them to, and must find them here.
    std::lock_guard catch_up(catch_up_mu_);
    absl::StatusOr<int64_t> added = AddVectorsAfter(db, *idx, watermark, &stop, kBuildThreads);
    if (!added.ok()) {
      SetError(added.status());
      return;
    }
    unsaved = rebuilt ? 0 : *added;
    std::lock_guard lock(mu_);
    index_ = idx;
    watermark_ = watermark;
    added_since_save_ = unsaved;
    state_ = IndexState::kReady;
  }
  if (rebuilt) SaveIndex(*idx, watermark);
}

absl::StatusOr<int64_t> VectorService::AddVectorsAfter(store::Db& db, HnswIndex& idx,
                                                       int64_t& watermark,
                                                       const std::stop_token* stop, int threads) {
  int64_t total = 0;
  std::vector<int64_t> labels;
  std::vector<float> vectors;
  while (stop == nullptr || !stop->stop_requested()) {
    labels.clear();
    vectors.clear();
    ASSIGN_OR_RETURN(
        const int64_t rows,
        ReadVectorsAfter(db, space_.id, space_.dimension, watermark, kReadChunk,
                         [&](int64_t row_id, int64_t version_id, std::span<const float> v) {
                           watermark = row_id;
                           labels.push_back(version_id);
                           vectors.insert(vectors.end(), v.begin(), v.end());
                         }));
    // Insertion is most of the cost of embedding a version; searches wait for at most the
    // inserts in flight (HnswIndex's lock).
    idx.AddParallel(labels, vectors, threads);
    total += static_cast<int64_t>(labels.size());
    if (rows < kReadChunk) break;
  }
  return total;
}

absl::StatusOr<int64_t> VectorService::CatchUp(store::Db& db, int threads) {
  std::lock_guard catch_up(catch_up_mu_);
  std::shared_ptr<HnswIndex> idx;
  int64_t watermark;
  {
    std::lock_guard lock(mu_);
    idx = index_;
    watermark = watermark_;
  }
  if (idx == nullptr) return 0;  // LoadOrRebuild adds everything before it publishes.
  ASSIGN_OR_RETURN(const int64_t added, AddVectorsAfter(db, *idx, watermark, nullptr, threads));
  std::lock_guard lock(mu_);
  watermark_ = watermark;
  added_since_save_ += added;
  return added;
}

absl::StatusOr<int64_t> VectorService::EmbedBatch(store::Db& db, const BacklogScope& scope,
                                                  int64_t& cursor, int64_t max_items,
                                                  int64_t* attempted) {
  const int limit = static_cast<int>(std::min<int64_t>(embedder_->batch_size(), max_items));
  ASSIGN_OR_RETURN(std::vector<PendingVersion> pending,
                   PendingVersions(db, space_.id, scope, cursor, limit));
  if (pending.empty()) return 0;
  std::vector<std::string> texts;
  std::vector<int64_t> ids;
  texts.reserve(pending.size());
  ids.reserve(pending.size());
  for (PendingVersion& p : pending) {
    texts.push_back(std::move(p.text));
    ids.push_back(p.version_id);
  }
  if (attempted != nullptr) *attempted += static_cast<int64_t>(ids.size());
  ASSIGN_OR_RETURN(const std::vector<float> vectors, embedder_->Embed(texts));
  if (vectors.size() != ids.size() * space_.dimension) {
    return absl::InternalError(absl::StrCat("embedder ", space_.fingerprint, " returned ",
                                            vectors.size(), " floats for ", ids.size(), " texts"));
  }
  RETURN_IF_ERROR(StoreVectors(db, space_.id, space_.dimension, ids, vectors));
  cursor = ids.back();
  std::lock_guard lock(mu_);
  embedded_ += static_cast<int64_t>(ids.size());
  last_error_.clear();
  return static_cast<int64_t>(ids.size());
}

absl::StatusOr<BackfillResult> VectorService::Backfill(store::Db& db, const BacklogScope& scope,
                                                       int64_t limit, const WorkControl& control) {
  // Declared first, so it runs once the lock is released.
  absl::Cleanup wake_worker = [this] { Wake(); };
  ++backfills_waiting_;
  std::unique_lock embedding(embed_mu_);  // Waits out the worker's batch in progress.
  --backfills_waiting_;
  BackfillResult result;
  ASSIGN_OR_RETURN(const int64_t pending, CountPending(db, space_.id, scope));
  const int64_t total = std::min(limit, pending);
  int64_t cursor = 0;
  while (result.embedded < limit) {
    absl::StatusOr<int64_t> n =
        EmbedBatch(db, scope, cursor, limit - result.embedded, &result.attempted);
    if (!n.ok()) {
      result.error = std::string(n.status().message());
      SetError(n.status());
      break;
    }
    if (*n == 0) break;
    result.embedded += *n;
    if (control.progress) control.progress(result.embedded, total);
    if (control.cancelled && control.cancelled()) {
      RETURN_IF_ERROR(
          CatchUp(db, kBuildThreads).status());  // What was stored is indexed all the same.
      return absl::CancelledError(
          absl::StrCat("embed: cancelled after ", result.embedded, " of ", total));
    }
  }
  result.failed = result.attempted - result.embedded;
  RETURN_IF_ERROR(CatchUp(db, kBuildThreads).status());
  ASSIGN_OR_RETURN(result.remaining, CountPending(db, space_.id, scope));
  return result;
}

absl::StatusOr<std::vector<float>> VectorService::EmbedQuery(std::string_view query) {
  const std::string text(query);
  return embedder_->Embed(std::span<const std::string>(&text, 1));
}

std::optional<std::vector<Neighbor>> VectorService::SearchIndex(std::span<const float> query,
                                                                size_t k) const {
  std::shared_ptr<HnswIndex> idx = index();
  if (idx == nullptr) return std::nullopt;
  return idx->Search(query, k);
}

bool VectorService::DenseReady() const {
  if (std::optional<size_t> indexed = IndexedCount()) return *indexed > 0;
  return rows_at_start_ > 0 && rows_at_start_ <= kMaxExactScanAtStart;
}

float VectorService::SimilarityFloor() const {
  std::lock_guard lock(mu_);
  return similarity_floor_.value_or(0.0f);
}

void VectorService::MeasureFloor() {
  {
    std::lock_guard lock(mu_);
    if (similarity_floor_) return;
  }
  absl::StatusOr<float> floor = MeasureSimilarityFloor(*embedder_);
  if (!floor.ok()) {
    SetError(floor.status());
    return;
  }
  std::lock_guard lock(mu_);
  similarity_floor_ = *floor;
}

std::optional<size_t> VectorService::IndexedCount() const {
  std::shared_ptr<HnswIndex> idx = index();
  if (idx == nullptr) return std::nullopt;
  return idx->size();
}

absl::StatusOr<IndexCheck> VectorService::MeasureIndexRecall(store::Db& db, int queries, int k) {
  std::shared_ptr<HnswIndex> idx = index();
  if (idx == nullptr) {
    return absl::FailedPreconditionError("the vector index is still loading or building");
  }
  RETURN_IF_ERROR(CatchUp(db, kBuildThreads).status());
  const int dim = space_.dimension;
  // Every vector, decoded once (1M x 384 floats: 1.5 GB).
  std::vector<int64_t> labels;
  std::vector<float> all;
  int64_t after = 0;
  while (true) {
    ASSIGN_OR_RETURN(
        const int64_t rows,
        ReadVectorsAfter(db, space_.id, dim, after, kReadChunk,
                         [&](int64_t row_id, int64_t version_id, std::span<const float> v) {
                           after = row_id;
                           labels.push_back(version_id);
                           all.insert(all.end(), v.begin(), v.end());
                         }));
    if (rows < kReadChunk) break;
  }
  const size_t n = labels.size();
  if (n == 0 || queries < 1 || k < 1) return IndexCheck{.recall = 1, .epsilon_recall = 1};
  int64_t found = 0, near = 0, expected = 0;
  std::vector<std::pair<float, int64_t>> scored(n);
  for (int q = 0; q < queries; ++q) {
    const size_t at = (static_cast<size_t>(q) * n) / static_cast<size_t>(queries);
    const std::span<const float> query(all.data() + at * dim, dim);
    for (size_t i = 0; i < n; ++i) {
      scored[i] = {Dot(query, std::span<const float>(all.data() + i * dim, dim)), labels[i]};
    }
    const size_t top = std::min(n, static_cast<size_t>(k));
    std::partial_sort(scored.begin(), scored.begin() + top, scored.end(),
                      [](const auto& a, const auto& b) {
                        return a.first != b.first ? a.first > b.first : a.second < b.second;
                      });
    absl::flat_hash_set<int64_t> truth;
    for (size_t i = 0; i < top; ++i) truth.insert(scored[i].second);
    // A hit's similarity is the exact one (HnswIndex::Search); 1e-6 for float rounding.
    const float farthest = 1.01f * (1.0f - scored[top - 1].first) + 1e-6f;
    for (const Neighbor& hit : idx->Search(query, top)) {
      found += truth.contains(hit.label);
      near += 1.0f - hit.similarity <= farthest;
    }
    expected += static_cast<int64_t>(top);
  }
  return IndexCheck{.recall = static_cast<double>(found) / static_cast<double>(expected),
                    .epsilon_recall = static_cast<double>(near) / static_cast<double>(expected)};
}

absl::StatusOr<VectorStats> VectorService::Stats(store::Db& db) {
  VectorStats stats{.embedder = space_.fingerprint, .dimension = space_.dimension};
  ASSIGN_OR_RETURN(const VectorCounts counts, CountVectorsAndPending(db, space_.id));
  stats.vectors = counts.vectors;
  stats.pending = counts.pending;
  std::shared_ptr<HnswIndex> idx = index();
  stats.indexed = idx ? static_cast<int64_t>(idx->size()) : 0;
  stats.index_file_bytes = FileBytes(IndexPath(path_));
  std::lock_guard lock(mu_);
  stats.index_state = state_;
  stats.embedded_since_start = embedded_;
  stats.last_error = last_error_;
  stats.similarity_floor = similarity_floor_;
  return stats;
}

}  // namespace strata::vector
