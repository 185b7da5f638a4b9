#include "vector/embed_worker.h"

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "temporal/version_table.h"
#include "util/status_macros.h"
#include "vector/similarity_floor.h"

namespace strata::vector {

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

absl::StatusOr<int64_t> EmbedWorker::EmbedBacklogBatch(store::Db& db, int64_t& cursor) {
  // A waiting Backfill goes first (it answers a caller; this thread would otherwise take
  // the lock again at once, batch after batch), and wakes the worker when it is done.
  if (backfills_waiting_ > 0) return 0;
  if (!embed_mu_.TryLock()) return 0;
  // The newest version before looking: when none after the cursor is pending, the cursor
  // moves up to it, so that the next look starts there instead of passing again over every
  // version another node (or an earlier look) embedded. Version ids are given in commit
  // order, so none appears below it later.
  const absl::StatusOr<int64_t> newest = temporal::VersionTable(&db).NewestVersionId();
  absl::StatusOr<int64_t> embedded =
      newest.ok() ? EmbedBatch(db, BacklogScope{}, cursor, embedder_->batch_size(), nullptr)
                  : newest;
  if (newest.ok() && embedded.ok() && *embedded == 0) cursor = std::max(cursor, *newest);
  embed_mu_.Unlock();
  return embedded;
}

absl::StatusOr<int64_t> EmbedWorker::EmbedBatch(store::Db& db, const BacklogScope& scope,
                                                int64_t& cursor, int64_t max_items,
                                                int64_t* attempted) {
  const int limit = static_cast<int>(std::min<int64_t>(embedder_->batch_size(), max_items));
  ASSIGN_OR_RETURN(std::vector<PendingVersion> pending,
                   PendingVersions(db, space_->id, scope, cursor, limit));
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
  ASSIGN_OR_RETURN(const std::vector<float> vectors,
                   embed::EmbedAll(*embedder_, texts, embed::Role::kDocument));
  RETURN_IF_ERROR(StoreVectors(db, space_->id, space_->dimension, ids, vectors));
  cursor = ids.back();
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
