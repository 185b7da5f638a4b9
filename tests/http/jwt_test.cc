// JWT access tokens (http/jwt.h): keys made and tokens signed here with OpenSSL, then every
// check the verifier makes, each shown to refuse what it should.

#include "http/jwt.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "testing/status_matchers.h"

namespace strata::http {
namespace {

using json = nlohmann::json;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'800'000'000;
constexpr char kIssuer[] = "https://auth.example.com/realms/team";
constexpr char kAudience[] = "https://memory.example.com/mcp";

std::string B64(std::string_view bytes) {
  std::string out;
  absl::WebSafeBase64Escape(absl::string_view(bytes.data(), bytes.size()), &out);
  return out;
}

std::string Bytes(const BIGNUM* bn, int width = 0) {
  std::string out(width > 0 ? width : BN_num_bytes(bn), '\0');
  BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()));
  return out;
}

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};

// A key pair, its public half as a JWK, and JWS signing with it.
class TestKey {
 public:
  static TestKey Rsa(const std::string& kid, int bits = 2048) {
    TestKey key(EVP_RSA_gen(bits), "RS256", kid);
    BIGNUM* n = nullptr;
    BIGNUM* e = nullptr;
    EVP_PKEY_get_bn_param(key.pkey_.get(), OSSL_PKEY_PARAM_RSA_N, &n);
    EVP_PKEY_get_bn_param(key.pkey_.get(), OSSL_PKEY_PARAM_RSA_E, &e);
    key.jwk_ = {{"kty", "RSA"}, {"kid", kid}, {"use", "sig"}, {"n", B64(Bytes(n))},
                {"e", B64(Bytes(e))}};
    BN_free(n);
    BN_free(e);
    return key;
  }
  static TestKey P256(const std::string& kid) {
    TestKey key(EVP_EC_gen("P-256"), "ES256", kid);
    BIGNUM* x = nullptr;
    BIGNUM* y = nullptr;
    EVP_PKEY_get_bn_param(key.pkey_.get(), OSSL_PKEY_PARAM_EC_PUB_X, &x);
    EVP_PKEY_get_bn_param(key.pkey_.get(), OSSL_PKEY_PARAM_EC_PUB_Y, &y);
    key.jwk_ = {{"kty", "EC"}, {"kid", kid}, {"crv", "P-256"}, {"x", B64(Bytes(x, 32))},
                {"y", B64(Bytes(y, 32))}};
    BN_free(x);
    BN_free(y);
    return key;
  }

  const json& jwk() const { return jwk_; }

  // A compact JWS of `claims`; `header` entries replace the default alg and kid.
  std::string Sign(const json& claims, json header = json::object()) const {
    json h = {{"alg", alg_}, {"typ", "at+jwt"}, {"kid", kid_}};
    h.update(header);
    const std::string signed_part = B64(h.dump()) + "." + B64(claims.dump());
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    size_t size = 0;
    EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pkey_.get());
    EVP_DigestSign(ctx, nullptr, &size, reinterpret_cast<const unsigned char*>(signed_part.data()),
                   signed_part.size());
    std::string sig(size, '\0');
    EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &size,
                   reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size());
    sig.resize(size);
    EVP_MD_CTX_free(ctx);
    if (alg_ == "ES256") {  // DER to JWS's r || s.
      const unsigned char* p = reinterpret_cast<const unsigned char*>(sig.data());
      ECDSA_SIG* ecdsa = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
      sig = Bytes(ECDSA_SIG_get0_r(ecdsa), 32) + Bytes(ECDSA_SIG_get0_s(ecdsa), 32);
      ECDSA_SIG_free(ecdsa);
    }
    return signed_part + "." + B64(sig);
  }

 private:
  TestKey(EVP_PKEY* pkey, std::string alg, std::string kid)
      : pkey_(pkey), alg_(std::move(alg)), kid_(std::move(kid)) {}

  std::unique_ptr<EVP_PKEY, PkeyFree> pkey_;
  std::string alg_;
  std::string kid_;
  json jwk_;
};

json Claims() {
  return {{"iss", kIssuer},        {"aud", kAudience}, {"sub", "agent-7"},
          {"exp", kNow + 600},     {"iat", kNow - 10}, {"scope", "openid workspace:team-a"}};
}

class JwtVerifierTest : public ::testing::Test {
 protected:
  JwtVerifierTest() : rsa_(TestKey::Rsa("rsa-1")), ec_(TestKey::P256("ec-1")) {}

  JwtVerifier Verifier(json keys) {
    absl::StatusOr<JwtVerifier> v =
        JwtVerifier::Parse(json{{"keys", keys}}.dump(), "jwks.json",
                           {.jwks_file = "jwks.json", .issuer = kIssuer, .audience = kAudience});
    EXPECT_TRUE(v.ok()) << v.status();
    return *std::move(v);
  }
  JwtVerifier Both() { return Verifier(json::array({rsa_.jwk(), ec_.jwk()})); }

  TestKey rsa_;
  TestKey ec_;
};

TEST_F(JwtVerifierTest, AcceptsRs256AndEs256WithTheirWorkspaces) {
  JwtVerifier v = Both();
  for (const TestKey* key : {&rsa_, &ec_}) {
    absl::StatusOr<TokenGrant> grant = v.Verify(key->Sign(Claims()), kNow);
    ASSERT_TRUE(grant.ok()) << grant.status();
    EXPECT_FALSE(grant->access.unrestricted());
    EXPECT_THAT(grant->access.allowed(), ::testing::ElementsAre("team-a"));
  }
  json every = Claims();
  every["scope"] = "workspace:* workspace:team-a";
  every["aud"] = json::array({"https://other.example.com", kAudience});
  absl::StatusOr<TokenGrant> grant = v.Verify(rsa_.Sign(every), kNow);
  ASSERT_TRUE(grant.ok()) << grant.status();
  EXPECT_TRUE(grant->access.unrestricted());
}

TEST_F(JwtVerifierTest, TheHolderIsIssuerAndSubjectNotTheToken) {
  JwtVerifier v = Both();
  json later = Claims();
  later["exp"] = kNow + 3600;
  absl::StatusOr<TokenGrant> a = v.Verify(rsa_.Sign(Claims()), kNow);
  absl::StatusOr<TokenGrant> b = v.Verify(ec_.Sign(later), kNow);
  json other = Claims();
  other["sub"] = "agent-8";
  absl::StatusOr<TokenGrant> c = v.Verify(rsa_.Sign(other), kNow);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->digest, b->digest);
  EXPECT_NE(a->digest, c->digest);
}

TEST_F(JwtVerifierTest, RefusesEachFailedCheck) {
  JwtVerifier v = Both();
  auto refused = [&](const std::string& token, const char* why) {
    EXPECT_THAT(v.Verify(token, kNow), StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr(why)))
        << why;
  };
  json c = Claims();
  c["iss"] = "https://evil.example.com";
  refused(rsa_.Sign(c), "another issuer");
  c = Claims();
  c["aud"] = "https://other.example.com/mcp";
  refused(rsa_.Sign(c), "another audience");
  c = Claims();
  c.erase("aud");
  refused(rsa_.Sign(c), "another audience");
  c = Claims();
  c["exp"] = kNow - 61;
  refused(rsa_.Sign(c), "expired");
  c = Claims();
  c.erase("exp");
  refused(rsa_.Sign(c), "no exp");
  c = Claims();
  c["nbf"] = kNow + 61;
  refused(rsa_.Sign(c), "not valid yet");
  c = Claims();
  c.erase("sub");
  refused(rsa_.Sign(c), "no sub");

  // The signature: another key, a claim changed after signing, a kid the file lacks, an
  // algorithm strata does not verify.
  const TestKey stranger = TestKey::Rsa("rsa-1");
  refused(stranger.Sign(Claims()), "does not verify");
  std::string token = rsa_.Sign(Claims());
  json forged = Claims();
  forged["scope"] = "workspace:*";
  std::string payload = B64(forged.dump());
  const size_t dot1 = token.find('.');
  const size_t dot2 = token.find('.', dot1 + 1);
  refused(token.substr(0, dot1 + 1) + payload + token.substr(dot2), "does not verify");
  refused(rsa_.Sign(Claims(), {{"kid", "rsa-2"}}), "names no key");
  refused(rsa_.Sign(Claims(), {{"alg", "ES256"}}), "");  // The EC key refuses an RSA signature.
  refused(rsa_.Sign(Claims(), {{"alg", "none"}}), "RS256 or ES256");
  refused(rsa_.Sign(Claims(), {{"alg", "HS256"}}), "RS256 or ES256");
  refused(token.substr(0, dot2), "three dot-separated parts");
  refused("not-a-jwt", "three dot-separated parts");
  refused("a.b!.c", "base64url");
  refused(std::string(20000, 'a'), "too long");
}

TEST_F(JwtVerifierTest, ClockSkewOfAMinuteEachWay) {
  JwtVerifier v = Both();
  json c = Claims();
  c["exp"] = kNow - 30;
  c["nbf"] = kNow + 30;
  EXPECT_TRUE(v.Verify(rsa_.Sign(c), kNow).ok());
}

TEST_F(JwtVerifierTest, AValidTokenWithoutAWorkspaceIsForbidden) {
  JwtVerifier v = Both();
  json c = Claims();
  c["scope"] = "openid profile";
  EXPECT_THAT(v.Verify(rsa_.Sign(c), kNow),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("workspace:NAME")));
  c.erase("scope");
  EXPECT_THAT(v.Verify(rsa_.Sign(c), kNow), StatusIs(absl::StatusCode::kPermissionDenied, ::testing::_));
}

TEST_F(JwtVerifierTest, ATokenWithoutKidUsesTheOnlyKey) {
  JwtVerifier one = Verifier(json::array({rsa_.jwk()}));
  json header = {{"kid", nullptr}};
  std::string token = rsa_.Sign(Claims(), header);
  EXPECT_TRUE(one.Verify(token, kNow).ok());
  JwtVerifier two = Verifier(json::array({rsa_.jwk(), TestKey::Rsa("rsa-2").jwk()}));
  EXPECT_THAT(two.Verify(token, kNow), StatusIs(absl::StatusCode::kUnauthenticated, ::testing::_));
}

TEST_F(JwtVerifierTest, TheJwksFileIsCheckedWhenRead) {
  const JwtSettings s{.jwks_file = "k.json", .issuer = kIssuer, .audience = kAudience};
  EXPECT_THAT(JwtVerifier::Parse("[]", "k.json", s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JWKS")));
  // Encryption keys and other algorithms are skipped; with nothing left the file is refused.
  json enc = rsa_.jwk();
  enc["use"] = "enc";
  json hmac = {{"kty", "oct"}, {"k", "c2VjcmV0"}};
  EXPECT_THAT(JwtVerifier::Parse(json{{"keys", {enc, hmac}}}.dump(), "k.json", s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no RS256 or ES256")));
  json small = TestKey::Rsa("small", 1024).jwk();
  EXPECT_THAT(JwtVerifier::Parse(json{{"keys", {small}}}.dump(), "k.json", s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("keys[0]: RSA key under")));
  json bad_ec = ec_.jwk();
  bad_ec["x"] = B64("short");
  EXPECT_THAT(JwtVerifier::Parse(json{{"keys", {bad_ec}}}.dump(), "k.json", s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("32-byte x and y")));
  EXPECT_THAT(JwtVerifier::Load({.jwks_file = "/nonexistent/jwks.json"}),
              StatusIs(absl::StatusCode::kNotFound, ::testing::_));
}

TEST(ResourceMetadataTest, TheWellKnownPathGoesBetweenHostAndPath) {
  EXPECT_EQ(ResourceMetadataUrl("https://memory.example.com/mcp"),
            "https://memory.example.com/.well-known/oauth-protected-resource/mcp");
  EXPECT_EQ(ResourceMetadataUrl("https://memory.example.com:8443/team/mcp"),
            "https://memory.example.com:8443/.well-known/oauth-protected-resource/team/mcp");
  EXPECT_EQ(ResourceMetadataUrl("https://memory.example.com"),
            "https://memory.example.com/.well-known/oauth-protected-resource");
  EXPECT_EQ(ResourceMetadataPath("https://memory.example.com/"),
            "/.well-known/oauth-protected-resource");
  EXPECT_EQ(ResourceMetadataPath("https://memory.example.com/mcp"),
            "/.well-known/oauth-protected-resource/mcp");
}

}  // namespace
}  // namespace strata::http
