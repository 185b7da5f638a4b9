#pragma once
// The stdio transport: newline-delimited messages in, one response line per answer out.

#include <cstddef>

#include "mcp/dispatcher.h"

namespace strata::server {

struct StdioOptions {
  size_t max_line_bytes = 8u << 20;  // Longer lines are discarded and answered with -32600.
};

// Reads lines from `in_fd` until EOF, SIGTERM or SIGINT, answering each on `out_fd`. A reader
// thread reads ahead while a request runs, so that notifications/cancelled reaches it. Returns
// the process exit code: 0 on a clean end, 1 when the output cannot be written.
// REQUIRES: InstallSignalHandlers() was called, for SIGTERM/SIGINT to end the loop.
int ServeStdio(mcp::Dispatcher& dispatcher, int in_fd, int out_fd, const StdioOptions& options);

// SIGTERM and SIGINT end the loop after the request in flight, whichever thread the kernel
// delivers them to; SIGPIPE is ignored.
void InstallSignalHandlers();

}  // namespace strata::server
