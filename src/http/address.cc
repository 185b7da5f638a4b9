#include "http/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "util/sv.h"

namespace strata::http {

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("--http \"", ToAbsl(text.substr(0, 80)),
                                                   "\": ", ToAbsl(why),
                                                   " (expected HOST:PORT or [IPV6]:PORT)"));
  };
  ListenAddress out;
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return fail("an IPv6 address is written [ADDRESS]:PORT");
    }
    out.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail("no port");
    out.host = std::string(text.substr(0, colon));
    if (out.host.find(':') != std::string::npos) return fail("put an IPv6 address in brackets");
    port = text.substr(colon + 1);
  }
  if (out.host.empty()) return fail("no host");
  int value = 0;
  if (!absl::SimpleAtoi(ToAbsl(port), &value) || value < 0 || value > 65535 ||
      port.find_first_not_of("0123456789") != std::string_view::npos) {
    return fail("the port is a number from 0 (any free port) to 65535");
  }
  out.port = value;
  return out;
}

bool IsLoopbackHost(std::string_view host) {
  if (absl::EqualsIgnoreCase(ToAbsl(host), "localhost")) return true;
  const std::string text(host);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    return std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0;
  }
  return false;
}

bool OriginAllowed(std::string_view origin, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), origin) != allowed.end()) return true;
  const size_t scheme_end = origin.find("://");
  if (scheme_end == std::string_view::npos) return false;  // e.g. "null"
  const std::string_view scheme = origin.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return false;
  std::string_view rest = origin.substr(scheme_end + 3);
  if (rest.find('/') != std::string_view::npos || rest.find('@') != std::string_view::npos) {
    return false;
  }
  std::string_view host;
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return false;
    host = rest.substr(1, close - 1);
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest[0] != ':') return false;
  } else {
    const size_t colon = rest.find(':');
    host = rest.substr(0, colon);
  }
  return IsLoopbackHost(host);
}

}  // namespace strata::http
