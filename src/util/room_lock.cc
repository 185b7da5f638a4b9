#include "util/room_lock.h"

namespace strata {

bool RoomLock::OthersWaiting(Room room) const {
  for (int r = kFirst; r <= kAlone; ++r) {
    if (r != room && waiting_[r] > 0) return true;
  }
  return false;
}

void RoomLock::Enter(Room room) {
  std::unique_lock lock(mu_);
  ++waiting_[room];
  left_empty_.wait(lock, [&] {
    return occupants_ == 0 || (room == room_ && room != kAlone && !OthersWaiting(room));
  });
  --waiting_[room];
  room_ = room;
  ++occupants_;
}

void RoomLock::Leave() {
  std::lock_guard lock(mu_);
  if (--occupants_ == 0) left_empty_.notify_all();
}

}  // namespace strata
