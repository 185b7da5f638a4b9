#pragma once
// The dense side of the store: one embedder, its space, the HNSW index of its vectors, and a
// worker thread that embeds the backlog and keeps the index caught up with the database.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "embed/embedder.h"
#include "store/db.h"
#include "strata/strata.h"
#include "vector/embed_worker.h"
#include "vector/embeddings.h"
#include "vector/hnsw_index.h"
#include "vector/published_index.h"

namespace strata::vector {

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

// The index lives in a file of its own ("<db>.hnsw" and "<db>.hnsw.meta" beside a SQLite
// file; IndexPath), saved after a rebuild and on
// shutdown when enough is new (a few vectors are cheaper to catch up at the next start); at start
// it is loaded when it names this embedder's space and its checksum holds, else rebuilt from the
// stored vectors. Either way on the worker thread: a search never waits for it (SearchIndex returns
// nullopt until it is ready). A facade over the two halves, which the worker thread drives:
// PublishedIndex (load, rebuild, save, catch-up) and EmbedWorker (backlog, Backfill).
// Thread safety: every method may be called from any thread; each call that takes a Db uses
// that connection only (the caller's thread owns it). Locks, in order: EmbedWorker's
// embed_mu_, PublishedIndex's catch_up_mu_, PublishedIndex's mu_; EmbedWorker's mu_ and
// wake_mu_ below are leaves (no other lock is taken while one is held).
class VectorService {
 public:
  // Opens the worker's own connection to the store.
  using DbOpener = std::function<absl::StatusOr<std::unique_ptr<store::Db>>()>;

  // Registers the embedder's space through `db` and starts the worker on a connection from
  // `open_db`; the index is saved in `index_path`. Without `embed_in_background`, only
  // Backfill embeds; the worker keeps the index.
  static absl::StatusOr<std::unique_ptr<VectorService>> Start(
      std::string index_path, const DbOpener& open_db, std::unique_ptr<embed::Embedder> embedder,
      store::Db& db, int64_t now_unix_ms, bool embed_in_background);
  ~VectorService();  // Stops the worker and saves the index if it changed.

  const Space& space() const { return space_; }
  embed::Embedder& embedder() { return *embedder_; }
  // Where a SQLite store's index is saved: beside the file.
  static std::string IndexPath(const std::string& db_path) { return db_path + ".hnsw"; }

  // This process committed new versions of `memory_ids`: the worker looks for them now
  // rather than at its next poll, and embeds them without leaving them to another process
  // (embed_worker.h).
  void Wrote(std::span<const int64_t> memory_ids) ABSL_LOCKS_EXCLUDED(wake_mu_);
  // The same for every version up to `version_id` (an import's).
  void WroteThrough(int64_t version_id) ABSL_LOCKS_EXCLUDED(wake_mu_);
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
  // The query's chance level among the indexed vectors (HnswIndex::Chance); nullopt while the
  // index is loading or building.
  std::optional<ChanceLevel> IndexChance(std::span<const float> query) const;
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
  VectorService(std::string index_path, std::unique_ptr<embed::Embedder> embedder, Space space,
                int64_t rows_at_start, bool embed_in_background);
  // The worker looks for new versions now rather than at its next poll.
  void Wake() ABSL_LOCKS_EXCLUDED(wake_mu_);
  // The worker thread: measures the floor, loads the index, then catches it up and embeds
  // the backlog until `stop`, and saves the index if enough changed.
  void Run(std::stop_token stop, std::unique_ptr<store::Db> db) ABSL_LOCKS_EXCLUDED(wake_mu_);

  std::unique_ptr<embed::Embedder> embedder_;
  const Space space_;
  const int64_t rows_at_start_;  // The highest embeddings row id at start (>= the vectors).
  const bool embed_in_background_;
  PublishedIndex index_;
  EmbedWorker embedding_;  // Borrows embedder_, space_ and index_.

  absl::Mutex wake_mu_;  // Guards the members below.
  absl::CondVar wake_;   // Signalled by Wake and on stop.
  bool woken_ ABSL_GUARDED_BY(wake_mu_) = false;
  // When this process last committed a write (Wake); the epoch when it has not.
  std::chrono::steady_clock::time_point last_write_ ABSL_GUARDED_BY(wake_mu_);
  std::jthread worker_;  // Last: stops first.
};

}  // namespace strata::vector
