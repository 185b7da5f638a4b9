#include "vector/exact_scan.h"

#include <algorithm>

#include "util/status_macros.h"
#include "vector/codec.h"

namespace strata::vector {

absl::StatusOr<ScanResult> ExactScan(temporal::Visibility& visibility, int64_t space,
                                     std::span<const float> query, size_t want) {
  std::vector<ScoredVersion> scored;
  std::vector<float> v(query.size());
  RETURN_IF_ERROR(visibility.Join(
      "JOIN embeddings e ON e.version_id = v.id AND e.space_id = :space", "e.vec",
      [space](store::Stmt& s) { s.Bind(s.ParameterIndex(":space"), space); },
      [&](store::Stmt& row, const temporal::VisibleVersion& version) {
        scored.push_back({.version_id = version.version_id,
                          .memory_id = version.memory_id,
                          .similarity = Decode(row.Blob(2), v) ? Dot(v, query) : -2.0});
        return true;
      }));
  std::vector<float> similarities;
  similarities.reserve(scored.size());
  for (const ScoredVersion& v : scored) {
    if (v.similarity > -2.0) similarities.push_back(static_cast<float>(v.similarity));
  }
  ScanResult result{.chance = ChanceLevelOf(similarities, similarities.size())};
  const size_t keep = std::min(want, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + keep, scored.end(),
                    [](const ScoredVersion& a, const ScoredVersion& b) {
                      if (a.similarity != b.similarity) return a.similarity > b.similarity;
                      return a.version_id < b.version_id;
                    });
  scored.resize(keep);
  result.best = std::move(scored);
  return result;
}

}  // namespace strata::vector
