#include "util/room_lock.h"

namespace strata {

bool RoomLock::OthersWaiting(Room room) const {
  for (int r = kFirst; r <= kAlone; ++r) {
    if (r != room && waiting_[r] > 0) return true;
  }
  return false;
}

bool RoomLock::MayEnter(Room room) const {
  if (occupants_ == 0) return !handed_over_ || room == room_;
  return room == room_ && room != kAlone && (handed_over_ || !OthersWaiting(room));
}

void RoomLock::Enter(Room room) {
  absl::MutexLock lock(&mu_);
  ++waiting_[room];
  while (!MayEnter(room)) left_empty_.Wait(&mu_);
  --waiting_[room];
  room_ = room;
  ++occupants_;
  // The room was handed to the threads that waited for it; the last of them is in.
  if (waiting_[room] == 0) handed_over_ = false;
}

void RoomLock::Leave() {
  absl::MutexLock lock(&mu_);
  if (--occupants_ > 0) return;
  // Hand the lock to threads waiting for another room, so that a thread leaving this one
  // cannot walk straight back in ahead of them.
  for (int step = 1; step <= 2; ++step) {
    const Room next = static_cast<Room>((room_ + step) % 3);
    if (waiting_[next] > 0) {
      room_ = next;
      handed_over_ = true;
      break;
    }
  }
  left_empty_.SignalAll();
}

}  // namespace strata
