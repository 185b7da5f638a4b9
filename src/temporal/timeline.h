#pragma once
// The time-axis rules of docs/design.md §3 as pure functions over one identity's history.

#include <cstdint>
#include <optional>
#include <span>

namespace strata::temporal {

// The time fields of one version. Open bounds are nullopt.
struct VersionTimes {
  int64_t valid_from_unix_ms = 0;
  std::optional<int64_t> valid_to_unix_ms;
  int64_t recorded_at_unix_ms = 0;
  std::optional<int64_t> superseded_at_unix_ms;
};

// Index of the version believed at `tx` (recorded_at <= tx < superseded_at), if any.
// REQUIRES: `versions` ordered by recorded_at ascending.
std::optional<size_t> BelievedAt(std::span<const VersionTimes> versions, int64_t tx);

// Index of the version that, as believed at `tx`, was true at `valid`. Only versions recorded
// at or before `tx` and after the last retraction at or before `tx` take part. Walking them
// newest recorded first, with m the smallest valid_from seen so far, a version holds
// [valid_from, min(valid_to, m)) when m >= valid_from, else [valid_from, valid_to).
// REQUIRES: `versions` ordered by recorded_at ascending, `retractions` ascending.
std::optional<size_t> TrueAt(std::span<const VersionTimes> versions,
                             std::span<const int64_t> retractions, int64_t tx, int64_t valid);

}  // namespace strata::temporal
