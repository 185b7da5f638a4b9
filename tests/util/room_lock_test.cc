// util/room_lock.h: holders of one room overlap, the two rooms never do, the lone room admits
// one thread, and a thread waiting for the other room gets in while its room is never empty.

#include "util/room_lock.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(RoomLock, HoldersOfOneRoomAreInsideTogether) {
  RoomLock lock;
  for (RoomLock::Room room : {RoomLock::kFirst, RoomLock::kSecond}) {
    RoomLock::Hold first(lock, room);
    // A second holder of the same room gets in while the first is inside.
    auto second = std::async(std::launch::async, [&] { RoomLock::Hold hold(lock, room); });
    EXPECT_EQ(second.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  }
}

TEST(RoomLock, RoomsExcludeEachOtherAndTheLoneRoomHoldsOne) {
  RoomLock lock;
  std::atomic<int> inside[3] = {0, 0, 0};
  std::atomic<int> violations{0};
  auto visit = [&](RoomLock::Room room, int times) {
    for (int i = 0; i < times; ++i) {
      RoomLock::Hold hold(lock, room);
      const int mine = ++inside[room];
      for (int other = 0; other < 3; ++other) {
        if (other != room && inside[other] > 0) ++violations;
      }
      if (room == RoomLock::kAlone && mine > 1) ++violations;
      std::this_thread::yield();
      --inside[room];
    }
  };
  std::vector<std::jthread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back(visit, RoomLock::kFirst, 3000);
    threads.emplace_back(visit, RoomLock::kSecond, 3000);
    threads.emplace_back(visit, RoomLock::kAlone, 1000);
  }
  threads.clear();  // Joins.
  EXPECT_EQ(violations.load(), 0);
}

TEST(RoomLock, AWaiterForTheOtherRoomIsNotStarved) {
  RoomLock lock;
  std::atomic<bool> entered{false};
  std::atomic<bool> stream_ended_first{false};
  std::atomic<int> visits{0};
  std::atomic<int> inside{0};
  std::atomic<int> keeper{0};
  // Two threads relay the first room, so that without fairness it would never be empty: the
  // keeper leaves only once the other is inside too (and hands it the keeping), or after
  // 10 ms. They stop when the waiter is in, or (only against a hang) after 20 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto going = [&] { return !entered && std::chrono::steady_clock::now() < deadline; };
  auto stream = [&](int me) {
    while (going()) {
      RoomLock::Hold hold(lock, RoomLock::kFirst);
      ++visits;
      ++inside;
      while (keeper != me && going()) std::this_thread::yield();
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
      while (inside < 2 && going() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
      }
      keeper = 1 - me;
      --inside;
    }
    if (!entered) stream_ended_first = true;
  };
  std::jthread a(stream, 0), b(stream, 1);
  while (visits < 100) std::this_thread::yield();  // The relay is running.
  {
    RoomLock::Hold hold(lock, RoomLock::kSecond);
    entered = true;
  }
  a.join();
  b.join();
  EXPECT_FALSE(stream_ended_first.load()) << "the second room waited for the stream to end";
}

}  // namespace
}  // namespace strata
