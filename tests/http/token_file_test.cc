// The token file's format (README "MCP over HTTP") and the constant-time comparison.

#include "http/token_file.h"

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::http {
namespace {

using ::strata::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAll[] = "all-workspaces-0123456789";
constexpr char kTeam[] = "team-token-0123456789";

TEST(ConstantTimeEqualsTest, ComparesBytesAndLengths) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
  EXPECT_TRUE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
}

TEST(TokenTableTest, ParsesTokensWorkspacesCommentsAndBlankLines) {
  const std::string text = absl::StrCat("# tokens\n\n  ", kAll, "\n", kTeam,
                                        "\tteam-a,\"\",team-b  \r\nlast-token-0123456789 *\n");
  absl::StatusOr<TokenTable> table = TokenTable::Parse(text, "tokens");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->size(), 3u);

  std::optional<TokenGrant> all = table->Find(kAll);
  ASSERT_TRUE(all.has_value());
  EXPECT_TRUE(all->access.unrestricted());

  std::optional<TokenGrant> team = table->Find(kTeam);
  ASSERT_TRUE(team.has_value());
  EXPECT_FALSE(team->access.unrestricted());
  EXPECT_THAT(team->access.allowed(), ::testing::ElementsAre("team-a", "", "team-b"));
  EXPECT_TRUE(team->access.Allows(""));
  EXPECT_FALSE(team->access.Allows("team-c"));
  EXPECT_NE(team->digest, all->digest);
  EXPECT_EQ(team->digest.size(), 64u);

  EXPECT_TRUE(table->Find("last-token-0123456789")->access.unrestricted());
}

TEST(TokenTableTest, FindsOnlyExactTokens) {
  absl::StatusOr<TokenTable> table = TokenTable::Parse(kTeam, "tokens");
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(table->Find(kTeam).has_value());
  EXPECT_FALSE(table->Find("").has_value());
  EXPECT_FALSE(table->Find(std::string(kTeam) + "x").has_value());
  EXPECT_FALSE(table->Find(std::string(kTeam).substr(1)).has_value());
  EXPECT_FALSE(table->Find("TEAM-TOKEN-0123456789").has_value());
}

TEST(TokenTableTest, RefusesBadLinesByNumberWithoutShowingTheToken) {
  struct Case {
    std::string text;
    std::string why;
  };
  const Case cases[] = {
      {"# only a comment\n", "holds no token"},
      {"", "holds no token"},
      {"short-token", ":1: a token has 16 to 512 characters"},
      {absl::StrCat("\n", std::string(513, 'a')), ":2: a token has 16 to 512"},
      {"bad\"token-0123456789", ":1: a token holds only"},
      {absl::StrCat(kTeam, " a b"), ":1: expected TOKEN [WORKSPACES]"},
      {absl::StrCat(kTeam, " a,,b"), ":1: an empty workspace name"},
      {absl::StrCat(kTeam, " a,"), ":1: an empty workspace name"},
      {absl::StrCat(kTeam, " a,*"), ":1: \"*\" (every workspace) stands alone"},
      {absl::StrCat(kAll, "\n", kTeam, "\n", kAll, " a"), ":3: this token is listed twice"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<TokenTable> table = TokenTable::Parse(c.text, "tokens");
    EXPECT_THAT(table.status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("tokens"), HasSubstr(c.why), Not(HasSubstr(kTeam)),
                               Not(HasSubstr("short-token")))))
        << c.text;
  }
}

TEST(TokenTableTest, LoadsAFile) {
  testing::TempDir dir;
  const std::string path = dir.path() / "tokens";
  EXPECT_THAT(TokenTable::Load(path).status(), StatusIs(absl::StatusCode::kNotFound, ::testing::_));
  std::ofstream(path) << kTeam << " team-a\n";
  absl::StatusOr<TokenTable> table = TokenTable::Load(path);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->Find(kTeam)->access.Allows("team-a"));
}

}  // namespace
}  // namespace strata::http
