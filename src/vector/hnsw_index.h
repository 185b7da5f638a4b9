#pragma once
// An approximate nearest-neighbour index over unit vectors (hnswlib's HNSW graph, cosine over
// vectors of one signed byte per dimension: vector/int8_element.h), labelled by version id, with
// a file format that detects truncation and garbage.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "util/room_lock.h"
#include "vector/chance_level.h"

namespace hnswlib {
template <typename T>
class HierarchicalNSW;
}  // namespace hnswlib

namespace strata::vector {

class Int8CosineSpace;

// What a saved index holds, kept in a small sidecar file "<index>.meta".
struct IndexMeta {
  std::string fingerprint;  // The embedder space's; an index of another space is not loaded.
  int64_t watermark = 0;    // Every embeddings row with id <= watermark is in the index.
};

struct Neighbor {
  int64_t label;
  float similarity;  // Cosine similarity, higher is closer.
};

// Thread safety: every method from any thread. hnswlib allows concurrent searches and
// concurrent inserts but not the two mixed: each insert holds the index's lock in the inserts'
// room and each search in the searches' (util/room_lock.h), so a search waits for the inserts
// in flight, never for a whole batch.
class HnswIndex {
 public:
  explicit HnswIndex(int dimension);
  ~HnswIndex();
  HnswIndex(const HnswIndex&) = delete;
  HnswIndex& operator=(const HnswIndex&) = delete;

  // Loads the index saved at `path` if its meta names `fingerprint`. Errors: NotFound (no
  // file), FailedPrecondition (another space, or a file that is truncated or corrupt: its
  // checksum does not match).
  static absl::StatusOr<std::pair<std::unique_ptr<HnswIndex>, IndexMeta>> Load(
      const std::string& path, const std::string& fingerprint, int dimension);
  // Writes the index and its meta atomically (temporary files, fsync, rename).
  absl::Status Save(const std::string& path, const IndexMeta& meta) const;

  // Adds the vector of `label`; `v` has the index's dimension. A label the index holds
  // already is left as it is: a label is a version, whose text and so whose vector in one
  // space never change (the same version comes again when two processes embed it at once).
  // hnswlib's in-place update of a held label is never used (it copies from a null pointer
  // when a neighbour list is empty). A removed label is added again (only a database from
  // before schema 5, which reused the id of a purged version, does that).
  void Add(int64_t label, std::span<const float> v);
  // Stops returning `label` (a version that was purged). Unknown labels are ignored.
  void Remove(int64_t label);
  // Adds many, as Add does, on `threads` threads; searches run between the inserts. With
  // `links` (empty, or one list per label), a label whose list is not empty is linked in the
  // lowest layer to the labels of its list (but those removed), as another index of the same
  // vectors linked it (Links), instead of searching the graph for its neighbours: most of an
  // insertion's cost. A label drawn for a higher layer (1 in kM), or whose list names one this
  // index does not hold or is still inserting, is inserted by searching (docs/decisions.md,
  // "Links shared between nodes").
  void AddParallel(std::span<const int64_t> labels, std::span<const float> vectors, int threads,
                   std::span<const std::vector<int64_t>> links = {}) ABSL_LOCKS_EXCLUDED(add_mu_);
  // The labels `label` links to in the graph's lowest layer, in the graph's order (whoever
  // links to them weighs them by distance again): the neighbours an insertion chose for it,
  // and those that chose it since. Empty when the index does not hold it.
  std::vector<int64_t> Links(int64_t label) const;

  // The `k` nearest, closest first (ties by label), each with its cosine similarity to
  // `query` (a unit vector), computed as an exact scan of the stored vectors would.
  std::vector<Neighbor> Search(std::span<const float> query, size_t k) const;

  // The query's chance level (vector/chance_level.h) among the vectors the index holds: its
  // similarities to kChanceSample of them, those whose labels hash lowest, so that the sample
  // depends on which versions the index holds and not on the order they came in (a restart, a
  // reload or a rebuild of the same store samples the same vectors).
  ChanceLevel Chance(std::span<const float> query) const;

  // Vectors held, removed ones included.
  size_t size() const;
  int dimension() const { return dimension_; }

  // The chance level's sample size: 128 byte dot products over a 50 KB copy (~4 µs at 384
  // dimensions, ~1% of an index search at 10K vectors).
  static constexpr size_t kChanceSample = 128;

  // Graph degree, build-time and search-time candidate list lengths (hnswlib's M,
  // ef_construction, ef). Measured on 20K vectors of the scale corpus (near-random text, the
  // hard case for a graph index), self-queries, recall@10 against an exact scan: M 16 /
  // ef_construction 100 reached 0.71 at ef 96 and 0.93 at ef 500; M 24 / 120 reaches 0.95 at
  // ef 300 for 1.3x the build time; M 32 / 200 took 4x the build time. See docs/embeddings.md.
  static constexpr size_t kM = 24;
  static constexpr size_t kEfConstruction = 120;
  static constexpr size_t kEf = 300;

 private:
  static constexpr RoomLock::Room kSearches = RoomLock::kFirst;
  static constexpr RoomLock::Room kInserts = RoomLock::kSecond;

  // Needs lock_ alone.
  void ReserveLocked(size_t n);
  // Inserts `element` (of `label`, not held) linked to `links` but those removed, without
  // searching, when its drawn level is the lowest and the index holds every one of them,
  // `complete` (by internal id) once inserted; returns its internal id. Returns nothing (and
  // does nothing) otherwise. Needs lock_ in kInserts, and room for one more element.
  std::optional<uint32_t> LinkLocked(const std::byte* element, int64_t label,
                                     std::span<const int64_t> links,
                                     const std::function<bool(uint32_t)>& complete);
  // Whether `label` is in the index and not removed. Needs lock_ alone or in kSearches.
  bool HoldsLocked(int64_t label) const;
  // Adds `labels` (just inserted) to the chance sample where they hash lower than its
  // members. Needs lock_ alone.
  void SampleLocked(std::span<const int64_t> labels);
  // Draws the chance sample again from every label held and not removed. Needs lock_ alone.
  void ResampleLocked();
  // Copies the sampled labels' elements into sample_elements_. Needs lock_ alone.
  void CopySampleLocked();

  const int dimension_;
  // The element of `v`, in the space's format.
  std::vector<std::byte> Element(std::span<const float> v) const;

  std::unique_ptr<Int8CosineSpace> space_;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph_;
  mutable RoomLock lock_;
  // The chance sample: (hash, label) of the kChanceSample held labels that hash lowest,
  // ascending, and their elements one after the other (50 KB at 384 dimensions: a Chance call
  // reads them from the cache, not from 128 places in the graph). Read in kSearches, changed
  // alone (lock_).
  std::vector<std::pair<uint64_t, int64_t>> sample_;
  std::vector<std::byte> sample_elements_;
  absl::Mutex add_mu_;  // One AddParallel at a time: its inserts are of labels it checked.
};

}  // namespace strata::vector
