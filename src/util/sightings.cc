#include "util/sightings.h"

#include <algorithm>

namespace strata::util {

void Sightings::Saw(int64_t newest, Clock::time_point now) {
  if (seen_.empty() || newest > seen_.back().first) seen_.emplace_back(newest, now);
  while (seen_.size() > 1 && now - seen_[1].second >= grace_) seen_.pop_front();
}

bool Sightings::GraceOver(int64_t id, Clock::time_point now) const {
  const auto first =
      std::lower_bound(seen_.begin(), seen_.end(), id,
                       [](const auto& sighting, int64_t i) { return sighting.first < i; });
  return first != seen_.end() && now - first->second >= grace_;
}

}  // namespace strata::util
