#pragma once
// Gives stored versions their vectors: the worker thread's backlog batches and a caller's
// Backfill, which never embed the same versions, and what they learnt about the embedder
// (its similarity floor, its last error).
//
// Processes sharing a store (nodes on one database, servers on one file) each see every
// version without a vector. The worker embeds at once the versions this process wrote
// (Claim: read by memory, not found by scanning) and the backlog it started with
// (ClaimThrough). Another process's new versions are their writer's to embed: a scan of the
// backlog, every half kForeignGrace, embeds those stored for kForeignGrace since a scan
// first found them there (util::Sightings). Left to whoever saw them first, every version
// was embedded once per process, each vector stored twice was indexed again by every
// process, and every turn scanned the versions written since the last. A writer that is slow
// or stopped only delays its versions by the grace.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "embed/embedder.h"
#include "store/db.h"
#include "strata/strata.h"
#include "util/sightings.h"
#include "vector/embeddings.h"
#include "vector/published_index.h"

namespace strata::vector {

struct BackfillResult {
  int64_t embedded = 0;   // Versions given a vector by this call.
  int64_t attempted = 0;  // Versions it tried.
  int64_t failed = 0;     // attempted - embedded.
  int64_t remaining = 0;  // In scope and still without a vector.
  std::string error;      // Why some failed.
};

// How long another process's new version waits for its writer to embed it.
inline constexpr std::chrono::seconds kForeignGrace{2};

// Thread safety: every method may be called from any thread; each call that takes a Db uses
// that connection only. Locks, in order: embed_mu_, then PublishedIndex's (a Backfill catches
// the index up before it lets the worker embed again), and embed_mu_, then mu_. mu_ is a
// leaf, held only to copy or set the members it guards; embed_mu_ is held across embedding
// and SQLite, which is what it serialises.
class EmbedWorker {
 public:
  struct Counters {
    int64_t embedded = 0;                   // Since start, by the worker and by Backfill.
    std::string last_error;                 // The embedder's last failure; empty after a success.
    std::optional<float> similarity_floor;  // Nullopt until measured.
  };

  // Borrows all three; they outlive this.
  EmbedWorker(embed::Embedder& embedder, const Space& space, PublishedIndex& index);

  // This process committed new versions of `memory_ids`: the worker's next turn embeds them
  // (every version of these memories without a vector).
  void Claim(std::span<const int64_t> memory_ids) ABSL_LOCKS_EXCLUDED(mu_);
  // The same for every version up to `version_id`, whoever wrote it (a backlog at start, an
  // import).
  void ClaimThrough(int64_t version_id) ABSL_LOCKS_EXCLUDED(mu_);

  // The worker thread's turn, unless a Backfill runs or waits: embeds a batch of this
  // process's claimed versions and, every kScanInterval (or at once while a backlog lasts),
  // a batch of the backlog after `cursor` (advanced past what it stored, never past a
  // version waiting for its writer). Returns how many versions it embedded (0: nothing
  // pending or ready, or it stood aside).
  absl::StatusOr<int64_t> EmbedBacklogBatch(store::Db& db, int64_t& cursor)
      ABSL_LOCKS_EXCLUDED(embed_mu_, mu_);
  // Embeds up to `limit` versions of `scope` now, on the caller's thread and connection, then
  // brings the index up to date. Reports progress and checks for cancellation after each
  // batch; Cancelled keeps the vectors stored so far.
  absl::StatusOr<BackfillResult> Backfill(store::Db& db, const BacklogScope& scope, int64_t limit,
                                          const WorkControl& control)
      ABSL_LOCKS_EXCLUDED(embed_mu_, mu_);

  // Measures the similarity floor (similarity_floor.h) unless it is known; a failure is
  // recorded as the last error and retried by the next call.
  void MeasureFloor() ABSL_LOCKS_EXCLUDED(mu_);
  // The floor; 0 until measured (a negative similarity is never evidence).
  float SimilarityFloor() const ABSL_LOCKS_EXCLUDED(mu_);
  // Records `status` as the last error (clears it when OK).
  void SetError(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  Counters counters() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Embeds one batch of `scope` after `cursor`; advances `cursor` past what it stored and
  // adds to *attempted (when given) how many it tried. Returns how many versions it embedded
  // (0: nothing pending in scope).
  absl::StatusOr<int64_t> EmbedBatch(store::Db& db, const BacklogScope& scope, int64_t& cursor,
                                     int64_t max_items, int64_t* attempted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(embed_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Embeds the claimed memories' versions after `cursor`, one batch; returns how many.
  absl::StatusOr<int64_t> EmbedClaimed(store::Db& db, int64_t cursor)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(embed_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Scans the backlog after `cursor` and embeds what is ready (Ready); returns how many.
  absl::StatusOr<int64_t> EmbedUnclaimed(store::Db& db, int64_t& cursor)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(embed_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Embeds and stores `versions`; returns how many.
  absl::StatusOr<int64_t> Embed(store::Db& db, std::vector<PendingVersion> versions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(embed_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Of `pending` (the backlog after `cursor`, oldest first), those to embed now, at most the
  // embedder's batch; moves `cursor` up to the last of them but not past a version waiting.
  std::vector<PendingVersion> Ready(std::vector<PendingVersion> pending, int64_t& cursor)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(embed_mu_) ABSL_LOCKS_EXCLUDED(mu_);

  embed::Embedder* const embedder_;  // Not owned; outlives this.
  const Space* const space_;         // Not owned; outlives this.
  PublishedIndex* const index_;      // Not owned; outlives this.

  // Held by Backfill for its whole run and by the worker for each batch (TryLock: it skips a
  // turn rather than wait), so the two never embed the same versions.
  absl::Mutex embed_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::atomic<int> backfills_waiting_{0};  // For embed_mu_: the worker stands aside.
  // When a scan first found the store's newest version at or past each id: a version's grace
  // runs from the first whose id reaches it (a grace from when the scan's window first held
  // it held a drain to ~4 windows a grace, ~500 versions a second).
  util::Sightings sightings_ ABSL_GUARDED_BY(embed_mu_){kForeignGrace};
  std::chrono::steady_clock::time_point last_scan_ ABSL_GUARDED_BY(embed_mu_);

  mutable absl::Mutex mu_;  // Guards the members below.
  int64_t embedded_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  std::optional<float> similarity_floor_ ABSL_GUARDED_BY(mu_);
  // Claims: memory id -> when this process wrote it last; versions up to claimed_through_.
  absl::flat_hash_map<int64_t, std::chrono::steady_clock::time_point> claimed_
      ABSL_GUARDED_BY(mu_);
  int64_t claimed_through_ ABSL_GUARDED_BY(mu_) = 0;
  bool scan_now_ ABSL_GUARDED_BY(mu_) = true;  // Scan at the next turn, whenever the last.
};

}  // namespace strata::vector
