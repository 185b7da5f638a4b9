#include "server/stdio_loop.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <string_view>

#include <pthread.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace strata::server {
namespace {

volatile std::sig_atomic_t g_stop = 0;
pthread_t g_serving_thread;  // Set before the handler is installed.

// A process-directed signal may land on any thread (the checkpointer, the embedding worker);
// only the serving thread's blocked read returns EINTR, so the signal is passed on to it.
void OnStopSignal(int sig) {
  g_stop = 1;
  if (!pthread_equal(pthread_self(), g_serving_thread)) pthread_kill(g_serving_thread, sig);
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

}  // namespace

void InstallSignalHandlers() {
  g_serving_thread = pthread_self();
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // No SA_RESTART: a blocked read returns EINTR and the loop ends.
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int ServeStdio(mcp::Dispatcher& dispatcher, int in_fd, int out_fd, const StdioOptions& options) {
  std::string buffer;       // Bytes read and not yet consumed as lines.
  bool discarding = false;  // Inside a line that exceeded the limit.
  char chunk[1 << 16];
  dispatcher.set_notify([out_fd](const std::string& line) { WriteAll(out_fd, line + "\n"); });
  auto answer = [&](std::string_view line) {
    std::optional<std::string> response = dispatcher.HandleLine(line);
    if (!response) return true;
    response->push_back('\n');
    return WriteAll(out_fd, *response);
  };
  auto too_long = [&] {
    std::string line = mcp::Dispatcher::ErrorLine(
        mcp::kInvalidRequest,
        absl::StrCat("Invalid Request: message longer than ", options.max_line_bytes,
                     " bytes (the limit is set with --max-line-bytes)"));
    line.push_back('\n');
    return WriteAll(out_fd, line);
  };
  while (!g_stop) {
    const ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (n == 0) {
      // EOF: a last line without its newline is still a message.
      if (!discarding && !buffer.empty() && !answer(buffer)) return 1;
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
        if (line.size() > options.max_line_bytes) {
          if (!too_long()) return 1;
        } else if (!answer(line)) {
          return 1;
        }
      }
      line_start = start = newline + 1;
      if (g_stop) break;
    }
    buffer.erase(0, line_start);
    // A trailing '\r' may be the first half of a CRLF ending and does not count.
    const size_t pending = buffer.size() - (!buffer.empty() && buffer.back() == '\r' ? 1 : 0);
    if (pending > options.max_line_bytes) {
      // Drop the partial line now so memory stays bounded; answer once it ends.
      if (!discarding && !too_long()) return 1;
      discarding = true;
      buffer.clear();
    }
  }
  return 0;
}

}  // namespace strata::server
