#include "temporal/timeline.h"

#include <algorithm>
#include <limits>

#include "util/check.h"

namespace strata::temporal {
namespace {

bool RecordedInOrder(std::span<const VersionTimes> versions) {
  return std::is_sorted(versions.begin(), versions.end(),
                        [](const VersionTimes& a, const VersionTimes& b) {
                          return a.recorded_at_unix_ms < b.recorded_at_unix_ms;
                        });
}

}  // namespace

std::optional<size_t> BelievedAt(std::span<const VersionTimes> versions, int64_t tx) {
  STRATA_DCHECK(RecordedInOrder(versions));
  // Belief intervals of one identity do not overlap, so the newest version recorded at or
  // before tx is the only candidate.
  auto it =
      std::upper_bound(versions.begin(), versions.end(), tx,
                       [](int64_t t, const VersionTimes& v) { return t < v.recorded_at_unix_ms; });
  if (it == versions.begin()) return std::nullopt;
  --it;
  if (it->superseded_at_unix_ms && *it->superseded_at_unix_ms <= tx) return std::nullopt;
  return static_cast<size_t>(it - versions.begin());
}

std::optional<size_t> TrueAt(std::span<const VersionTimes> versions,
                             std::span<const int64_t> retractions, int64_t tx, int64_t valid) {
  STRATA_DCHECK(RecordedInOrder(versions));
  STRATA_DCHECK(std::is_sorted(retractions.begin(), retractions.end()));
  // A retraction at or before tx ends belief in everything recorded before it.
  std::optional<int64_t> last_retraction;
  for (int64_t r : retractions) {
    if (r <= tx) last_retraction = r;
  }
  int64_t min_start = std::numeric_limits<int64_t>::max();
  bool seen_any = false;
  for (size_t i = versions.size(); i-- > 0;) {
    const VersionTimes& v = versions[i];
    if (v.recorded_at_unix_ms > tx) continue;
    if (last_retraction && v.recorded_at_unix_ms <= *last_retraction) break;
    int64_t end = v.valid_to_unix_ms.value_or(std::numeric_limits<int64_t>::max());
    if (seen_any && min_start >= v.valid_from_unix_ms) end = std::min(end, min_start);
    if (v.valid_from_unix_ms <= valid && valid < end) return i;
    min_start = seen_any ? std::min(min_start, v.valid_from_unix_ms) : v.valid_from_unix_ms;
    seen_any = true;
  }
  return std::nullopt;
}

}  // namespace strata::temporal
