#include "vector/published_index.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "util/log.h"
#include "util/status_macros.h"
#include "vector/codec.h"

namespace strata::vector {
namespace {

// Rows read per step when rebuilding the index or catching it up.
constexpr int64_t kReadChunk = 20000;
// On shutdown the index is saved only when at least this many vectors (and 1% of it) are
// not in the file yet.
constexpr int64_t kMinUnsavedToSave = 1000;

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

PublishedIndex::PublishedIndex(std::string file_path, Space space)
    : file_path_(std::move(file_path)), space_(std::move(space)) {}

std::shared_ptr<HnswIndex> PublishedIndex::Get() const {
  absl::MutexLock lock(&mu_);
  return index_;
}

IndexState PublishedIndex::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

void PublishedIndex::Forget(std::span<const int64_t> version_ids) {
  if (std::shared_ptr<HnswIndex> idx = Get()) {
    for (int64_t id : version_ids) idx->Remove(id);
  }
}

void PublishedIndex::Save(const HnswIndex& idx, int64_t watermark) const {
  // Not saving costs only time at the next start (a rebuild or a longer catch-up).
  if (file_path_.empty()) return;
  if (absl::Status s = idx.Save(file_path_, {space_.fingerprint, watermark}); !s.ok()) {
    Log(LogLevel::kWarning, absl::StrCat("could not save the vector index: ", s.message()));
  }
}

void PublishedIndex::SaveIfWorthIt() const {
  std::shared_ptr<HnswIndex> idx;
  int64_t watermark;
  {
    absl::MutexLock lock(&mu_);
    if (index_ == nullptr) return;
    const int64_t worth_saving =
        std::max<int64_t>(kMinUnsavedToSave, static_cast<int64_t>(index_->size()) / 100);
    if (added_since_save_ < worth_saving) return;
    idx = index_;
    watermark = watermark_;
  }
  Save(*idx, watermark);
}

absl::Status PublishedIndex::LoadOrRebuild(store::Db& db, std::stop_token stop) {
  std::shared_ptr<HnswIndex> idx;
  int64_t watermark = 0;
  absl::StatusOr<std::pair<std::unique_ptr<HnswIndex>, IndexMeta>> loaded =
      absl::NotFoundError("the index is not saved: rebuilt at every start");
  if (!file_path_.empty()) {
    loaded = HnswIndex::Load(file_path_, space_.fingerprint, space_.dimension);
  }
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
      Log(LogLevel::kInfo,
          absl::StrCat("rebuilding the vector index: ", loaded.status().message()));
    }
    {
      absl::MutexLock lock(&mu_);
      state_ = IndexState::kBuilding;
    }
    idx = std::make_shared<HnswIndex>(space_.dimension);
    RETURN_IF_ERROR(AddVectorsAfter(db, *idx, watermark, &stop, kBuildThreads).status());
  }
  if (stop.stop_requested()) return absl::OkStatus();
  {
    // The last vectors and the publication under the catch-up lock: a Backfill that stored
    // vectors meanwhile found no index to add them to, and must find them here.
    absl::MutexLock catch_up(&catch_up_mu_);
    ASSIGN_OR_RETURN(const int64_t added,
                     AddVectorsAfter(db, *idx, watermark, &stop, kBuildThreads));
    absl::MutexLock lock(&mu_);
    index_ = idx;
    watermark_ = watermark;
    added_since_save_ = rebuilt ? 0 : added;
    state_ = IndexState::kReady;
  }
  if (rebuilt) Save(*idx, watermark);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> PublishedIndex::AddVectorsAfter(store::Db& db, HnswIndex& idx,
                                                        int64_t& watermark,
                                                        const std::stop_token* stop,
                                                        int threads) const {
  int64_t total = 0;
  std::vector<int64_t> labels;
  std::vector<float> vectors;
  std::vector<std::vector<int64_t>> links;
  while (stop == nullptr || !stop->stop_requested()) {
    labels.clear();
    vectors.clear();
    links.clear();
    ASSIGN_OR_RETURN(const int64_t rows,
                     ReadVectorsAfter(db, space_.id, space_.dimension, watermark, kReadChunk,
                                      [&](int64_t, int64_t version_id, std::span<const float> v,
                                          std::span<const int64_t> l) {
                                        labels.push_back(version_id);
                                        vectors.insert(vectors.end(), v.begin(), v.end());
                                        links.emplace_back(l.begin(), l.end());
                                      }));
    // Insertion is most of the cost of embedding a version, and its search most of an
    // insertion's, which the links the embedding process stored spare (HnswIndex::AddParallel);
    // searches wait for at most the inserts in flight (HnswIndex's lock).
    idx.AddParallel(labels, vectors, threads, links);
    total += static_cast<int64_t>(labels.size());
    if (rows < kReadChunk) break;
  }
  return total;
}

absl::StatusOr<int64_t> PublishedIndex::CatchUp(store::Db& db, int threads) {
  absl::MutexLock catch_up(&catch_up_mu_);
  std::shared_ptr<HnswIndex> idx;
  int64_t watermark;
  {
    absl::MutexLock lock(&mu_);
    idx = index_;
    watermark = watermark_;
  }
  if (idx == nullptr) return 0;  // LoadOrRebuild adds everything before it publishes.
  ASSIGN_OR_RETURN(const int64_t added, AddVectorsAfter(db, *idx, watermark, nullptr, threads));
  absl::MutexLock lock(&mu_);
  watermark_ = watermark;
  added_since_save_ += added;
  return added;
}

absl::StatusOr<IndexCheck> PublishedIndex::MeasureRecall(store::Db& db, int queries, int k) {
  std::shared_ptr<HnswIndex> idx = Get();
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
    ASSIGN_OR_RETURN(const int64_t rows,
                     ReadVectorsAfter(db, space_.id, dim, after, kReadChunk,
                                      [&](int64_t, int64_t version_id, std::span<const float> v,
                                          std::span<const int64_t>) {
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

}  // namespace strata::vector
