#include "embed/embedder.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace strata::embed {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Embeds a text as {its length, its call's number}, batch texts a call; `fail_call` fails
// (Unavailable) and `short_call` gives one float too few.
class CountingEmbedder : public Embedder {
 public:
  explicit CountingEmbedder(int batch) : batch_(batch) {}
  const EmbedderInfo& info() const override { return info_; }
  int batch_size() const override { return batch_; }
  absl::StatusOr<std::vector<float>> Embed(std::span<const std::string> texts, Role) override {
    const int call = calls_++;
    if (call == fail_call) return absl::UnavailableError("down");
    std::vector<float> out;
    for (const std::string& text : texts) {
      out.push_back(static_cast<float>(text.size()));
      out.push_back(static_cast<float>(call));
    }
    if (call == short_call) out.pop_back();
    return out;
  }
  int calls() const { return calls_; }

  int fail_call = -1;
  int short_call = -1;

 private:
  EmbedderInfo info_{.name = "counting", .version = "1", .dimension = 2};
  int batch_;
  int calls_ = 0;
};

TEST(EmbedAllTest, EmbedsEveryTextInOrderABatchACall) {
  CountingEmbedder embedder(2);
  const std::vector<std::string> texts = {"a", "bb", "ccc", "dddd", "eeeee"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors,
                       EmbedAll(embedder, texts, Role::kDocument));
  EXPECT_THAT(vectors, ElementsAre(1, 0, 2, 0, 3, 1, 4, 1, 5, 2));
  EXPECT_EQ(embedder.calls(), 3);
}

TEST(EmbedAllTest, ABatchSizeBelowOneIsOne) {
  CountingEmbedder embedder(0);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors,
                       EmbedAll(embedder, std::vector<std::string>{"a", "bb"}, Role::kDocument));
  EXPECT_THAT(vectors, ElementsAre(1, 0, 2, 1));
}

TEST(EmbedAllTest, NoTextsAreNoCalls) {
  CountingEmbedder embedder(4);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors, EmbedAll(embedder, {}, Role::kDocument));
  EXPECT_TRUE(vectors.empty());
  EXPECT_EQ(embedder.calls(), 0);
}

TEST(EmbedAllTest, StopsAtTheEmbeddersError) {
  CountingEmbedder embedder(1);
  embedder.fail_call = 1;
  const absl::StatusOr<std::vector<float>> vectors =
      EmbedAll(embedder, std::vector<std::string>{"a", "b", "c"}, Role::kDocument);
  EXPECT_EQ(vectors.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(embedder.calls(), 2);
}

TEST(EmbedAllTest, VectorsOfTheWrongSizeAreInternal) {
  CountingEmbedder embedder(2);
  embedder.short_call = 0;
  const absl::StatusOr<std::vector<float>> vectors =
      EmbedAll(embedder, std::vector<std::string>{"a", "b", "c"}, Role::kDocument);
  EXPECT_EQ(vectors.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(vectors.status().message(),
              HasSubstr("the embedder gave 3 floats for 2 texts of dimension 2"));
}

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

// CountingEmbedder embeds a text as its length, so a prefix shows as the length it adds.
TEST(WithRolePrefixesTest, PutsEachRolesPrefixBeforeItsTexts) {
  std::unique_ptr<Embedder> embedder = WithRolePrefixes(std::make_unique<CountingEmbedder>(4),
                                                        {.query = "q: ", .document = "passage: "});
  const std::vector<std::string> texts = {"ab"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> query, embedder->Embed(texts, Role::kQuery));
  ASSERT_OK_AND_ASSIGN(const std::vector<float> document, embedder->Embed(texts, Role::kDocument));
  EXPECT_EQ(query[0], 2 + 3);
  EXPECT_EQ(document[0], 2 + 9);
  EXPECT_EQ(embedder->batch_size(), 4);
}

TEST(WithRolePrefixesTest, OnlyTheDocumentPrefixJoinsTheFingerprint) {
  // Stored vectors change with the document prefix; the query prefix changes only queries.
  std::unique_ptr<Embedder> query_only =
      WithRolePrefixes(std::make_unique<CountingEmbedder>(4), {.query = "q: "});
  EXPECT_EQ(query_only->info().Fingerprint(), "counting/1/2/");
  const std::vector<std::string> texts = {"ab"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> document,
                       query_only->Embed(texts, Role::kDocument));
  EXPECT_EQ(document[0], 2);

  std::unique_ptr<Embedder> both = WithRolePrefixes(std::make_unique<CountingEmbedder>(4),
                                                    {.query = "q: ", .document = "passage: "});
  EXPECT_EQ(both->info().Fingerprint(), "counting/1/2/document_prefix=passage: ");
}

TEST(WithRolePrefixesTest, NoPrefixesIsTheEmbedderItself) {
  auto inner = std::make_unique<CountingEmbedder>(4);
  const Embedder* raw = inner.get();
  EXPECT_EQ(WithRolePrefixes(std::move(inner), {}).get(), raw);
}

TEST(FingerprintTest, NamesEverythingThatChangesVectors) {
  const EmbedderInfo info{.name = "builtin", .version = "3", .dimension = 384, .options = ""};
  EXPECT_EQ(info.Fingerprint(), "builtin/3/384/");
}

}  // namespace
}  // namespace strata::embed
