#pragma once
// The command line: `strata [serve]` speaks MCP on stdio; remember, recall, history and stats
// are for people at a shell.

namespace strata::tools {
class ToolRegistry;
}  // namespace strata::tools
namespace strata::http {
struct HttpOptions;
}  // namespace strata::http

namespace strata::server {

// Serves MCP over HTTP: http::ServeHttp, in the binary that links the HTTP module.
using ServeHttpFn = int (*)(tools::ToolRegistry& registry, const http::HttpOptions& options);

// Runs the command named by argv and returns the process exit code. `serve --http` runs
// `serve_http`; without one (the `strata` binary, which does not link the HTTP server and
// its TLS libraries, so that an agent host's every start stays fast) it replaces the process
// with `strata-http` from the same directory, given the same arguments, before opening the
// store.
int Main(int argc, char** argv, ServeHttpFn serve_http = nullptr);

}  // namespace strata::server
