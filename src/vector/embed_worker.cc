#include "vector/embed_worker.h"

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "temporal/version_table.h"
#include "util/status_macros.h"
#include "vector/similarity_floor.h"

namespace strata::vector {
namespace {

// The backlog a scan reads, in embedder batches.
constexpr int kWindowBatches = 4;
// How often the worker scans the backlog for versions it did not write: half the grace, so
// that a version waits at most 1.5 times the grace for another process to take it up.
constexpr auto kScanInterval = kForeignGrace / 2;
// Claims beyond this many are not kept (their versions wait for a scan): a bound on memory
// while the embedder is down.
constexpr size_t kMaxClaims = 100000;

}  // namespace

EmbedWorker::EmbedWorker(embed::Embedder& embedder, const Space& space, PublishedIndex& index)
    : embedder_(&embedder), space_(&space), index_(&index) {}

void EmbedWorker::SetError(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  last_error_ = status.ok() ? "" : std::string(status.message());
}

EmbedWorker::Counters EmbedWorker::counters() const {
  absl::MutexLock lock(&mu_);
  return {.embedded = embedded_, .last_error = last_error_, .similarity_floor = similarity_floor_};
}

float EmbedWorker::SimilarityFloor() const {
  absl::MutexLock lock(&mu_);
  return similarity_floor_.value_or(0.0f);
}

void EmbedWorker::MeasureFloor() {
  {
    absl::MutexLock lock(&mu_);
    if (similarity_floor_) return;
  }
  absl::StatusOr<float> floor = MeasureSimilarityFloor(*embedder_);
  if (!floor.ok()) {
    SetError(floor.status());
    return;
  }
  absl::MutexLock lock(&mu_);
  similarity_floor_ = *floor;
}

void EmbedWorker::Claim(std::span<const int64_t> memory_ids) {
  const auto now = std::chrono::steady_clock::now();
  absl::MutexLock lock(&mu_);
  for (const int64_t id : memory_ids) {
    if (claimed_.size() < kMaxClaims || claimed_.contains(id)) claimed_[id] = now;
  }
}

void EmbedWorker::ClaimThrough(int64_t version_id) {
  absl::MutexLock lock(&mu_);
  claimed_through_ = std::max(claimed_through_, version_id);
  scan_now_ = true;
}

absl::StatusOr<int64_t> EmbedWorker::EmbedBacklogBatch(store::Db& db, int64_t& cursor) {
  // A waiting Backfill goes first (it answers a caller; this thread would otherwise take
  // the lock again at once, batch after batch), and wakes the worker when it is done.
  if (backfills_waiting_ > 0) return 0;
  if (!embed_mu_.TryLock()) return 0;
  absl::StatusOr<int64_t> embedded = EmbedClaimed(db, cursor);
  if (embedded.ok()) {
    // The scan's turn comes every kScanInterval even while this process's own versions keep
    // coming: it is what embeds another's orphans after the grace, and what moves the
    // cursor. Taken only when the claimed were done, it never came during a node's steady
    // load, and the first scan after it passed over every version of the load (70 ms at
    // 100K memories on PostgreSQL, a parallel anti join on both cores).
    const auto now = std::chrono::steady_clock::now();
    bool scan;
    {
      absl::MutexLock lock(&mu_);
      scan = scan_now_ || now - last_scan_ >= kScanInterval;
      if (scan) scan_now_ = false;
    }
    if (scan) {
      last_scan_ = now;
      const absl::StatusOr<int64_t> unclaimed = EmbedUnclaimed(db, cursor);
      // A full batch: a backlog, to go on with at once.
      if (unclaimed.ok() && *unclaimed == embedder_->batch_size()) {
        absl::MutexLock lock(&mu_);
        scan_now_ = true;
      }
      embedded = unclaimed.ok() ? *embedded + *unclaimed : unclaimed;
    }
  }
  embed_mu_.Unlock();
  return embedded;
}

absl::StatusOr<int64_t> EmbedWorker::EmbedClaimed(store::Db& db, int64_t cursor) {
  const auto now = std::chrono::steady_clock::now();
  BacklogScope scope{.memory_ids = std::vector<int64_t>()};
  {
    absl::MutexLock lock(&mu_);
    if (claimed_.empty()) return 0;
    for (const auto& [id, at] : claimed_) scope.memory_ids->push_back(id);
  }
  // Versions at or below the cursor have their vectors (EmbedUnclaimed).
  ASSIGN_OR_RETURN(std::vector<PendingVersion> pending,
                   PendingVersions(db, space_->id, scope, cursor, embedder_->batch_size()));
  const bool all = static_cast<int64_t>(pending.size()) < embedder_->batch_size();
  ASSIGN_OR_RETURN(const int64_t embedded, Embed(db, std::move(pending)));
  if (all) {
    // Their versions are embedded; a claim made since stays for the next turn.
    absl::MutexLock lock(&mu_);
    absl::erase_if(claimed_, [&](const auto& claim) { return claim.second <= now; });
  }
  return embedded;
}

absl::StatusOr<int64_t> EmbedWorker::EmbedUnclaimed(store::Db& db, int64_t& cursor) {
  // The newest version before looking: when none after the cursor is pending, the cursor
  // moves up to it, so that the next look starts there instead of passing again over every
  // version another node (or an earlier look) embedded. Version ids are given in commit
  // order, so none appears below it later.
  ASSIGN_OR_RETURN(const int64_t newest, temporal::VersionTable(&db).NewestVersionId());
  // Every version up to `newest` is committed now: its grace starts at this sighting unless
  // an earlier one reached it.
  const auto now = std::chrono::steady_clock::now();
  sightings_.Saw(newest, now);
  // A window of several batches, so that versions waiting for their writer do not hide the
  // ones ready behind them.
  ASSIGN_OR_RETURN(std::vector<PendingVersion> pending,
                   PendingVersions(db, space_->id, BacklogScope{}, cursor,
                                   kWindowBatches * embedder_->batch_size()));
  if (pending.empty()) {
    cursor = std::max(cursor, newest);
    sightings_.Clear();
    return 0;
  }
  int64_t next = cursor;
  std::vector<PendingVersion> ready = Ready(std::move(pending), next);
  ASSIGN_OR_RETURN(const int64_t embedded, Embed(db, std::move(ready)));
  cursor = next;
  return embedded;
}

std::vector<PendingVersion> EmbedWorker::Ready(std::vector<PendingVersion> pending,
                                               int64_t& cursor) {
  const auto now = std::chrono::steady_clock::now();
  const size_t batch = static_cast<size_t>(embedder_->batch_size());
  std::vector<PendingVersion> ready;
  std::optional<int64_t> first_waiting;
  {
    absl::MutexLock lock(&mu_);
    for (PendingVersion& p : pending) {
      if (ready.size() == batch) break;
      if (p.version_id <= claimed_through_ || claimed_.contains(p.memory_id) ||
          sightings_.GraceOver(p.version_id, now)) {
        ready.push_back(std::move(p));
      } else if (!first_waiting) {
        first_waiting = p.version_id;
      }
    }
  }
  if (!ready.empty()) {
    cursor = ready.back().version_id;
    if (first_waiting) cursor = std::min(cursor, *first_waiting - 1);
  }
  return ready;
}

absl::StatusOr<int64_t> EmbedWorker::EmbedBatch(store::Db& db, const BacklogScope& scope,
                                                int64_t& cursor, int64_t max_items,
                                                int64_t* attempted) {
  const int limit = static_cast<int>(std::min<int64_t>(embedder_->batch_size(), max_items));
  ASSIGN_OR_RETURN(std::vector<PendingVersion> pending,
                   PendingVersions(db, space_->id, scope, cursor, limit));
  if (pending.empty()) return 0;
  if (attempted != nullptr) *attempted += static_cast<int64_t>(pending.size());
  const int64_t last = pending.back().version_id;
  ASSIGN_OR_RETURN(const int64_t embedded, Embed(db, std::move(pending)));
  cursor = last;
  return embedded;
}

absl::StatusOr<int64_t> EmbedWorker::Embed(store::Db& db, std::vector<PendingVersion> versions) {
  if (versions.empty()) return 0;
  std::vector<std::string> texts;
  std::vector<int64_t> ids;
  texts.reserve(versions.size());
  ids.reserve(versions.size());
  for (PendingVersion& p : versions) {
    texts.push_back(std::move(p.text));
    ids.push_back(p.version_id);
  }
  ASSIGN_OR_RETURN(const std::vector<float> vectors,
                   embed::EmbedAll(*embedder_, texts, embed::Role::kDocument));
  // Indexed here first, so that the rows carry their links and every other process indexing
  // them skips the search (docs/decisions.md, "Links shared between nodes"); this process's
  // catch-up finds them held. A vector indexed whose row is not stored (an error, a purge) is
  // one of a version embedded again later, or purged: a search drops versions not found.
  std::vector<std::vector<int64_t>> links;
  if (const std::shared_ptr<HnswIndex> index = index_->Get()) {
    const bool backlog = static_cast<int64_t>(ids.size()) >= embedder_->batch_size();
    index->AddParallel(ids, vectors, backlog ? PublishedIndex::kBuildThreads : 1);
    links.reserve(ids.size());
    for (const int64_t id : ids) links.push_back(index->Links(id));
  }
  RETURN_IF_ERROR(StoreVectors(db, space_->id, space_->dimension, ids, vectors, links));
  absl::MutexLock lock(&mu_);
  embedded_ += static_cast<int64_t>(ids.size());
  last_error_.clear();
  return static_cast<int64_t>(ids.size());
}

absl::StatusOr<BackfillResult> EmbedWorker::Backfill(store::Db& db, const BacklogScope& scope,
                                                     int64_t limit, const WorkControl& control) {
  ++backfills_waiting_;
  absl::MutexLock embedding(&embed_mu_);  // Waits out the worker's batch in progress.
  --backfills_waiting_;
  BackfillResult result;
  ASSIGN_OR_RETURN(const int64_t pending, CountPending(db, space_->id, scope));
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
      // What was stored is indexed all the same.
      RETURN_IF_ERROR(index_->CatchUp(db, PublishedIndex::kBuildThreads).status());
      return absl::CancelledError(
          absl::StrCat("embed: cancelled after ", result.embedded, " of ", total));
    }
  }
  result.failed = result.attempted - result.embedded;
  RETURN_IF_ERROR(index_->CatchUp(db, PublishedIndex::kBuildThreads).status());
  ASSIGN_OR_RETURN(result.remaining, CountPending(db, space_->id, scope));
  return result;
}

}  // namespace strata::vector
