// recall's `fields` and `max_chars` (canonical calls only): the snippet window in code points
// (tools/snippet.h), where a query's first match lies in a body, and what a recall item keeps.

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "strata/strata.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "tools/registry.h"
#include "tools/render.h"
#include "tools/snippet.h"
#include "util/clock.h"

namespace strata::tools {
namespace {

using ::nlohmann::json;
using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z

// Whether `s` is well-formed UTF-8 (no sequence cut short or begun by a continuation byte).
bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const size_t length = lead < 0x80    ? 1
                          : lead >= 0xF0 ? 4
                          : lead >= 0xE0 ? 3
                          : lead >= 0xC0 ? 2
                                         : 0;
    if (length == 0 || i + length > s.size()) return false;
    for (size_t j = 1; j < length; ++j) {
      if ((static_cast<unsigned char>(s[i + j]) & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

// `piece` repeated `n` times.
std::string Repeat(std::string_view piece, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out.append(piece);
  return out;
}

// The code point offset of `needle` in `haystack`.
size_t CodePointOffset(std::string_view haystack, std::string_view needle) {
  const size_t at = haystack.find(needle);
  EXPECT_NE(at, std::string_view::npos) << needle << " not in " << haystack;
  return CodePoints(haystack.substr(0, at));
}

// The snippet window.

TEST(CodePoints, CountsCharactersNotBytes) {
  EXPECT_EQ(CodePoints(""), 0u);
  EXPECT_EQ(CodePoints("abc"), 3u);
  EXPECT_EQ(CodePoints("é€😀"), 3u);  // 2, 3 and 4 bytes.
  EXPECT_EQ(CodePoints("データ"), 3u);
}

TEST(Window, ATextNoLongerThanTheWindowIsWhole) {
  EXPECT_EQ(Window("crème brûlée", std::nullopt, 12), "crème brûlée");
  EXPECT_EQ(Window("crème brûlée", ByteRange{.begin = 0, .end = 6}, 40), "crème brûlée");
}

TEST(Window, WithoutAMatchStartsAtTheBeginning) {
  EXPECT_EQ(Window("àbcdéfghij", std::nullopt, 4), "àbcd");
}

TEST(Window, CentresOnTheMatchAndStaysInsideTheText) {
  const std::string text = "0123456789abcdefghij";
  // "ab" is at 10..12: its centre, code point 11, is the window's sixth of ten.
  EXPECT_EQ(Window(text, ByteRange{.begin = 10, .end = 12}, 10), "6789abcdef");
  EXPECT_EQ(Window(text, ByteRange{.begin = 1, .end = 2}, 10), "0123456789");
  EXPECT_EQ(Window(text, ByteRange{.begin = 19, .end = 20}, 10), "abcdefghij");
}

TEST(Window, CountsCodePointsAndNeverSplitsASequence) {
  const std::string text = Repeat("aé€😀", 6);  // 24 code points, 60 bytes.
  ASSERT_EQ(CodePoints(text), 24u);
  for (size_t max_chars = 1; max_chars < 24; ++max_chars) {
    for (size_t begin = 0; begin < text.size(); ++begin) {
      if ((static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) continue;
      const std::string_view window =
          Window(text, ByteRange{.begin = begin, .end = begin + 1}, max_chars);
      EXPECT_EQ(CodePoints(window), max_chars) << max_chars << " at " << begin;
      EXPECT_TRUE(IsUtf8(window)) << max_chars << " at " << begin;
    }
  }
}

// Where a query matches a body.

TEST(QueryTerms, FindsTheFirstWordTheIndexWouldMatchByItsStem) {
  const QueryTerms terms("database migrations");
  const std::string text = "We migrated the billing database last week.";
  const std::optional<ByteRange> match = terms.FirstMatch(text);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(text.substr(match->begin, match->end - match->begin), "migrated");
}

TEST(QueryTerms, FindsWordsOfScriptsWrittenWithoutSpaces) {
  const QueryTerms terms("データベース");
  const std::string text = Repeat("雪", 10) + "データベース" + Repeat("雨", 10);
  const std::optional<ByteRange> match = terms.FirstMatch(text);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(text.substr(match->begin, match->end - match->begin), "デー");
}

TEST(QueryTerms, MatchesNothingWithoutACommonTermOrWithoutTerms) {
  EXPECT_EQ(QueryTerms("kubernetes").FirstMatch("vim with plugins"), std::nullopt);
  EXPECT_EQ(QueryTerms("").FirstMatch("vim with plugins"), std::nullopt);
}

// What a recall item keeps.

TEST(ShapeItem, WithoutFieldsOrMaxCharsTheItemIsUnchanged) {
  const json item = {{"id", 1}, {"key", "k"}, {"body_json", R"("text")"}, {"body", "text"}};
  json shaped = item;
  ShapeItem(ItemShape{}, shaped);
  EXPECT_EQ(shaped, item);
}

TEST(ShapeItem, FieldsKeepOnlyThoseAndTheId) {
  json item = {{"id", 1}, {"key", "k"}, {"score", 0.5}, {"body_json", "1"}, {"body", 1}};
  ShapeItem(ItemShape{.fields = std::vector<std::string>{"key"}}, item);
  EXPECT_EQ(item, json({{"id", 1}, {"key", "k"}}));
}

TEST(ShapeItem, ACutObjectBodyIsItsStringValuesOnePerLine) {
  const std::string long_text = Repeat("x", 50);
  json body = {{"a", "first"}, {"b", {long_text, 7}}};
  json item = {{"id", 1}, {"body_json", body.dump()}, {"body", body}};
  const QueryTerms none("");
  ShapeItem(ItemShape{.max_chars = 40, .query = &none}, item);
  EXPECT_EQ(item["snippet"], "first\n" + Repeat("x", 34));
  EXPECT_EQ(item["body_chars"], 56);  // "first", a newline, 50 x; not the number.
  EXPECT_EQ(item["cut"], true);
  EXPECT_FALSE(item.contains("body"));
  EXPECT_FALSE(item.contains("body_json"));
}

TEST(ShapeItem, ABodyWhoseTextFitsIsKeptWholeEvenWhenItsJsonIsLonger) {
  const json body = {{"numbers", json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})},
                     {"text", "short"}};
  json item = {{"id", 1}, {"body_json", body.dump()}, {"body", body}};
  const json before = item;
  const QueryTerms none("");
  ShapeItem(ItemShape{.max_chars = 40, .query = &none}, item);
  EXPECT_EQ(item, before);
}

TEST(ShapeItem, ACutBodysStandInsComeOnlyWithBodyOrBodyJson) {
  const std::string text = Repeat("word ", 20);
  const json body = text;
  const QueryTerms none("");
  for (const char* asked : {"body", "body_json"}) {
    json item = {{"id", 1}, {"key", "k"}, {"body_json", body.dump()}, {"body", body}};
    ShapeItem(ItemShape{.fields = std::vector<std::string>{asked}, .max_chars = 40, .query = &none},
              item);
    EXPECT_EQ(
        item,
        json({{"id", 1}, {"snippet", Repeat("word ", 8)}, {"cut", true}, {"body_chars", 100}}))
        << asked;
  }
  json item = {{"id", 1}, {"key", "k"}, {"body_json", body.dump()}, {"body", body}};
  ShapeItem(ItemShape{.fields = std::vector<std::string>{"key"}, .max_chars = 40, .query = &none},
            item);
  EXPECT_EQ(item, json({{"id", 1}, {"key", "k"}}));
}

// Through the registry, over a real store (keyword recall only: no background embedding).

class RecallShapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open({.path = dir_.File("memory.db"), .clock = &clock_, .embedder = "none"});
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    registry_ = std::make_unique<ToolRegistry>(store_.get(), RegistryOptions{});
  }

  absl::StatusOr<json> Call(std::string_view name, const json& args) {
    std::optional<ToolRegistry::Resolved> tool = registry_->Find(name);
    if (!tool) return absl::NotFoundError(std::string(name));
    return registry_->Call(*tool, args);
  }

  void Remember(const std::string& key, const json& body) {
    ASSERT_OK(Call("remember", {{"category", "note"}, {"key", key}, {"body", body}}));
  }

  ::strata::testing::TempDir dir_;
  FakeClock clock_{kNow};
  std::unique_ptr<Store> store_;
  std::unique_ptr<ToolRegistry> registry_;
};

// 300 accented letters (600 bytes), " kubernetes ", then 300 more: 612 code points.
const std::string kLongText = Repeat("é", 300) + " kubernetes " + Repeat("ü", 300);

TEST_F(RecallShapeTest, AnUnknownFieldIsRefusedListingTheFields) {
  EXPECT_THAT(
      Call("recall", {{"query", "x"}, {"fields", {"key", "bdy"}}}),
      StatusIs(kInvalid,
               "fields: each must be one of body, body_json, category, dense_rank, fts5_rank, "
               "id, importance, key, recorded_at, score, source, superseded_at, tags, type, "
               "valid_from, valid_to, version, workspace; got \"bdy\""));
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"fields", {"snippet"}}}),
              StatusIs(kInvalid, HasSubstr("got \"snippet\"")));
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"fields", {1}}}),
              StatusIs(kInvalid, HasSubstr("fields: every item must be a string")));
}

TEST_F(RecallShapeTest, MaxCharsOutOfRangeIsRefused) {
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"max_chars", 39}}),
              StatusIs(kInvalid, "max_chars: must be between 40 and 100000, got 39"));
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"max_chars", 100001}}),
              StatusIs(kInvalid, "max_chars: must be between 40 and 100000, got 100001"));
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"max_chars", "many"}}),
              StatusIs(kInvalid, HasSubstr("max_chars: must be an integer")));
}

TEST_F(RecallShapeTest, ALongBodyIsCutToASnippetAroundTheMatchedTerm) {
  Remember("cluster", kLongText);
  ASSERT_OK_AND_ASSIGN(
      json r, Call("recall", {{"query", "Kubernetes"}, {"mode", "fts5"}, {"max_chars", 100}}));
  ASSERT_THAT(r["items"], SizeIs(1));
  const json& item = r["items"][0];
  EXPECT_EQ(item["cut"], true);
  EXPECT_EQ(item["body_chars"], 612);  // Code points; the text is 1212 bytes.
  EXPECT_FALSE(item.contains("body"));
  EXPECT_FALSE(item.contains("body_json"));
  const std::string snippet = item["snippet"];
  EXPECT_EQ(CodePoints(snippet), 100u);
  EXPECT_TRUE(IsUtf8(snippet));
  ASSERT_THAT(snippet, HasSubstr("kubernetes"));
  // The term's centre is the snippet's.
  EXPECT_EQ(CodePointOffset(snippet, "kubernetes"), 45u);
  // The other fields are all there.
  EXPECT_EQ(item["key"], "cluster");
  EXPECT_TRUE(item.contains("score"));
}

TEST_F(RecallShapeTest, AMultiByteBodyIsCutBetweenCharacters) {
  Remember("jp", Repeat("雪", 200) + "データベース" + Repeat("雨", 200));
  ASSERT_OK_AND_ASSIGN(
      json r, Call("recall", {{"query", "データベース"}, {"mode", "fts5"}, {"max_chars", 41}}));
  ASSERT_THAT(r["items"], SizeIs(1));
  const std::string snippet = r["items"][0]["snippet"];
  EXPECT_TRUE(IsUtf8(snippet));
  EXPECT_EQ(CodePoints(snippet), 41u);
  EXPECT_THAT(snippet, HasSubstr("デー"));
  EXPECT_EQ(r["items"][0]["body_chars"], 406);
}

TEST_F(RecallShapeTest, AShortBodyIsUntouched) {
  Remember("editor", {{"text", "vim with many plugins"}});
  ASSERT_OK_AND_ASSIGN(json plain, Call("recall", {{"query", "plugins"}, {"mode", "fts5"}}));
  ASSERT_OK_AND_ASSIGN(json capped,
                       Call("recall", {{"query", "plugins"}, {"mode", "fts5"}, {"max_chars", 40}}));
  EXPECT_EQ(capped, plain);
  EXPECT_EQ(capped["items"][0]["body_json"], R"({"text":"vim with many plugins"})");
}

TEST_F(RecallShapeTest, FieldsReturnOnlyThoseFieldsAndTheId) {
  Remember("editor", {{"text", "vim with many plugins"}});
  ASSERT_OK_AND_ASSIGN(
      json r, Call("recall",
                   {{"query", "plugins"}, {"mode", "fts5"}, {"fields", {"key", "body", "score"}}}));
  ASSERT_THAT(r["items"], SizeIs(1));
  std::set<std::string> names;
  for (const auto& [name, value] : r["items"][0].items()) names.insert(name);
  EXPECT_EQ(names, std::set<std::string>({"id", "key", "body", "score"}));
  EXPECT_EQ(r["items"][0]["body"], json({{"text", "vim with many plugins"}}));
  EXPECT_EQ(r["total"], 1);
  EXPECT_EQ(r["mode"], "fts5");
}

TEST_F(RecallShapeTest, PerseusNamesNeitherListNorReadFieldsOrMaxChars) {
  Remember("cluster", kLongText);
  ASSERT_OK_AND_ASSIGN(json plain, Call("perseus_vault_recall", {{"query", "kubernetes"}}));
  ASSERT_OK_AND_ASSIGN(
      json asked, Call("perseus_vault_recall",
                       {{"query", "kubernetes"}, {"fields", {"key", "bdy"}}, {"max_chars", 1}}));
  EXPECT_EQ(asked, plain);
  EXPECT_TRUE(plain["items"][0].contains("body_json"));

  ToolRegistry perseus(store_.get(), RegistryOptions{.list_perseus_names = true});
  for (const json& tool : perseus.List()) {
    if (tool["name"] != "perseus_vault_recall") continue;
    EXPECT_FALSE(tool["inputSchema"]["properties"].contains("fields"));
    EXPECT_FALSE(tool["inputSchema"]["properties"].contains("max_chars"));
  }
  for (const json& tool : registry_->List()) {
    if (tool["name"] != "recall") continue;
    EXPECT_TRUE(tool["inputSchema"]["properties"].contains("fields"));
    EXPECT_TRUE(tool["inputSchema"]["properties"].contains("max_chars"));
    EXPECT_EQ(tool["outputSchema"]["properties"]["items"]["items"]["required"], json({"id"}));
  }
}

}  // namespace
}  // namespace strata::tools
