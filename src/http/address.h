#pragma once
// Listening addresses and request origins: which are loopback.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::http {

struct ListenAddress {
  std::string host;  // An IP literal (brackets removed) or a host name.
  int port = 0;      // 0: any free port.
};

// Parses HOST:PORT, [IPV6]:PORT. Errors: InvalidArgument saying what is wrong.
absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text);

// Whether `host` (no brackets) is loopback: localhost, 127.0.0.0/8 or ::1.
bool IsLoopbackHost(std::string_view host);

// Whether a request with this Origin header may be served: a loopback origin
// (scheme://loopback-host[:port]) or one of `allowed`, compared exactly. DNS rebinding
// protection: a page from elsewhere must not reach a local server through the browser.
bool OriginAllowed(std::string_view origin, const std::vector<std::string>& allowed);

}  // namespace strata::http
