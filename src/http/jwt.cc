#include "http/jwt.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/json_text.h"
#include "util/sha256.h"

namespace strata::http {
namespace {

using json = nlohmann::json;

constexpr int64_t kClockSkewS = 60;
// Longer tokens are refused before any decoding: no authorization server issues them.
constexpr size_t kMaxTokenBytes = 16 * 1024;
constexpr int kMinRsaBits = 2048;
constexpr std::string_view kWorkspaceScope = "workspace:";
constexpr char kWellKnown[] = "/.well-known/oauth-protected-resource";

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Bn = std::unique_ptr<BIGNUM, BnFree>;

enum class Alg { kRs256, kEs256 };

std::optional<std::string> Base64Url(std::string_view text) {
  std::string out;
  if (!absl::WebSafeBase64Unescape(absl::string_view(text.data(), text.size()), &out)) {
    return std::nullopt;
  }
  return out;
}

// A JWT's header and claims, or a JWKS document: objects a few levels deep. The project's
// parser bounds the depth and checks UTF-8 before anything is trusted.
std::optional<json> JsonObject(std::string_view text) {
  JsonParser parser(/*max_depth=*/16);
  absl::StatusOr<json> parsed = parser.Parse(text);
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  return *std::move(parsed);
}

// The string member `name` of `object`, or empty.
std::string StringMember(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Bn BignumOf(const std::string& bytes) {
  return Bn(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()),
                      static_cast<int>(bytes.size()), nullptr));
}

// A public key from OpenSSL parameters, or null.
Pkey FromParams(const char* type, OSSL_PARAM_BLD* builder) {
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(builder);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr);
  EVP_PKEY* key = nullptr;
  if (params != nullptr && ctx != nullptr && EVP_PKEY_fromdata_init(ctx) == 1) {
    if (EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = nullptr;
  }
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  return Pkey(key);
}

absl::StatusOr<Pkey> RsaKey(const json& jwk) {
  std::optional<std::string> n = Base64Url(StringMember(jwk, "n"));
  std::optional<std::string> e = Base64Url(StringMember(jwk, "e"));
  if (!n || !e || n->empty() || e->empty()) return absl::InvalidArgumentError("RSA key without n and e");
  Bn bn_n = BignumOf(*n);
  Bn bn_e = BignumOf(*e);
  if (BN_num_bits(bn_n.get()) < kMinRsaBits) {
    return absl::InvalidArgumentError(absl::StrCat("RSA key under ", kMinRsaBits, " bits"));
  }
  OSSL_PARAM_BLD* builder = OSSL_PARAM_BLD_new();
  Pkey key;
  if (builder != nullptr && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, bn_n.get()) &&
      OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, bn_e.get())) {
    key = FromParams("RSA", builder);
  }
  OSSL_PARAM_BLD_free(builder);
  if (key == nullptr) return absl::InvalidArgumentError("RSA key OpenSSL does not accept");
  return key;
}

absl::StatusOr<Pkey> P256Key(const json& jwk) {
  if (StringMember(jwk, "crv") != "P-256") return absl::InvalidArgumentError("EC key not on P-256");
  std::optional<std::string> x = Base64Url(StringMember(jwk, "x"));
  std::optional<std::string> y = Base64Url(StringMember(jwk, "y"));
  if (!x || !y || x->size() != 32 || y->size() != 32) {
    return absl::InvalidArgumentError("EC key without 32-byte x and y");
  }
  const std::string point = absl::StrCat("\x04", *x, *y);  // Uncompressed SEC 1 point.
  OSSL_PARAM_BLD* builder = OSSL_PARAM_BLD_new();
  Pkey key;
  if (builder != nullptr &&
      OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) &&
      OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size())) {
    key = FromParams("EC", builder);
  }
  OSSL_PARAM_BLD_free(builder);
  if (key == nullptr) return absl::InvalidArgumentError("EC key OpenSSL does not accept");
  return key;
}

// JWS's ES256 signature is r || s, 32 bytes each; OpenSSL verifies DER.
std::optional<std::string> EcdsaDer(std::string_view raw) {
  if (raw.size() != 64) return std::nullopt;
  ECDSA_SIG* sig = ECDSA_SIG_new();
  BIGNUM* r = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), 32, nullptr);
  BIGNUM* s = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()) + 32, 32, nullptr);
  std::optional<std::string> der;
  if (sig != nullptr && r != nullptr && s != nullptr && ECDSA_SIG_set0(sig, r, s) == 1) {
    r = s = nullptr;  // Owned by sig now.
    unsigned char* out = nullptr;
    const int size = i2d_ECDSA_SIG(sig, &out);
    if (size > 0) der.emplace(reinterpret_cast<const char*>(out), static_cast<size_t>(size));
    OPENSSL_free(out);
  }
  BN_free(r);
  BN_free(s);
  ECDSA_SIG_free(sig);
  return der;
}

bool SignatureVerifies(EVP_PKEY* key, std::string_view signed_part, std::string_view signature) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      ctx != nullptr && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(), reinterpret_cast<const unsigned char*>(signed_part.data()),
                       signed_part.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

// A NumericDate claim, or nullopt when absent or not a number.
std::optional<int64_t> TimeClaim(const json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number()) return std::nullopt;
  return static_cast<int64_t>(it->get<double>());
}

bool AudienceHolds(const json& claims, const std::string& audience) {
  auto it = claims.find("aud");
  if (it == claims.end()) return false;
  if (it->is_string()) return *it == audience;
  if (!it->is_array()) return false;
  for (const json& a : *it) {
    if (a.is_string() && a == audience) return true;
  }
  return false;
}

absl::Status Unauthenticated(std::string_view why) {
  return absl::UnauthenticatedError(absl::StrCat("the access token ", std::string(why)));
}

}  // namespace

struct JwtVerifier::Key {
  std::string kid;
  Alg alg = Alg::kRs256;
  Pkey pkey;
};

JwtVerifier::JwtVerifier(JwtSettings settings) : settings_(std::move(settings)) {}
JwtVerifier::JwtVerifier(JwtVerifier&&) noexcept = default;
JwtVerifier& JwtVerifier::operator=(JwtVerifier&&) noexcept = default;
JwtVerifier::~JwtVerifier() = default;

absl::StatusOr<JwtVerifier> JwtVerifier::Parse(std::string_view jwks, std::string_view source,
                                               JwtSettings settings) {
  const std::string source_name(source);
  std::optional<json> doc = JsonObject(jwks);
  if (!doc || !doc->contains("keys") || !(*doc)["keys"].is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": not a JWKS document (a JSON object with a \"keys\" array)"));
  }
  JwtVerifier verifier(std::move(settings));
  const json& keys = (*doc)["keys"];
  for (size_t i = 0; i < keys.size(); ++i) {
    const json& jwk = keys[i];
    if (!jwk.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(source_name, ": keys[", i, "] is not an object"));
    }
    // Keys for encryption, and algorithms strata does not verify, are skipped, not refused:
    // an authorization server's JWKS may publish them beside its signing keys.
    const std::string use = StringMember(jwk, "use");
    const std::string kty = StringMember(jwk, "kty");
    const std::string alg = StringMember(jwk, "alg");
    if (!use.empty() && use != "sig") continue;
    absl::StatusOr<Pkey> pkey;
    Alg which = Alg::kRs256;
    if (kty == "RSA" && (alg.empty() || alg == "RS256")) {
      which = Alg::kRs256;
      pkey = RsaKey(jwk);
    } else if (kty == "EC" && (alg.empty() || alg == "ES256")) {
      which = Alg::kEs256;
      pkey = P256Key(jwk);
    } else {
      continue;
    }
    if (!pkey.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source_name, ": keys[", i, "]: ", pkey.status().message()));
    }
    verifier.keys_.push_back(std::make_unique<Key>(
        Key{.kid = StringMember(jwk, "kid"), .alg = which, .pkey = *std::move(pkey)}));
  }
  if (verifier.keys_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": no RS256 or ES256 signing key (RSA, or EC on P-256)"));
  }
  return verifier;
}

absl::StatusOr<JwtVerifier> JwtVerifier::Load(JwtSettings settings) {
  std::ifstream in(settings.jwks_file, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", settings.jwks_file));
  std::ostringstream text;
  text << in.rdbuf();
  const std::string source = settings.jwks_file;
  return Parse(text.str(), source, std::move(settings));
}

absl::StatusOr<TokenGrant> JwtVerifier::Verify(std::string_view token, int64_t now_unix_s) const {
  if (token.size() > kMaxTokenBytes) return Unauthenticated("is too long");
  std::vector<std::string_view> parts;
  for (absl::string_view part : absl::StrSplit(absl::string_view(token.data(), token.size()), '.')) {
    parts.emplace_back(part.data(), part.size());
  }
  if (parts.size() != 3) return Unauthenticated("is not a JWT (three dot-separated parts)");
  std::optional<std::string> header_text = Base64Url(parts[0]);
  std::optional<std::string> claims_text = Base64Url(parts[1]);
  std::optional<std::string> signature = Base64Url(parts[2]);
  if (!header_text || !claims_text || !signature) return Unauthenticated("is not base64url");
  std::optional<json> header = JsonObject(*header_text);
  std::optional<json> claims = JsonObject(*claims_text);
  if (!header || !claims) return Unauthenticated("header or claims are not a JSON object");

  const std::string alg_name = StringMember(*header, "alg");
  Alg alg = Alg::kRs256;
  if (alg_name == "RS256") {
    alg = Alg::kRs256;
  } else if (alg_name == "ES256") {
    alg = Alg::kEs256;
  } else {
    return Unauthenticated("is not signed with RS256 or ES256");
  }
  const std::string kid = StringMember(*header, "kid");
  const Key* key = nullptr;
  for (const auto& k : keys_) {
    if (k->alg == alg && (k->kid == kid || (kid.empty() && keys_.size() == 1))) key = k.get();
  }
  if (key == nullptr) return Unauthenticated("names no key of the JWKS file");
  std::string der;
  std::string_view sig = *signature;
  if (alg == Alg::kEs256) {
    std::optional<std::string> converted = EcdsaDer(sig);
    if (!converted) return Unauthenticated("signature is not 64 bytes");
    der = *std::move(converted);
    sig = der;
  }
  const std::string_view signed_part = token.substr(0, parts[0].size() + 1 + parts[1].size());
  if (!SignatureVerifies(key->pkey.get(), signed_part, sig)) {
    return Unauthenticated("signature does not verify");
  }

  if (StringMember(*claims, "iss") != settings_.issuer) {
    return Unauthenticated("is from another issuer");
  }
  if (!AudienceHolds(*claims, settings_.audience)) {
    return Unauthenticated("is for another audience");
  }
  const std::optional<int64_t> exp = TimeClaim(*claims, "exp");
  if (!exp) return Unauthenticated("has no exp claim");
  if (now_unix_s >= *exp + kClockSkewS) return Unauthenticated("has expired");
  if (const std::optional<int64_t> nbf = TimeClaim(*claims, "nbf");
      nbf && now_unix_s + kClockSkewS < *nbf) {
    return Unauthenticated("is not valid yet (nbf)");
  }
  const std::string sub = StringMember(*claims, "sub");
  if (sub.empty()) return Unauthenticated("has no sub claim");

  bool every = false;
  std::vector<std::string> workspaces;
  const std::string scopes = StringMember(*claims, "scope");
  for (absl::string_view scope_part : absl::StrSplit(scopes, ' ')) {
    const std::string_view scope(scope_part.data(), scope_part.size());
    if (!scope.starts_with(kWorkspaceScope)) continue;
    const std::string_view name = scope.substr(kWorkspaceScope.size());
    if (name == "*") {
      every = true;
    } else {
      workspaces.emplace_back(name);
    }
  }
  if (!every && workspaces.empty()) {
    return absl::PermissionDeniedError(
        "the access token grants no workspace: its scope needs workspace:NAME or workspace:*");
  }
  return TokenGrant{
      .digest = Sha256Hex(absl::StrCat("jwt\n", settings_.issuer, "\n", sub)),
      .access = every ? tools::WorkspaceAccess() : tools::WorkspaceAccess(std::move(workspaces))};
}

std::string ResourceMetadataPath(std::string_view audience) {
  std::string_view rest = audience;
  if (const size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
    rest = rest.substr(scheme + 3);
  }
  const size_t slash = rest.find('/');
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (path == "/") path = {};
  return absl::StrCat(kWellKnown, std::string(path));
}

std::string ResourceMetadataUrl(std::string_view audience) {
  const size_t scheme = audience.find("://");
  const size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t slash = audience.find('/', start);
  const std::string_view origin =
      slash == std::string_view::npos ? audience : audience.substr(0, slash);
  return absl::StrCat(std::string(origin), ResourceMetadataPath(audience));
}

}  // namespace strata::http
