#pragma once
// A lock with two rooms: any number of threads may hold it together in one room, never in both
// rooms at once; or one thread may hold it alone. The vector index's searches share one room
// and its inserts the other (hnswlib allows either kind to run concurrently, not both mixed),
// so a search waits for the inserts in flight, not for a whole backlog. A room with threads
// waiting to enter elsewhere admits no newcomers, and when it empties the lock is handed to
// those threads, so no kind starves another.

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace strata {

// Thread safety: all members may be called from any thread.
class RoomLock {
 public:
  enum Room { kFirst = 0, kSecond = 1, kAlone = 2 };

  // Blocks until the calling thread holds the lock in `room`.
  void Enter(Room room) ABSL_LOCKS_EXCLUDED(mu_);
  // Gives up a hold taken by Enter.
  void Leave() ABSL_LOCKS_EXCLUDED(mu_);

  // Holds the lock in one room for a scope.
  class Hold {
   public:
    Hold(RoomLock& lock, Room room) : lock_(lock) { lock_.Enter(room); }
    ~Hold() { lock_.Leave(); }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    RoomLock& lock_;
  };

 private:
  bool OthersWaiting(Room room) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a thread waiting for `room` may enter it now.
  bool MayEnter(Room room) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  absl::CondVar left_empty_;  // Signalled when the lock empties.
  // Where the occupants are, or whom the lock was handed to.
  Room room_ ABSL_GUARDED_BY(mu_) = kFirst;
  // Only room_'s waiters may enter until the last of them has.
  bool handed_over_ ABSL_GUARDED_BY(mu_) = false;
  int occupants_ ABSL_GUARDED_BY(mu_) = 0;
  int waiting_[3] ABSL_GUARDED_BY(mu_) = {};  // Threads waiting to enter each room.
};

}  // namespace strata
