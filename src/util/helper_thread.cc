#include "util/helper_thread.h"

namespace strata::util {

HelperThread::~HelperThread() {
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    ending_ = true;
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

void HelperThread::Post(absl::AnyInvocable<void()> task) {
  absl::MutexLock lock(&mu_);
  tasks_.push_back(std::move(task));
  if (!thread_.joinable()) thread_ = std::thread([this] { Serve(); });
}

void HelperThread::Serve() {
  while (true) {
    absl::AnyInvocable<void()> task;
    {
      absl::MutexLock lock(&mu_, absl::Condition(this, &HelperThread::HasTaskOrEnding));
      if (tasks_.empty()) return;  // Ending, and nothing left to run.
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace strata::util
