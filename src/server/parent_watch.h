#pragma once
// Ends the server when the process that started it (the agent host) dies.

#include <sys/types.h>

#include <memory>
#include <thread>

#include "absl/status/statusor.h"

namespace strata::server {

// Watches the parent process on a thread of its own and, once the parent has died, sends this
// process SIGTERM, which ends ServeStdio the way any SIGTERM does (finish the request in
// hand, flush, exit 0). A host that dies normally closes stdin too; this covers a host whose
// end of the pipe outlives it (inherited by another of its children, for example).
//
// The watch is on the parent *process*, through a pidfd, and not PR_SET_PDEATHSIG: that
// signal comes when the thread that spawned strata exits, and hosts that spawn from a worker
// thread retire it while they live on. Without pidfd_open (Linux before 5.3, or a seccomp
// filter) the thread polls getppid() instead.
//
// Thread safety: Start and the destructor are called from one thread; the destructor stops
// and joins the watching thread.
class ParentWatch {
 public:
  // Watches `parent`, the value of getppid() read as early as possible (at the start of main):
  // when the parent has already died by now (this process was handed to another parent), the
  // SIGTERM is sent at once. REQUIRES: a SIGTERM handler is installed (InstallSignalHandlers).
  // Errors: Internal when the thread's wake-up descriptor cannot be made.
  static absl::StatusOr<std::unique_ptr<ParentWatch>> Start(pid_t parent);
  ~ParentWatch();

  ParentWatch(const ParentWatch&) = delete;
  ParentWatch& operator=(const ParentWatch&) = delete;

 private:
  // A file descriptor, closed on destruction; -1 when there is none.
  class Fd {
   public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd();
    int get() const { return fd_; }

   private:
    int fd_;
  };

  ParentWatch(pid_t parent, int pidfd, int stop_fd);
  void Run();

  const pid_t parent_;
  const Fd pidfd_;       // Readable once the parent has exited; -1 without pidfd_open.
  const Fd stop_;        // An eventfd; the destructor writes to it to end Run.
  std::jthread thread_;  // Last: starts after the members it uses exist.
};

}  // namespace strata::server
