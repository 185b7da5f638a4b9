#pragma once
// The bearer tokens of `strata serve --http --auth-token-file FILE` and the workspaces each
// may use. README "MCP over HTTP" documents the format:
//
//   # comment
//   TOKEN                  every workspace (same as TOKEN *)
//   TOKEN *                every workspace
//   TOKEN team-a,team-b    only these workspaces; "" names the global workspace
//
// A token is 16 to 512 characters of RFC 6750's b64token alphabet (A-Z a-z 0-9 - . _ ~ + / =).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/access.h"

namespace strata::http {

// What a presented token grants.
struct TokenGrant {
  std::string digest;  // SHA-256 of the token in hex: names its holder without keeping it.
  tools::WorkspaceAccess access;
};

// Thread safety: immutable after Parse.
class TokenTable {
 public:
  // Parses a token file's text. Errors: InvalidArgument naming `source`, the line and the
  // rule, never the token; also when the file holds no token.
  static absl::StatusOr<TokenTable> Parse(std::string_view text, std::string_view source);
  // Reads and parses the file at `path`. Errors: as Parse, NotFound when it cannot be read.
  static absl::StatusOr<TokenTable> Load(const std::string& path);

  // The grant of `presented`, or nullopt. Compares against every token in constant time
  // (their digests, so that neither a token's bytes nor its length shows in the timing).
  std::optional<TokenGrant> Find(std::string_view presented) const;

  size_t size() const { return grants_.size(); }

 private:
  std::vector<TokenGrant> grants_;
};

// Whether `a` and `b` hold the same bytes, in time that depends on their lengths only.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace strata::http
