#include "text/body_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_split.h"
#include "testing/status_matchers.h"

namespace strata::text {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

// BodyText's lines.
std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n'); }

TEST(BodyText, BareJsonStringIsItsValue) {
  EXPECT_EQ(BodyText(R"("prefers dark mode")"), "prefers dark mode");
}

TEST(BodyText, DecodesJsonEscapes) {
  EXPECT_EQ(BodyText(R"("caf\u00e9 \"quoted\" tab\tend")"), "caf\xc3\xa9 \"quoted\" tab\tend");
}

TEST(BodyText, ObjectGivesItsStringValuesNotItsKeys) {
  const std::string text = BodyText(R"({"title": "Rust", "summary": "a systems language"})");
  EXPECT_THAT(Lines(text), UnorderedElementsAre("Rust", "a systems language"));
  EXPECT_THAT(text, Not(HasSubstr("title")));
  EXPECT_THAT(text, Not(HasSubstr("summary")));
}

TEST(BodyText, ArrayGivesItsStringsInOrder) {
  EXPECT_EQ(BodyText(R"(["one", "two", "three"])"), "one\ntwo\nthree");
}

TEST(BodyText, CollectsDepthFirst) {
  // Each object has one key, so its order is fixed.
  EXPECT_EQ(BodyText(R"(["a", {"k": ["b", {"k": "c"}, "d"]}, "e", [["f"]]])"), "a\nb\nc\nd\ne\nf");
}

TEST(BodyText, NestedObjectsContributeEveryString) {
  const std::string text =
      BodyText(R"({"person": {"name": "Alice", "roles": ["admin", "dev"]}, "note": "hi"})");
  EXPECT_THAT(Lines(text), UnorderedElementsAre("Alice", "admin", "dev", "hi"));
}

TEST(BodyText, ExcludesNumbersBooleansAndNull) {
  EXPECT_EQ(BodyText(R"({"n": 42, "x": 2.5, "t": true, "f": false, "z": null, "s": "kept"})"),
            "kept");
  EXPECT_EQ(BodyText(R"([1, "one", -3e10, "two", null])"), "one\ntwo");
}

TEST(BodyText, NumericStringsAreStrings) { EXPECT_EQ(BodyText(R"({"version": "4.8"})"), "4.8"); }

TEST(BodyText, BodyWithoutStringsIsEmpty) {
  EXPECT_THAT(BodyText("{}"), IsEmpty());
  EXPECT_THAT(BodyText("[]"), IsEmpty());
  EXPECT_THAT(BodyText(R"({"a": 1, "b": [true, null], "c": {}})"), IsEmpty());
  EXPECT_THAT(BodyText("42"), IsEmpty());
  EXPECT_THAT(BodyText("null"), IsEmpty());
}

TEST(BodyText, KeyThatLooksLikeTextIsStillExcluded) {
  EXPECT_EQ(BodyText(R"({"secret keyword": "visible"})"), "visible");
}

TEST(BodyText, IgnoresJsonWhitespace) {
  EXPECT_EQ(BodyText("  [\n  \"a\" ,\r\n\t\"b\"\n]  "), "a\nb");
}

TEST(BodyText, NonJsonIsReturnedAsIs) {
  EXPECT_EQ(BodyText("plain words, not JSON"), "plain words, not JSON");
  EXPECT_EQ(BodyText("{not json"), "{not json");
  EXPECT_EQ(BodyText("'single quoted'"), "'single quoted'");
}

TEST(BodyText, JsonWithTrailingGarbageIsReturnedAsIs) {
  EXPECT_EQ(BodyText(R"({"a": "b"} trailing)"), R"({"a": "b"} trailing)");
}

TEST(BodyText, EmptyBodyIsEmpty) { EXPECT_EQ(BodyText(""), ""); }

TEST(BodyText, InvalidUtf8IsReturnedAsIs) {
  const std::string bytes = "\xff\xfe not utf-8 \x80";
  EXPECT_EQ(BodyText(bytes), bytes);
}

TEST(BodyText, NestingUpToTheLimitIsSearchable) {
  std::string body(kMaxBodyDepth, '[');
  body += "\"deep\"";
  body += std::string(kMaxBodyDepth, ']');
  EXPECT_EQ(BodyText(body), "deep");
}

TEST(BodyText, DeeperNestingIsReturnedAsIsWithoutCrashing) {
  std::string body(100000, '[');
  body += "\"deep\"";
  body += std::string(100000, ']');
  EXPECT_EQ(BodyText(body), body);
}

TEST(ParseBody, RejectsNestingDeeperThanTheLimit) {
  std::string body(kMaxBodyDepth + 1, '[');
  body += std::string(kMaxBodyDepth + 1, ']');
  EXPECT_THAT(ParseBody(body), strata::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                         ::testing::HasSubstr("nested deeper")));
}

TEST(ParseBody, BracketsInsideStringsDoNotCount) {
  std::string text(1000, '[');
  ASSERT_OK_AND_ASSIGN(ParsedBody parsed, ParseBody(nlohmann::json(text).dump()));
  EXPECT_EQ(parsed.text, text);
}

TEST(ParseBody, HashIgnoresWhitespaceAndKeyOrder) {
  ASSERT_OK_AND_ASSIGN(ParsedBody a, ParseBody(R"({"a": 1, "b": "x"})"));
  ASSERT_OK_AND_ASSIGN(ParsedBody b, ParseBody(R"({"b":"x","a":1})"));
  ASSERT_OK_AND_ASSIGN(ParsedBody c, ParseBody(R"({"b":"y","a":1})"));
  EXPECT_EQ(a.normal_hash, b.normal_hash);
  EXPECT_NE(a.normal_hash, c.normal_hash);
}

}  // namespace
}  // namespace strata::text
