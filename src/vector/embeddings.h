#pragma once
// The stored vectors: embedder spaces, the backlog of versions without a vector, and reading
// vectors back in the order they were written.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/embedder.h"
#include "store/db.h"

namespace strata::vector {

struct Space {
  int64_t id = 0;
  std::string fingerprint;
  int dimension = 0;
};

// The space of `info`, created on first use.
absl::StatusOr<Space> RegisterSpace(store::Db& db, const embed::EmbedderInfo& info,
                                    int64_t now_unix_ms);

// What gets embedded for a version: its key's words, then its body's text (string values).
std::string EmbeddingText(std::string_view key, std::string_view body_json);

struct PendingVersion {
  int64_t version_id = 0;
  int64_t memory_id = 0;
  std::string text;  // EmbeddingText.
};

// Which part of the backlog: everything, a category, one memory or some.
struct BacklogScope {
  std::optional<std::string> category;
  std::optional<int64_t> memory_id;
  std::optional<std::vector<int64_t>> memory_ids;  // Any of them.
};

// Versions with id > after_id and no vector in `space`, oldest first, at most `limit`.
absl::StatusOr<std::vector<PendingVersion>> PendingVersions(store::Db& db, int64_t space,
                                                            const BacklogScope& scope,
                                                            int64_t after_id, int limit);
// How many versions in scope have no vector in `space`.
absl::StatusOr<int64_t> CountPending(store::Db& db, int64_t space, const BacklogScope& scope);
struct VectorCounts {
  int64_t vectors = 0;  // Of `space`.
  int64_t pending = 0;  // Versions without one.
};
// Both from one snapshot, so they add up to the versions.
absl::StatusOr<VectorCounts> CountVectorsAndPending(store::Db& db, int64_t space);
// The highest embeddings row id of any space (0 when none): an upper bound on any space's
// vector count, read in O(log n).
absl::StatusOr<int64_t> LastVectorRow(store::Db& db);
// The highest embeddings row id ever given (AUTOINCREMENT's sequence; purges do not lower it).
// An index saved with a watermark above it was saved from another state of the database.
absl::StatusOr<int64_t> VectorRowSequence(store::Db& db);

// Stores one vector per version (`vectors` holds version_ids.size() * dimension floats) in
// one transaction, each with its links in the index (HnswIndex::Links; `links` empty or one
// list per version, an empty list stored as none). A version purged meanwhile is skipped.
absl::Status StoreVectors(store::Db& db, int64_t space, int dimension,
                          std::span<const int64_t> version_ids, std::span<const float> vectors,
                          std::span<const std::vector<int64_t>> links = {});

// Reads the vector rows with row id > after_row, in row order, at most `limit`, and calls
// fn(row_id, version_id, vector, links) for those of `space` (links empty when none were
// stored). Moves after_row to the last row read; returns how many rows were read.
using VectorRowFn = std::function<void(int64_t row_id, int64_t version_id,
                                       std::span<const float> vector,
                                       std::span<const int64_t> links)>;
absl::StatusOr<int64_t> ReadVectorsAfter(store::Db& db, int64_t space, int dimension,
                                         int64_t& after_row, int64_t limit, const VectorRowFn& fn);

}  // namespace strata::vector
