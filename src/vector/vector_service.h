#pragma once
// The dense side of the store: one embedder, its space, the HNSW index of its vectors, and a
// worker thread that embeds the backlog and keeps the index caught up with the database.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/embedder.h"
#include "store/db.h"
#include "strata/strata.h"
#include "vector/embeddings.h"
#include "vector/hnsw_index.h"

namespace strata::vector {

enum class IndexState { kLoading, kBuilding, kReady };
const char* IndexStateName(IndexState state);

struct VectorStats {
  std::string embedder;  // The fingerprint.
  int dimension = 0;
  int64_t vectors = 0;  // Stored vectors of this space.
  int64_t pending = 0;  // Versions waiting for one.
  int64_t indexed = 0;  // Vectors in the in-memory index.
  IndexState index_state = IndexState::kLoading;
  int64_t embedded_since_start = 0;  // By the worker and by Backfill.
  std::string last_error;            // The embedder's last failure; empty after a success.
  int64_t index_file_bytes = 0;
  // The embedder's similarity floor (similarity_floor.h); nullopt until the worker measured it.
  std::optional<float> similarity_floor;
};

struct BackfillResult {
  int64_t embedded = 0;   // Versions given a vector by this call.
  int64_t attempted = 0;  // Versions it tried.
  int64_t failed = 0;     // attempted - embedded.
  int64_t remaining = 0;  // In scope and still without a vector.
  std::string error;      // Why some failed.
};

// The index lives in "<db>.hnsw" (and "<db>.hnsw.meta"), saved after a rebuild and on
// shutdown when enough is new (a few vectors are cheaper to catch up at the next start); at start
// it is loaded when it names this embedder's space and its checksum holds, else rebuilt from the
// stored vectors. Either way on the worker thread: a search never waits for it (SearchIndex returns
// nullopt until it is ready). Thread safety: every method may be called from any thread; each call
// that takes a Db uses that connection only (the caller's thread owns it).
class VectorService {
 public:
  // Registers the embedder's space through `db` and starts the worker, which opens its own
  // connection to `path`. Without `embed_in_background`, only Backfill embeds; the worker
  // keeps the index.
  static absl::StatusOr<std::unique_ptr<VectorService>> Start(
      const std::string& path, const store::DbOptions& db_options,
      std::unique_ptr<embed::Embedder> embedder, store::Db& db, int64_t now_unix_ms,
      bool embed_in_background);
  ~VectorService();  // Stops the worker and saves the index if it changed.

  const Space& space() const { return space_; }
  embed::Embedder& embedder() { return *embedder_; }
  static std::string IndexPath(const std::string& db_path) { return db_path + ".hnsw"; }

  // New versions were committed: the worker looks for them now rather than at its next poll.
  void Wake();
  // These versions were purged: the index stops returning them.
  void Forget(std::span<const int64_t> version_ids);

  // Embeds up to `limit` versions of `scope` now, on the caller's thread and connection, then
  // brings the index up to date. Reports progress and checks for cancellation after each
  // batch; Cancelled keeps the vectors stored so far.
  absl::StatusOr<BackfillResult> Backfill(store::Db& db, const BacklogScope& scope, int64_t limit,
                                          const WorkControl& control);

  // The query's vector.
  absl::StatusOr<std::vector<float>> EmbedQuery(std::string_view query);
  // The k nearest indexed versions; nullopt while the index is loading or building.
  std::optional<std::vector<Neighbor>> SearchIndex(std::span<const float> query, size_t k) const;
  // How many vectors the index holds; nullopt while it is loading or building.
  std::optional<size_t> IndexedCount() const;
  // Whether a dense search is worth running now: the index is ready and holds vectors, or it
  // is not ready yet but the store had few enough vectors at start for an exact scan.
  bool DenseReady() const;
  // Below this cosine similarity a dense match is no evidence (similarity_floor.h): measured
  // by the worker when it starts; 0 until then (a negative similarity is never evidence).
  float SimilarityFloor() const;

  absl::StatusOr<VectorStats> Stats(store::Db& db);

  // How well the index finds true nearest neighbours, for `queries` stored vectors spread
  // over the store as queries, against an exact scan of every vector (IndexCheck). Slow (a
  // full scan per query): for checks and benchmarks. Errors: FailedPrecondition while the
  // index is not ready.
  absl::StatusOr<IndexCheck> MeasureIndexRecall(store::Db& db, int queries, int k);

 private:
  VectorService(std::string path, std::unique_ptr<embed::Embedder> embedder, Space space,
                int64_t rows_at_start, bool embed_in_background);
  void Run(std::stop_token stop, std::unique_ptr<store::Db> db);
  // Loads the saved index or rebuilds it from the stored vectors, then publishes it.
  void LoadOrRebuild(store::Db& db, std::stop_token stop);
  // Adds to the index every vector written after the watermark, on `threads` threads.
  // Returns how many.
  absl::StatusOr<int64_t> CatchUp(store::Db& db, int threads);
  // Adds to `idx` the vectors written after `watermark` (advanced past them), on `threads`
  // threads. With `stop`, the index is not yet published, and a stop request ends the work
  // early. Returns how many were added.
  absl::StatusOr<int64_t> AddVectorsAfter(store::Db& db, HnswIndex& idx, int64_t& watermark,
                                          const std::stop_token* stop, int threads);
  // Embeds one batch of the backlog after *cursor; advances *cursor past what it stored and
  // adds to *attempted (when given) how many it tried. Returns how many versions it embedded
  // (0: nothing pending in scope).
  absl::StatusOr<int64_t> EmbedBatch(store::Db& db, const BacklogScope& scope, int64_t& cursor,
                                     int64_t max_items, int64_t* attempted);
  // Writes the index beside the database; a failure is reported on stderr and is not fatal.
  void SaveIndex(const HnswIndex& idx, int64_t watermark) const;
  std::shared_ptr<HnswIndex> index() const;
  void SetError(const absl::Status& status);
  // Measures the similarity floor unless it is known; a failure is SetError'd and retried by
  // the next call.
  void MeasureFloor();

  const std::string path_;  // The database's.
  std::unique_ptr<embed::Embedder> embedder_;
  const Space space_;
  const int64_t rows_at_start_;  // The highest embeddings row id at start (>= the vectors).
  const bool embed_in_background_;

  mutable std::mutex mu_;  // Guards the members below, not the index's contents.
  std::condition_variable_any wake_;
  bool woken_ = false;
  // When this process last committed a write (Wake); the epoch when it has not.
  std::chrono::steady_clock::time_point last_write_;
  std::shared_ptr<HnswIndex> index_;  // Null until loaded or built.
  IndexState state_ = IndexState::kLoading;
  int64_t watermark_ = 0;         // Embeddings rows up to here are in index_.
  int64_t added_since_save_ = 0;  // Vectors in index_ and not in its file.
  int64_t embedded_ = 0;
  std::string last_error_;
  std::optional<float> similarity_floor_;

  std::mutex catch_up_mu_;  // One CatchUp at a time.
  // Held by Backfill for its whole run and by the worker for each batch (try_lock: it
  // skips a turn rather than wait), so the two never embed the same versions.
  std::mutex embed_mu_;
  std::atomic<int> backfills_waiting_{0};  // For embed_mu_: the worker stands aside.
  std::jthread worker_;                    // Last: stops first.
};

}  // namespace strata::vector
