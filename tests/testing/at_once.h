#pragma once
// Runs two functions on two threads released at the same moment: what two processes
// starting together do, as closely as one process can make it.

#include <atomic>
#include <thread>

namespace strata::testing {

template <typename A, typename B>
void AtOnce(A a, B b) {
  std::atomic<int> ready{0};
  auto together = [&ready](auto& f) {
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    f();
  };
  std::thread first([&] { together(a); });
  together(b);
  first.join();
}

}  // namespace strata::testing
