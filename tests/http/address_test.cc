// Listening addresses and Origin headers: which are loopback.

#include "http/address.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace strata::http {
namespace {

using ::strata::testing::StatusIs;

TEST(ParseListenAddressTest, ParsesHostAndPort) {
  absl::StatusOr<ListenAddress> v4 = ParseListenAddress("127.0.0.1:8765");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8765);
  absl::StatusOr<ListenAddress> v6 = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(ParseListenAddress("localhost:80")->host, "localhost");
}

TEST(ParseListenAddressTest, RefusesMalformedAddresses) {
  for (const char* bad : {"", "127.0.0.1", ":80", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                          "127.0.0.1:8x", "::1:80", "[::1", "[::1]80", "[]:80"}) {
    EXPECT_THAT(ParseListenAddress(bad).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_))
        << bad;
  }
}

TEST(IsLoopbackHostTest, KnowsLoopback) {
  for (const char* host : {"localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "example.com",
                           "localhost.example.com", "::ffff:127.0.0.1x", ""}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST(OriginAllowedTest, LoopbackOriginsAndTheAllowList) {
  const std::vector<std::string> none;
  for (const char* origin : {"http://localhost", "http://localhost:3000", "https://127.0.0.1",
                             "http://[::1]:8080", "http://127.0.0.5:1"}) {
    EXPECT_TRUE(OriginAllowed(origin, none)) << origin;
  }
  for (const char* origin : {"null", "http://evil.example", "http://127.0.0.1.evil.example",
                             "http://localhost.evil", "file://localhost", "http://user@localhost",
                             "http://localhost/path", "localhost", "http://[::1", ""}) {
    EXPECT_FALSE(OriginAllowed(origin, none)) << origin;
  }
  const std::vector<std::string> allowed = {"https://app.example.com"};
  EXPECT_TRUE(OriginAllowed("https://app.example.com", allowed));
  EXPECT_FALSE(OriginAllowed("https://app.example.com:444", allowed));
  EXPECT_FALSE(OriginAllowed("http://app.example.com", allowed));
}

}  // namespace
}  // namespace strata::http
