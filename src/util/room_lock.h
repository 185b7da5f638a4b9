#pragma once
// A lock with two rooms: any number of threads may hold it together in one room, never in both
// rooms at once; or one thread may hold it alone. The vector index's searches share one room
// and its inserts the other (hnswlib allows either kind to run concurrently, not both mixed),
// so a search waits for the inserts in flight, not for a whole backlog. A room with threads
// waiting to enter elsewhere admits no newcomers, and when it empties the lock is handed to
// those threads, so no kind starves another.

#include <condition_variable>
#include <mutex>

namespace strata {

class RoomLock {
 public:
  enum Room { kFirst = 0, kSecond = 1, kAlone = 2 };

  // Blocks until the calling thread holds the lock in `room`.
  void Enter(Room room);
  // Gives up a hold taken by Enter.
  void Leave();

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
  bool OthersWaiting(Room room) const;

  std::mutex mu_;
  std::condition_variable left_empty_;
  Room room_ = kFirst;        // Where the occupants are, or whom the lock was handed to.
  bool handed_over_ = false;  // Only room_'s waiters may enter until the last of them has.
  int occupants_ = 0;
  int waiting_[3] = {};  // Threads waiting to enter each room.
};

}  // namespace strata
