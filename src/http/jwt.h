#pragma once
// JWT access tokens from an OAuth 2.1 authorization server, the second way to authorize HTTP
// clients (`strata serve --http ADDR --auth-jwks FILE --auth-issuer URL --auth-audience URL`;
// README "MCP over HTTP", docs/protocol.md "Authorization"). strata is the resource server of
// MCP's authorization model: it never issues tokens, it checks those the authorization server
// signed, with the public keys of a JWKS file the operator keeps current (re-read on SIGHUP).
//
// A token is valid when: it is three base64url parts; its header's `alg` is RS256 or ES256 and
// its `kid` names a key of that type in the file (or the file holds one key and the token names
// none); the signature verifies; `iss` equals the issuer; `aud` (a string or an array) holds the
// audience; `exp` is in the future and `nbf`, when present, is not (60 s of clock skew allowed
// each way). Its workspaces are its `scope` claim's entries `workspace:NAME` (`workspace:*` for
// every one; `workspace:` alone for the global workspace). A token without any is refused.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "http/token_file.h"

namespace strata::http {

struct JwtSettings {
  std::string jwks_file;  // A JWKS document: {"keys": [...]}.
  std::string issuer;     // The authorization server's issuer identifier, exactly.
  std::string audience;   // This server's resource identifier, e.g. https://host/mcp.
};

// Thread safety: immutable after Load.
class JwtVerifier {
 public:
  // Errors: InvalidArgument for a document that is not a JWKS or holds no usable key (naming
  // `source` and the key's index); NotFound when the file cannot be read.
  static absl::StatusOr<JwtVerifier> Parse(std::string_view jwks, std::string_view source,
                                           JwtSettings settings);
  static absl::StatusOr<JwtVerifier> Load(JwtSettings settings);

  JwtVerifier(JwtVerifier&&) noexcept;
  JwtVerifier& operator=(JwtVerifier&&) noexcept;
  ~JwtVerifier();

  // The grant of `token` at `now_unix_s`. Errors: Unauthenticated saying which check failed
  // (for the server's log and the 401's error_description; never the token itself);
  // PermissionDenied for a valid token that names no workspace. The grant's digest names the
  // holder (issuer and subject), so a session outlives a refreshed token.
  absl::StatusOr<TokenGrant> Verify(std::string_view token, int64_t now_unix_s) const;

  size_t size() const { return keys_.size(); }
  const JwtSettings& settings() const { return settings_; }

 private:
  struct Key;
  explicit JwtVerifier(JwtSettings settings);

  JwtSettings settings_;
  std::vector<std::unique_ptr<Key>> keys_;
};

// RFC 9728's metadata URL for the resource `audience`: the well-known path inserted between
// its host and its path (https://h/mcp -> https://h/.well-known/oauth-protected-resource/mcp).
std::string ResourceMetadataUrl(std::string_view audience);
// The path part of ResourceMetadataUrl, for serving it.
std::string ResourceMetadataPath(std::string_view audience);

}  // namespace strata::http
