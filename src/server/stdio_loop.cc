#include "server/stdio_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace strata::server {
namespace {

volatile std::sig_atomic_t g_stop = 0;

// A byte in this pipe wakes the reader thread's poll: written by a stop signal (whichever
// thread the kernel delivers it to) or by the serving thread when it ends. Made once, never
// closed, so a signal handler never writes to a closed descriptor.
struct WakePipe {
  int read_fd = -1;
  int write_fd = -1;
};

const WakePipe& Wake() {
  static const WakePipe pipe = [] {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return WakePipe{};
    return WakePipe{.read_fd = fds[0], .write_fd = fds[1]};
  }();
  return pipe;
}

std::atomic<int> g_wake_write_fd{-1};  // Wake().write_fd, readable from a signal handler.

void WakeReader() {
  const int fd = g_wake_write_fd.load();
  const char byte = 1;
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);  // A full pipe: already awake.
}

void DrainWake() {
  char bytes[64];
  while (::read(Wake().read_fd, bytes, sizeof bytes) > 0) {
  }
}

void OnStopSignal(int) {
  g_stop = 1;
  WakeReader();
}

// Writes all of `data`; false when the peer is gone.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Lines read and not yet answered, from the reader thread to the serving thread. Bounded in
// bytes: the reader waits while the serving thread is behind, so memory stays bounded.
class LineQueue {
 public:
  struct Item {
    std::string line;
    bool too_long = false;  // A line over the limit, already discarded: answer with an error.
  };

  explicit LineQueue(size_t max_bytes) : max_bytes_(max_bytes) {}

  // False when the queue was closed by the serving thread (it stopped).
  bool Push(Item item) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_, absl::Condition(this, &LineQueue::HasRoomOrClosed));
    if (closed_) return false;
    bytes_ += item.line.size();
    items_.push_back(std::move(item));
    return true;
  }

  // The reader has nothing more to give (end of input, a stop signal or a read error).
  void Finish() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    finished_ = true;
  }

  // The next line; nullopt once the reader finished and every line was taken.
  std::optional<Item> Pop() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_, absl::Condition(this, &LineQueue::HasItemOrFinished));
    if (items_.empty()) return std::nullopt;
    Item item = std::move(items_.front());
    items_.pop_front();
    bytes_ -= item.line.size();
    return item;
  }

  // The serving thread stopped: a waiting Push returns false.
  void Close() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

 private:
  // Conditions for absl::Mutex, which evaluates them again whenever mu_ is released: no
  // condition variable to signal.
  bool HasRoomOrClosed() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || bytes_ == 0 || bytes_ < max_bytes_;
  }
  bool HasItemOrFinished() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return finished_ || !items_.empty();
  }

  const size_t max_bytes_;
  absl::Mutex mu_;  // Guards the members below.
  std::deque<Item> items_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// Reads `in_fd` into lines until end of input or a byte on `wake_fd`, showing each line to the
// dispatcher (Preview) and queueing it. Every line of one read is previewed before the first
// is queued: a cancellation sent right behind its request (in one write) is known before
// that request can start. Lines over the limit are dropped while being read.
void ReadLines(int in_fd, int wake_fd, size_t max_line_bytes, mcp::Dispatcher& dispatcher,
               LineQueue& queue) {
  std::string buffer;       // Bytes read and not yet consumed as lines.
  bool discarding = false;  // Inside a line that exceeded the limit.
  char chunk[1 << 16];
  std::vector<LineQueue::Item> previewed;  // Lines of this read, shown to the dispatcher.
  auto preview = [&](std::string_view line) {
    if (line.size() > max_line_bytes) {
      previewed.push_back({.line = {}, .too_long = true});
      return;
    }
    dispatcher.Preview(line);
    previewed.push_back({.line = std::string(line)});
  };
  auto queue_previewed = [&] {
    bool open = true;
    for (LineQueue::Item& item : previewed) {
      if (open) open = queue.Push(std::move(item));
    }
    previewed.clear();
    return open;
  };
  pollfd fds[2] = {{.fd = in_fd, .events = POLLIN, .revents = 0},
                   {.fd = wake_fd, .events = POLLIN, .revents = 0}};
  while (!g_stop) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) break;  // Woken: a stop signal, or the serving thread ended.
    const ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      break;
    }
    if (n == 0) {
      // EOF: a last line without its newline is still a message.
      if (!discarding && !buffer.empty()) preview(buffer);
      queue_previewed();
      break;
    }
    size_t start = buffer.size();
    buffer.append(chunk, static_cast<size_t>(n));
    size_t line_start = 0;
    for (size_t newline; (newline = buffer.find('\n', start)) != std::string::npos;) {
      if (discarding) {
        discarding = false;
      } else {
        std::string_view line(buffer.data() + line_start, newline - line_start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        preview(line);
      }
      line_start = start = newline + 1;
    }
    if (!queue_previewed()) break;
    buffer.erase(0, line_start);
    // A trailing '\r' may be the first half of a CRLF ending and does not count.
    const size_t pending = buffer.size() - (!buffer.empty() && buffer.back() == '\r' ? 1 : 0);
    if (pending > max_line_bytes) {
      // Drop the partial line now so memory stays bounded; answer once it ends.
      if (!discarding && !queue.Push({.line = {}, .too_long = true})) break;
      discarding = true;
      buffer.clear();
    }
  }
  queue.Finish();
}

}  // namespace

void InstallSignalHandlers() {
  g_wake_write_fd.store(Wake().write_fd);
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // The wake pipe, not EINTR, is what ends the loop.
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int ServeStdio(mcp::Dispatcher& dispatcher, int in_fd, int out_fd, const StdioOptions& options) {
  if (Wake().read_fd < 0) return 1;
  g_wake_write_fd.store(Wake().write_fd);

  // Reading goes on while a request runs, so that a cancellation reaches it; lines queue up
  // to a few oversized lines' worth of bytes.
  LineQueue queue(std::max<size_t>(options.max_line_bytes, 1u << 20) * 2);
  std::thread reader(ReadLines, in_fd, Wake().read_fd, options.max_line_bytes, std::ref(dispatcher),
                     std::ref(queue));

  dispatcher.set_notify([out_fd](const std::string& line) { WriteAll(out_fd, line + "\n"); });
  const std::string too_long =
      mcp::Dispatcher::ErrorLine(
          mcp::kInvalidRequest,
          absl::StrCat("Invalid Request: message longer than ", options.max_line_bytes,
                       " bytes (the limit is set with --max-line-bytes)")) +
      "\n";
  int exit_code = 0;
  while (!g_stop) {
    std::optional<LineQueue::Item> item = queue.Pop();
    if (!item) break;
    if (item->too_long) {
      if (!WriteAll(out_fd, too_long)) exit_code = 1;
    } else if (std::optional<std::string> response = dispatcher.HandleLine(item->line)) {
      response->push_back('\n');
      if (!WriteAll(out_fd, *response)) exit_code = 1;
    }
    if (exit_code != 0) break;
  }

  // Stop the reader (it may be waiting for input or for room in the queue) and wait for it.
  queue.Close();
  WakeReader();
  reader.join();
  DrainWake();  // The next loop (tests run several) starts unwoken.
  dispatcher.set_notify(nullptr);
  return exit_code;
}

}  // namespace strata::server
