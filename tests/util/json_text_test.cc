#include "util/json_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace strata {
namespace {

using nlohmann::json;

// What JsonText promises to equal, byte for byte.
std::string Nlohmann(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// ParseJsonText answers what nlohmann's parser answers: the same value (same text when
// written back), or "not JSON" for the same texts.
void ExpectParsesLikeNlohmann(const std::string& text) {
  const json expected = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const json got = ParseJsonText(text);
  EXPECT_EQ(IsJsonText(text), json::accept(text)) << text;
  ASSERT_EQ(got.is_discarded(), expected.is_discarded()) << text;
  if (expected.is_discarded()) return;
  EXPECT_EQ(got, expected) << text;
  EXPECT_EQ(Nlohmann(got), Nlohmann(expected)) << text;
}

TEST(JsonTextTest, EscapesLikeNlohmann) {
  const json value = {
      {"quote\"back\\slash", "tab\tnew\nline\rcr\bbs\fff"},
      {"controls", std::string("\x01\x1f\x7f nul:\0 end", 13)},
      {"utf8", "caf\xc3\xa9 \xe6\x95\xb0\xe6\x8d\xae \xf0\x9f\x98\x80"},
      {"empty", ""},
      {"nested", {{"array", {1, -2, true, false, nullptr, json::array(), json::object()}}}},
  };
  EXPECT_EQ(JsonText(value), Nlohmann(value));
  EXPECT_EQ(JsonText(value["controls"]), R"("\u0001\u001f)"
                                         "\x7f"
                                         R"( nul:\u0000 end")");
}

TEST(JsonTextTest, NumbersLikeNlohmann) {
  for (const json& number :
       {json(0), json(-1), json(std::numeric_limits<int64_t>::min()),
        json(std::numeric_limits<int64_t>::max()), json(std::numeric_limits<uint64_t>::max()),
        json(0.5), json(-0.0), json(1.0), json(1e300), json(3.0000000000000004), json(1e-7)}) {
    EXPECT_EQ(JsonText(number), Nlohmann(number)) << Nlohmann(number);
  }
}

TEST(JsonTextTest, InvalidUtf8IsReplacedLikeNlohmann) {
  for (const std::string& bad : {
           std::string("\xff"),
           std::string("ok \xc3"),
           std::string("\xc0\xaf"),          // overlong
           std::string("\xed\xa0\x80"),      // surrogate
           std::string("\xf4\x90\x80\x80"),  // above U+10FFFF
           std::string("\xe6\x95 tail"),
           std::string("\x80\"quote"),
       }) {
    const json value = {{"k", bad}, {bad, 1}};
    EXPECT_EQ(JsonText(value), Nlohmann(value));
  }
}

// Random strings over bytes that matter (ASCII, controls, quotes, the UTF-8 lead and
// continuation ranges) and random nesting: any difference from nlohmann is a failure.
TEST(JsonTextTest, RandomValuesMatchNlohmann) {
  std::mt19937 rng(7);
  const std::string alphabet = std::string("ab \"\\/\x01\x1f\x7f\n\t", 11) +
                               "\xc2\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x80\xbf\xc0\xed\xf4\xff";
  auto random_string = [&] {
    std::string s;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  std::function<json(int)> random_value = [&](int depth) -> json {
    switch (rng() % (depth > 3 ? 5 : 7)) {
      case 0:
        return nullptr;
      case 1:
        return static_cast<int64_t>(rng()) - (1 << 30);
      case 2:
        return static_cast<double>(rng()) / 7.0;
      case 3:
        return rng() % 2 == 0;
      case 4:
        return random_string();
      case 5: {
        json a = json::array();
        for (int i = static_cast<int>(rng() % 4); i > 0; --i) a.push_back(random_value(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (int i = static_cast<int>(rng() % 4); i > 0; --i)
          o[random_string()] = random_value(depth + 1);
        return o;
      }
    }
  };
  for (int i = 0; i < 20000; ++i) {
    const json value = random_value(0);
    ASSERT_EQ(JsonText(value), Nlohmann(value)) << "case " << i;
    ExpectParsesLikeNlohmann(Nlohmann(value));
  }
}

// The eight-bytes-at-a-time scan: one byte that needs care at every place of plain runs.
TEST(JsonTextTest, OneSpecialByteAnywhereInAPlainRun) {
  for (const std::string special :
       {"\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xff", "\xc3"}) {
    for (size_t length = 0; length <= 24; ++length) {
      for (size_t at = 0; at <= length; ++at) {
        std::string text(length, 'a');
        text.insert(at, special);
        ASSERT_EQ(JsonText(json(text)), Nlohmann(json(text))) << length << " " << at;
      }
    }
  }
}

TEST(JsonTextTest, ParsesEdgeCasesLikeNlohmann) {
  for (const std::string& text : std::vector<std::string>{
           "-0", "-0.0", "0", "[0,-0,1.0,1e2,-1e-2]", "1e400", "-1e400",
           "18446744073709551615", "18446744073709551616", "-9223372036854775808",
           "-9223372036854775809", "123456789012345678901234567890", R"({"a":1,"a":2})",
           "\xef\xbb\xbf{}", "{} x", "", "  ", " [1] ", "[1,]", R"({"a":})", "nul", "tru",
           R"("\u0000")", R"("\ud83d\ude00")", R"("\ud800")", R"("\udc00x")", R"("\ud800\u0041")",
           "\"\x01\"", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", R"("\x")", "'a'",
           std::string(2000, '[') + std::string(2000, ']'), "[1e-400]", "0.1", "1E+2", "01",
           "-", "1.", ".5", "\t{\n\"k\"\r:\"v\"}",
       }) {
    ExpectParsesLikeNlohmann(text);
  }
}

TEST(JsonTextTest, ParsesRandomTextsLikeNlohmann) {
  std::mt19937 rng(11);
  const std::string alphabet = R"( {}[]",:\/u0123456789abcdefntrl.-+eE)" "\xc3\xa9\xff";
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 24);
    for (int j = 0; j < n; ++j) text += alphabet[rng() % alphabet.size()];
    ExpectParsesLikeNlohmann(text);
  }
}

TEST(JsonParserTest, SaysWhyATextIsNotJson) {
  JsonParser parser(/*max_depth=*/4);
  EXPECT_EQ(parser.Parse("\"\xff\"").status().message(), "the message is not valid UTF-8");
  EXPECT_EQ(parser.Parse("[[[[[1]]]]]").status().message(), "JSON nested deeper than 4 levels");
  EXPECT_TRUE(absl::StartsWith(parser.Parse("{").status().message(), "not valid JSON ("));
  ASSERT_TRUE(parser.Parse(R"({"a":[1,"b"]})").ok());
  EXPECT_EQ(*parser.Parse(R"({"a":[1,"b"]})"), json({{"a", {1, "b"}}}));
}

TEST(JsonTextTest, AppendsAfterWhatIsThere) {
  std::string out = "x=";
  AppendJsonText(json{{"a", "b\"c"}}, out);
  AppendJsonString("\xff", out);
  EXPECT_EQ(out, "x={\"a\":\"b\\\"c\"}\"\xef\xbf\xbd\"");
}

}  // namespace
}  // namespace strata
