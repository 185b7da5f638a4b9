#pragma once
// The HNSW index of one space as searches see it: loaded from its file or rebuilt from the
// stored vectors, published once complete, kept caught up with the database, and saved.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/db.h"
#include "strata/strata.h"
#include "vector/embeddings.h"
#include "vector/hnsw_index.h"

namespace strata::vector {

enum class IndexState { kLoading, kBuilding, kReady };
const char* IndexStateName(IndexState state);

// The file is "<db>.hnsw" (and "<db>.hnsw.meta"): loaded when it names this space and its
// checksum holds, else rebuilt. Until LoadOrRebuild publishes it, Get returns null.
// Thread safety: every method may be called from any thread; each call that takes a Db uses
// that connection only. Locks, in order: catch_up_mu_, then mu_ (never the reverse).
// catch_up_mu_ is held across reading the database and inserting; mu_ only to copy or set
// the members it guards, so a search never waits for a catch-up.
class PublishedIndex {
 public:
  // Threads that insert a backlog: a rebuild, a Backfill's catch-up, or the worker's once
  // writes have paused (while they go on, one does: the other core serves the writes).
  static constexpr int kBuildThreads = 2;

  // Saves to and loads from `file_path`; empty, it is neither saved nor loaded.
  PublishedIndex(std::string file_path, Space space);

  // Loads the saved index or rebuilds it from the stored vectors, then publishes it. On an
  // error (or a stop request) nothing is published and dense recall keeps scanning exactly.
  absl::Status LoadOrRebuild(store::Db& db, std::stop_token stop)
      ABSL_LOCKS_EXCLUDED(catch_up_mu_, mu_);
  // Adds to the published index every vector written after the watermark, on `threads`
  // threads. Returns how many (0 before publication: LoadOrRebuild adds them).
  absl::StatusOr<int64_t> CatchUp(store::Db& db, int threads)
      ABSL_LOCKS_EXCLUDED(catch_up_mu_, mu_);
  // Writes the index when enough is new since its file (a few vectors are cheaper to catch
  // up at the next start than a whole index to rewrite). For shutdown.
  void SaveIfWorthIt() const ABSL_LOCKS_EXCLUDED(mu_);

  // These versions were purged: the index stops returning them.
  void Forget(std::span<const int64_t> version_ids) ABSL_LOCKS_EXCLUDED(mu_);
  // The published index; null while it is loading or building.
  std::shared_ptr<HnswIndex> Get() const ABSL_LOCKS_EXCLUDED(mu_);
  IndexState state() const ABSL_LOCKS_EXCLUDED(mu_);
  const std::string& file_path() const { return file_path_; }

  // How well the index finds true nearest neighbours (VectorService::MeasureIndexRecall).
  absl::StatusOr<IndexCheck> MeasureRecall(store::Db& db, int queries, int k)
      ABSL_LOCKS_EXCLUDED(catch_up_mu_, mu_);

 private:
  // Adds to `idx` the vectors written after `watermark` (advanced past them), on `threads`
  // threads. With `stop`, the index is not yet published, and a stop request ends the work
  // early. Returns how many were added.
  absl::StatusOr<int64_t> AddVectorsAfter(store::Db& db, HnswIndex& idx, int64_t& watermark,
                                          const std::stop_token* stop, int threads) const;
  // A failure is logged (util/log.h) and is not fatal.
  void Save(const HnswIndex& idx, int64_t watermark) const;

  const std::string file_path_;
  const Space space_;

  // One catch-up (or the final one of LoadOrRebuild, with the publication) at a time, so
  // two never insert the same rows.
  absl::Mutex catch_up_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;  // Guards the members below, not the index's contents.
  std::shared_ptr<HnswIndex> index_ ABSL_GUARDED_BY(mu_);  // Null until loaded or built.
  IndexState state_ ABSL_GUARDED_BY(mu_) = IndexState::kLoading;
  int64_t watermark_ ABSL_GUARDED_BY(mu_) = 0;         // Embeddings rows up to here are in index_.
  int64_t added_since_save_ ABSL_GUARDED_BY(mu_) = 0;  // Vectors in index_ and not in its file.
};

}  // namespace strata::vector
