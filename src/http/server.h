#pragma once
// `strata serve --http ADDR`: MCP's Streamable HTTP transport on one endpoint, /mcp, with
// sessions, optional bearer tokens and Origin checks (docs/protocol.md "The HTTP transport").

#include <cstddef>
#include <string>
#include <vector>

#include "http/jwt.h"
#include "tools/registry.h"

namespace strata::http {

struct HttpOptions {
  std::string address;                       // HOST:PORT or [IPV6]:PORT; port 0: a free one.
  std::string token_file;                    // Empty: no token file.
  JwtSettings jwt;                           // jwks_file empty: no JWT access tokens.
  std::vector<std::string> allowed_origins;  // Origins served besides loopback ones.
  size_t max_body_bytes = 8u << 20;          // Larger request bodies get 413.
  std::string db_path;                       // Named in the start line.
};

// Serves MCP over HTTP until SIGTERM or SIGINT, then finishes the requests in flight and
// returns 0. Once listening, prints "strata VERSION: serving MCP over HTTP at
// http://HOST:PORT/mcp ..." on stderr (the port actually bound). SIGHUP re-reads the token
// file and the JWKS file; a bad one keeps what is in use and says why on stderr. Returns 2,
// before listening, for a bad address, token file or JWKS file and for a non-loopback address
// without authorization (a token file or JWTs); 1 when it cannot listen.
// Installs its own SIGTERM, SIGINT and SIGHUP handlers and ignores SIGPIPE.
// Tool calls run one at a time whatever the number of clients: the Store behind `registry` is
// used by one thread at a time. Single writes that wait their turn share a transaction on
// PostgreSQL (Store::set_commit_ticket); each is answered once it is committed.
int ServeHttp(tools::ToolRegistry& registry, const HttpOptions& options);

}  // namespace strata::http
