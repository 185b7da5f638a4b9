#include "embed/embedder.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace strata::embed {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(ParseOptionsTest, SplitsKeyValuePairsInOrder) {
  ASSERT_OK_AND_ASSIGN(auto options, ParseOptions("url=http://h:1/x,model=m"));
  EXPECT_THAT(options, ElementsAre(Pair("url", "http://h:1/x"), Pair("model", "m")));
}

TEST(ParseOptionsTest, EmptyIsNoOptions) {
  ASSERT_OK_AND_ASSIGN(auto options, ParseOptions(""));
  EXPECT_TRUE(options.empty());
}

TEST(ParseOptionsTest, RejectsEntryWithoutValueAndRepeats) {
  EXPECT_EQ(ParseOptions("dim").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseOptions("=3").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseOptions("dim=3,dim=4").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FingerprintTest, NamesEverythingThatChangesVectors) {
  const EmbedderInfo info{.name = "builtin", .version = "3", .dimension = 384, .options = ""};
  EXPECT_EQ(info.Fingerprint(), "builtin/3/384/");
}

}  // namespace
}  // namespace strata::embed
