// tools::Args: the types each reader accepts, the numeric strings and time texts it converts,
// and an error for every kind of bad argument that names the argument, the rule and the value.

#include "tools/args.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "testing/status_matchers.h"
#include "tools/limits.h"

namespace strata::tools {
namespace {

using ::strata::testing::IsOkAndHolds;
using ::nlohmann::json;
using ::strata::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

// Matches an OK StatusOr whose value matches `matcher`.
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr int64_t kMarch1 = 1772323200000;  // 2026-03-01T00:00:00Z

// Has / Raw.

TEST(ArgsHas, PresentMembersAreSeenAndNullMembersCountAsAbsent) {
  const json object = {{"category", "c"}, {"key", nullptr}};
  const Args args(object);
  EXPECT_TRUE(args.Has("category"));
  EXPECT_FALSE(args.Has("key"));
  EXPECT_FALSE(args.Has("missing"));
  EXPECT_EQ(args.Raw("key"), nullptr);
  ASSERT_NE(args.Raw("category"), nullptr);
  EXPECT_EQ(*args.Raw("category"), "c");
}

TEST(ArgsHas, ANonObjectHasNoMembers) {
  const json array = json::array({"category"});
  const Args args(array);
  EXPECT_FALSE(args.Has("category"));
  EXPECT_EQ(args.Raw("category"), nullptr);
  EXPECT_THAT(args.RequiredString("category"), StatusIs(kInvalid, HasSubstr("category: required")));
}

// RequiredString / OptionalString.

TEST(ArgsRequiredString, ReturnsTheString) {
  const json object = {{"category", "preference"}};
  ASSERT_OK_AND_ASSIGN(std::string category, Args(object).RequiredString("category"));
  EXPECT_EQ(category, "preference");
}

TEST(ArgsRequiredString, AnEmptyStringIsAString) {
  const json object = {{"workspace", ""}};
  ASSERT_OK_AND_ASSIGN(std::string workspace, Args(object).RequiredString("workspace"));
  EXPECT_EQ(workspace, "");
}

TEST(ArgsRequiredString, AbsentIsRequiredError) {
  const json object = json::object();
  EXPECT_THAT(Args(object).RequiredString("key"), StatusIs(kInvalid, "key: required"));
}

TEST(ArgsRequiredString, NullIsRequiredError) {
  const json object = {{"key", nullptr}};
  EXPECT_THAT(Args(object).RequiredString("key"), StatusIs(kInvalid, "key: required"));
}

TEST(ArgsRequiredString, WrongTypesNameTheArgumentAndTheType) {
  const struct {
    json value;
    const char* type_name;
  } cases[] = {
      {json(42), "an integer"},
      {json(1.5), "a number"},
      {json(true), "a boolean"},
      {json::array({"a"}), "an array"},
      {json::object({{"a", 1}}), "an object"},
  };
  for (const auto& c : cases) {
    const json object = {{"key", c.value}};
    EXPECT_THAT(
        Args(object).RequiredString("key"),
        StatusIs(kInvalid, AllOf(HasSubstr("key: must be a string"), HasSubstr(c.type_name))))
        << c.value.dump();
  }
}

TEST(ArgsOptionalString, AbsentAndNullAreNullopt) {
  const json object = {{"type", nullptr}};
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> type, Args(object).OptionalString("type"));
  EXPECT_EQ(type, std::nullopt);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> source, Args(object).OptionalString("source"));
  EXPECT_EQ(source, std::nullopt);
}

TEST(ArgsOptionalString, ReturnsThePresentString) {
  const json object = {{"type", "decision"}};
  EXPECT_THAT(Args(object).OptionalString("type"), IsOkAndHolds(Optional(std::string("decision"))));
}

TEST(ArgsOptionalString, AWrongTypeIsAnErrorNamingTheArgument) {
  const json object = {{"type", 7}};
  EXPECT_THAT(Args(object).OptionalString("type"),
              StatusIs(kInvalid, "type: must be a string, got an integer"));
}

// String lengths (tools/limits.h).

TEST(ArgsStringLength, EveryNamedArgumentTakesItsBoundAndRefusesOneByteMore) {
  const struct {
    const char* name;
    size_t max_bytes;
  } cases[] = {
      {"category", kMaxCategoryBytes}, {"batch_category", kMaxCategoryBytes},
      {"key", kMaxKeyBytes},           {"workspace", kMaxWorkspaceBytes},
      {"type", kMaxTypeBytes},         {"source", kMaxSourceBytes},
      {"reason", kMaxReasonBytes},     {"query", kMaxQueryBytes},
      {"mode", kMaxOtherStringBytes},  {"anything_else", kMaxOtherStringBytes},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(MaxStringBytes(c.name), c.max_bytes) << c.name;
    const json at_bound = {{c.name, std::string(c.max_bytes, 'a')}};
    EXPECT_THAT(Args(at_bound).RequiredString(c.name), IsOkAndHolds(std::string(c.max_bytes, 'a')))
        << c.name;
    EXPECT_THAT(Args(at_bound).OptionalString(c.name), IsOkAndHolds(Optional(::testing::_)))
        << c.name;
    const json over = {{c.name, std::string(c.max_bytes + 1, 'a')}};
    const std::string message =
        absl::StrCat(c.name, ": at most ", c.max_bytes, " bytes, got ", c.max_bytes + 1);
    EXPECT_THAT(Args(over).RequiredString(c.name), StatusIs(kInvalid, message));
    EXPECT_THAT(Args(over).OptionalString(c.name), StatusIs(kInvalid, message));
  }
}

TEST(ArgsStringLength, CountsBytesNotCharacters) {
  std::string category;
  while (category.size() + 2 <= kMaxCategoryBytes) category += "\xC3\xA9";  // é
  const json fits = {{"category", category}};
  EXPECT_THAT(Args(fits).RequiredString("category"), IsOkAndHolds(category));
  const json over = {{"category", category + "\xC3\xA9"}};
  EXPECT_THAT(Args(over).RequiredString("category"),
              StatusIs(kInvalid, HasSubstr("category: at most 256 bytes, got 258")));
}

// OptionalInt.

TEST(ArgsOptionalInt, AcceptsAnInteger) {
  const json object = {{"limit", 25}};
  EXPECT_THAT(Args(object).OptionalInt("limit", 1, 1000), IsOkAndHolds(Optional(int64_t{25})));
}

TEST(ArgsOptionalInt, AcceptsNumericStrings) {
  const struct {
    const char* text;
    int64_t value;
  } cases[] = {{"25", 25}, {"+7", 7}, {"-3", -3}, {"0", 0}};
  for (const auto& c : cases) {
    const json object = {{"n", c.text}};
    EXPECT_THAT(Args(object).OptionalInt("n", -10, 1000), IsOkAndHolds(Optional(c.value)))
        << c.text;
  }
}

TEST(ArgsOptionalInt, AcceptsIntegralFloats) {
  const json object = {{"id", 1.7e12}, {"limit", 10.0}};
  const Args args(object);
  EXPECT_THAT(args.OptionalInt("id", 1, INT64_MAX), IsOkAndHolds(Optional(int64_t{1700000000000})));
  EXPECT_THAT(args.OptionalInt("limit", 1, 1000), IsOkAndHolds(Optional(int64_t{10})));
}

TEST(ArgsOptionalInt, AcceptsTheBoundsThemselves) {
  const json object = {{"low", 1}, {"high", 1000}};
  const Args args(object);
  EXPECT_THAT(args.OptionalInt("low", 1, 1000), IsOkAndHolds(Optional(int64_t{1})));
  EXPECT_THAT(args.OptionalInt("high", 1, 1000), IsOkAndHolds(Optional(int64_t{1000})));
}

TEST(ArgsOptionalInt, AbsentAndNullAreNullopt) {
  const json object = {{"limit", nullptr}};
  EXPECT_THAT(Args(object).OptionalInt("limit", 1, 1000), IsOkAndHolds(std::optional<int64_t>()));
  EXPECT_THAT(Args(object).OptionalInt("offset", 0, 10), IsOkAndHolds(std::optional<int64_t>()));
}

TEST(ArgsOptionalInt, RejectsANonNumericString) {
  const json object = {{"limit", "ten"}};
  EXPECT_THAT(Args(object).OptionalInt("limit", 1, 1000),
              StatusIs(kInvalid, "limit: must be an integer, got \"ten\""));
}

TEST(ArgsOptionalInt, RejectsMalformedNumericStrings) {
  for (const char* text :
       {"", "-", "+", "1.5", "1e3", " 5", "5 ", "0x10", "99999999999999999999"}) {
    const json object = {{"limit", text}};
    EXPECT_THAT(Args(object).OptionalInt("limit", INT64_MIN, INT64_MAX),
                StatusIs(kInvalid, HasSubstr("limit: must be an integer")))
        << '"' << text << '"';
  }
}

TEST(ArgsOptionalInt, RejectsAFraction) {
  const json object = {{"limit", 1.5}};
  EXPECT_THAT(Args(object).OptionalInt("limit", 1, 1000),
              StatusIs(kInvalid, "limit: must be an integer, got 1.5"));
}

TEST(ArgsOptionalInt, RejectsOtherTypesNamingTheArgument) {
  for (const json& value : {json(true), json::array({1}), json::object({{"n", 1}})}) {
    const json object = {{"offset", value}};
    EXPECT_THAT(Args(object).OptionalInt("offset", 0, 10),
                StatusIs(kInvalid, HasSubstr("offset: must be an integer, got ")))
        << value.dump();
  }
}

TEST(ArgsOptionalInt, RejectsIntegersBeyondInt64) {
  const json object = {{"id", UINT64_MAX}, {"big", 1e19}};
  const Args args(object);
  EXPECT_THAT(args.OptionalInt("id", 1, INT64_MAX),
              StatusIs(kInvalid, HasSubstr("id: must be an integer")));
  EXPECT_THAT(args.OptionalInt("big", 1, INT64_MAX),
              StatusIs(kInvalid, HasSubstr("big: must be an integer")));
}

TEST(ArgsOptionalInt, OutOfRangeNamesTheArgumentTheRangeAndTheValue) {
  const json object = {{"limit", 5000}};
  EXPECT_THAT(Args(object).OptionalInt("limit", 1, 1000),
              StatusIs(kInvalid, "limit: must be between 1 and 1000, got 5000"));
}

TEST(ArgsOptionalInt, OutOfRangeAppliesToNumericStringsAndBelowTheMinimum) {
  const json object = {{"limit", "0"}, {"offset", -1}};
  const Args args(object);
  EXPECT_THAT(args.OptionalInt("limit", 1, 1000),
              StatusIs(kInvalid, "limit: must be between 1 and 1000, got 0"));
  EXPECT_THAT(args.OptionalInt("offset", 0, 100),
              StatusIs(kInvalid, "offset: must be between 0 and 100, got -1"));
}

TEST(ArgsOptionalInt, ALongShownValueIsShortened) {
  const json object = {{"limit", std::string(200, 'x')}};
  absl::StatusOr<std::optional<int64_t>> limit = Args(object).OptionalInt("limit", 1, 1000);
  ASSERT_THAT(limit, StatusIs(kInvalid, HasSubstr("limit: must be an integer")));
  EXPECT_LT(limit.status().message().size(), 120u);
  EXPECT_THAT(std::string(limit.status().message()), HasSubstr("..."));
}

// OptionalNumber.

TEST(ArgsOptionalNumber, AcceptsNumbersIntegersAndNumericStrings) {
  const json object = {{"a", 0.25}, {"b", 3}, {"c", "0.5"}, {"d", "-2e1"}};
  const Args args(object);
  EXPECT_THAT(args.OptionalNumber("a"), IsOkAndHolds(Optional(0.25)));
  EXPECT_THAT(args.OptionalNumber("b"), IsOkAndHolds(Optional(3.0)));
  EXPECT_THAT(args.OptionalNumber("c"), IsOkAndHolds(Optional(0.5)));
  EXPECT_THAT(args.OptionalNumber("d"), IsOkAndHolds(Optional(-20.0)));
  EXPECT_THAT(args.OptionalNumber("absent"), IsOkAndHolds(std::optional<double>()));
}

TEST(ArgsOptionalNumber, RejectsTextNonFiniteAndOtherTypes) {
  for (const json& value :
       {json("high"), json(""), json("nan"), json("inf"), json("1x"), json(true), json::array()}) {
    const json object = {{"importance", value}};
    EXPECT_THAT(Args(object).OptionalNumber("importance"),
                StatusIs(kInvalid, HasSubstr("importance: must be a number, got ")))
        << value.dump();
  }
}

// OptionalBool.

TEST(ArgsOptionalBool, AcceptsBooleansAndTheirStrings) {
  const json object = {{"a", true}, {"b", false}, {"c", "true"}, {"d", "false"}};
  const Args args(object);
  EXPECT_THAT(args.OptionalBool("a"), IsOkAndHolds(Optional(true)));
  EXPECT_THAT(args.OptionalBool("b"), IsOkAndHolds(Optional(false)));
  EXPECT_THAT(args.OptionalBool("c"), IsOkAndHolds(Optional(true)));
  EXPECT_THAT(args.OptionalBool("d"), IsOkAndHolds(Optional(false)));
}

TEST(ArgsOptionalBool, AbsentAndNullAreNullopt) {
  const json object = {{"dedup", nullptr}};
  EXPECT_THAT(Args(object).OptionalBool("dedup"), IsOkAndHolds(std::optional<bool>()));
  EXPECT_THAT(Args(object).OptionalBool("other"), IsOkAndHolds(std::optional<bool>()));
}

TEST(ArgsOptionalBool, RejectsOtherValuesNamingTheArgumentAndValue) {
  const struct {
    json value;
    const char* message;
  } cases[] = {
      {json(1), "dedup: must be true or false, got 1"},
      {json("yes"), "dedup: must be true or false, got \"yes\""},
      {json("TRUE"), "dedup: must be true or false, got \"TRUE\""},
      {json::object(), "dedup: must be true or false, got {}"},
  };
  for (const auto& c : cases) {
    const json object = {{"dedup", c.value}};
    EXPECT_THAT(Args(object).OptionalBool("dedup"), StatusIs(kInvalid, c.message));
  }
}

// OptionalTime / RequiredTime.

TEST(ArgsOptionalTime, AcceptsUnixMillisecondsAsAnInteger) {
  const json object = {{"as_of", kMarch1}};
  EXPECT_THAT(Args(object).OptionalTime("as_of"), IsOkAndHolds(Optional(kMarch1)));
}

TEST(ArgsOptionalTime, AcceptsAnIntegralFloat) {
  const json object = {{"as_of", 1.7e12}};
  EXPECT_THAT(Args(object).OptionalTime("as_of"), IsOkAndHolds(Optional(int64_t{1700000000000})));
}

TEST(ArgsOptionalTime, AcceptsANumericString) {
  const json object = {{"as_of", "1772323200000"}};
  EXPECT_THAT(Args(object).OptionalTime("as_of"), IsOkAndHolds(Optional(kMarch1)));
}

TEST(ArgsOptionalTime, AcceptsIso8601Strings) {
  const struct {
    const char* text;
    int64_t value;
  } cases[] = {
      {"2026-03-01", kMarch1},
      {"2026-03-01T00:00:00Z", kMarch1},
      {"2026-03-01T12:00:00Z", kMarch1 + 12 * 3600 * 1000},
      {"2026-03-01T12:00:00.250Z", kMarch1 + 12 * 3600 * 1000 + 250},
      {"2026-03-01T12:00:00+02:00", kMarch1 + 10 * 3600 * 1000},
  };
  for (const auto& c : cases) {
    const json object = {{"valid_at", c.text}};
    EXPECT_THAT(Args(object).OptionalTime("valid_at"), IsOkAndHolds(Optional(c.value))) << c.text;
  }
}

TEST(ArgsOptionalTime, AbsentAndNullAreNullopt) {
  const json object = {{"as_of", nullptr}};
  EXPECT_THAT(Args(object).OptionalTime("as_of"), IsOkAndHolds(std::optional<int64_t>()));
  EXPECT_THAT(Args(object).OptionalTime("valid_at"), IsOkAndHolds(std::optional<int64_t>()));
}

TEST(ArgsOptionalTime, RejectsGarbageTextNamingTheArgument) {
  for (const char* text : {"yesterday", "", "2026-13-01", "2026-03-01T25:00:00Z", "12abc"}) {
    const json object = {{"valid_from", text}};
    EXPECT_THAT(Args(object).OptionalTime("valid_from"),
                StatusIs(kInvalid, AllOf(HasSubstr("valid_from: "), HasSubstr("ISO-8601"))))
        << '"' << text << '"';
  }
}

TEST(ArgsOptionalTime, RejectsObjectsArraysBooleansAndFractionsNamingTheArgument) {
  for (const json& value : {json::object({{"ms", 1}}), json::array({1}), json(true), json(1.5)}) {
    const json object = {{"as_of", value}};
    EXPECT_THAT(Args(object).OptionalTime("as_of"),
                StatusIs(kInvalid, HasSubstr("as_of: must be unix milliseconds or an "
                                             "ISO-8601 time string, got ")))
        << value.dump();
  }
}

TEST(ArgsRequiredTime, ReturnsThePresentTime) {
  const json object = {{"tx_at", "2026-03-01"}};
  EXPECT_THAT(Args(object).RequiredTime("tx_at"), IsOkAndHolds(kMarch1));
}

TEST(ArgsRequiredTime, AbsentOrNullIsRequiredError) {
  const json object = {{"tx_at", nullptr}};
  EXPECT_THAT(Args(object).RequiredTime("tx_at"), StatusIs(kInvalid, "tx_at: required"));
  EXPECT_THAT(Args(object).RequiredTime("valid_at"), StatusIs(kInvalid, "valid_at: required"));
}

TEST(ArgsRequiredTime, PassesOnTheParseError) {
  const json object = {{"tx_at", json::object()}};
  EXPECT_THAT(Args(object).RequiredTime("tx_at"), StatusIs(kInvalid, HasSubstr("tx_at: must be")));
}

// StringList.

TEST(ArgsStringList, AcceptsAnArrayOfStrings) {
  const json object = {{"tags", {"a", "b", "c"}}};
  EXPECT_THAT(Args(object).StringList("tags", 64), IsOkAndHolds(ElementsAre("a", "b", "c")));
}

TEST(ArgsStringList, TakesASingleStringAsOneElement) {
  const json object = {{"tags", "solo"}};
  EXPECT_THAT(Args(object).StringList("tags", 64), IsOkAndHolds(ElementsAre("solo")));
}

TEST(ArgsStringList, AbsentNullAndEmptyAreEmpty) {
  const json object = {{"tags", nullptr}, {"labels", json::array()}};
  const Args args(object);
  EXPECT_THAT(args.StringList("tags", 64), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(args.StringList("labels", 64), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(args.StringList("absent", 64), IsOkAndHolds(IsEmpty()));
}

TEST(ArgsStringList, RejectsANonStringItemNamingTheArgument) {
  const json object = {{"tags", {"a", 2, "c"}}};
  EXPECT_THAT(Args(object).StringList("tags", 64),
              StatusIs(kInvalid, "tags: every item must be a string, got an integer"));
}

TEST(ArgsStringList, RejectsANullItem) {
  const json object = {{"tags", {"a", nullptr}}};
  EXPECT_THAT(Args(object).StringList("tags", 64),
              StatusIs(kInvalid, "tags: every item must be a string, got null"));
}

TEST(ArgsStringList, RejectsNonArraysNamingTheType) {
  const json object = {{"tags", {{"a", 1}}}, {"labels", 5}};
  const Args args(object);
  EXPECT_THAT(args.StringList("tags", 64),
              StatusIs(kInvalid, "tags: must be an array of strings, got an object"));
  EXPECT_THAT(args.StringList("labels", 64),
              StatusIs(kInvalid, "labels: must be an array of strings, got an integer"));
}

TEST(ArgsStringList, RejectsMoreThanMaxItems) {
  const json object = {{"tags", {"a", "b", "c"}}};
  const Args args(object);
  EXPECT_THAT(args.StringList("tags", 2), StatusIs(kInvalid, "tags: at most 2 items, got 3"));
  EXPECT_THAT(args.StringList("tags", 3), IsOkAndHolds(ElementsAre("a", "b", "c")));
}

TEST(ArgsStringList, EachItemTakesTheBoundOfItsListAndNotOneByteMore) {
  const std::string longest(kMaxTagBytes, 't');
  const json fits = {{"tags", {"a", longest}}};
  EXPECT_THAT(Args(fits).StringList("tags", kMaxTags), IsOkAndHolds(ElementsAre("a", longest)));
  const std::string message =
      absl::StrCat("tags: each item at most ", kMaxTagBytes, " bytes, got ", kMaxTagBytes + 1);
  const json over = {{"tags", {"a", longest + "t"}}};
  EXPECT_THAT(Args(over).StringList("tags", kMaxTags), StatusIs(kInvalid, message));
  const json single = {{"tags", longest + "t"}};
  EXPECT_THAT(Args(single).StringList("tags", kMaxTags), StatusIs(kInvalid, message));
}

TEST(ArgsStringList, TakesMaxItemsAndNotOneMore) {
  json tags = json::array();
  for (size_t i = 0; i < kMaxTags; ++i) tags.push_back(absl::StrCat("t", i));
  const json fits = {{"tags", tags}};
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> got, Args(fits).StringList("tags", kMaxTags));
  EXPECT_EQ(got.size(), kMaxTags);
  tags.push_back("one-more");
  const json over = {{"tags", tags}};
  EXPECT_THAT(
      Args(over).StringList("tags", kMaxTags),
      StatusIs(kInvalid, absl::StrCat("tags: at most ", kMaxTags, " items, got ", kMaxTags + 1)));
}

// JsonTypeName.

TEST(JsonTypeName, NamesEveryJsonType) {
  EXPECT_STREQ(JsonTypeName(json(nullptr)), "null");
  EXPECT_STREQ(JsonTypeName(json(false)), "a boolean");
  EXPECT_STREQ(JsonTypeName(json("s")), "a string");
  EXPECT_STREQ(JsonTypeName(json::array()), "an array");
  EXPECT_STREQ(JsonTypeName(json::object()), "an object");
  EXPECT_STREQ(JsonTypeName(json(0.5)), "a number");
  EXPECT_STREQ(JsonTypeName(json(-3)), "an integer");
  EXPECT_STREQ(JsonTypeName(json(3u)), "an integer");
}

}  // namespace
}  // namespace strata::tools
