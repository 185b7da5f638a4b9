#pragma once
// When a background scan first saw a store reach each id: what tells another writer's rows
// apart from rows their writer is still working on. A scan records the store's newest id
// before it looks (Saw); a row with an id at or below it was committed by then, and it has
// waited `grace` once the first such sighting is that old (GraceOver). So a backlog of any
// length waits out one grace, not one each time a scan's window moves on to it.
// Thread safety: none; one scanner uses it.

#include <chrono>
#include <cstdint>
#include <deque>
#include <utility>

namespace strata::util {

class Sightings {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Sightings(Clock::duration grace) : grace_(grace) {}

  // The store's newest id was `newest` at `now`. Forgets the sightings older than the grace
  // but the last (its id covers theirs).
  void Saw(int64_t newest, Clock::time_point now);
  // Whether `id` has been committed for the grace by `now`, as far as the sightings tell.
  bool GraceOver(int64_t id, Clock::time_point now) const;
  // Nothing is waiting any more (the scan found no backlog).
  void Clear() { seen_.clear(); }

 private:
  Clock::duration grace_;
  // (newest id, when), both rising.
  std::deque<std::pair<int64_t, Clock::time_point>> seen_;
};

}  // namespace strata::util
