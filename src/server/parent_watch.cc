#include "server/parent_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iostream>

#include "absl/strings/str_cat.h"

namespace strata::server {
namespace {

// Without a pidfd, how often the thread checks whether it was handed to another parent.
constexpr int kPollMs = 1000;

}  // namespace

ParentWatch::Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<std::unique_ptr<ParentWatch>> ParentWatch::Start(pid_t parent) {
  const int stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  }
  // Fails when the parent is gone already (ESRCH; Run sees the new parent) or is outside this
  // PID namespace (parent 0: nothing to watch, getppid() never changes).
  const int pidfd = parent > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, parent, 0)) : -1;
  return std::unique_ptr<ParentWatch>(new ParentWatch(parent, pidfd, stop_fd));
}

ParentWatch::ParentWatch(pid_t parent, int pidfd, int stop_fd)
    : parent_(parent), pidfd_(pidfd), stop_(stop_fd), thread_([this] { Run(); }) {}

ParentWatch::~ParentWatch() {
  const uint64_t one = 1;
  while (::write(stop_.get(), &one, sizeof one) < 0 && errno == EINTR) {
  }
  thread_.join();
}

void ParentWatch::Run() {
  pollfd fds[2] = {{.fd = stop_.get(), .events = POLLIN, .revents = 0},
                   {.fd = pidfd_.get(), .events = POLLIN, .revents = 0}};  // -1: ignored.
  while (true) {
    // Checked first: a parent that died before the pidfd was opened has handed this process
    // to another one already, and a pid reused since then is not our parent.
    if (::getppid() != parent_) break;
    const int n = ::poll(fds, 2, pidfd_.get() >= 0 ? -1 : kPollMs);
    if (n < 0 && errno != EINTR) {
      std::cerr << "strata: stopped watching the parent process: poll: " << std::strerror(errno)
                << "\n";
      return;
    }
    if (n > 0 && fds[0].revents != 0) return;  // Destruction.
    if (n > 0 && fds[1].revents != 0) break;   // The parent exited.
  }
  std::cerr << "strata: the parent process " << parent_ << " has exited; stopping\n";
  ::kill(::getpid(), SIGTERM);
}

}  // namespace strata::server
