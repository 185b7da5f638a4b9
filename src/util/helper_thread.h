#pragma once
// One thread kept for work a caller hands off and later waits for: each hand-off is a wakeup,
// not a thread started and ended (clone3, the stack's mmap, its madvise at the end: ~50 us on
// this project's VMs against ~23 for a hand-off).

#include <deque>
#include <future>
#include <thread>
#include <type_traits>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace strata::util {

// Thread safety: Run may be called from any thread; tasks run one at a time, in the order
// handed. The thread starts at the first Run.
class HelperThread {
 public:
  HelperThread() = default;
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;
  ~HelperThread();  // Runs what was handed, then ends the thread.

  // Runs `task` on the thread; its result (or exception) through the future, which, unlike
  // std::async's, does not wait for the task when destroyed.
  template <typename Fn>
  std::future<std::invoke_result_t<Fn&>> Run(Fn task) {
    std::packaged_task<std::invoke_result_t<Fn&>()> packaged(std::move(task));
    std::future<std::invoke_result_t<Fn&>> result = packaged.get_future();
    Post([packaged = std::move(packaged)]() mutable { packaged(); });
    return result;
  }

 private:
  void Post(absl::AnyInvocable<void()> task) ABSL_LOCKS_EXCLUDED(mu_);
  void Serve() ABSL_LOCKS_EXCLUDED(mu_);
  bool HasTaskOrEnding() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ending_ || !tasks_.empty();
  }

  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);  // Joined by the destructor alone.
};

}  // namespace strata::util
