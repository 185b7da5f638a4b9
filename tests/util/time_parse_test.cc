#include "util/time_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

constexpr int64_t kMarch1st2026 = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kMinuteMs = 60 * 1000;
constexpr int64_t kDayMs = 24 * kHourMs;
constexpr int64_t kNoon = kMarch1st2026 + 12 * kHourMs;

// The first and last instants whose year FormatUnixMs writes with four digits.
constexpr int64_t kYear0000 = -62167219200000;     // 0000-01-01T00:00:00.000Z
constexpr int64_t kYear9999End = 253402300799999;  // 9999-12-31T23:59:59.999Z

// Asserts that `text` is refused with InvalidArgument and that the message names the argument.
void ExpectRejected(const std::string& text) {
  const absl::StatusOr<int64_t> result = ParseTimeText(text, "valid_from");
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_from")))
      << "input: \"" << text << "\", parsed as "
      << (result.ok() ? std::to_string(*result) + " (" + FormatUnixMs(*result) + ")" : "-");
}

TEST(ParseTimeText, AcceptsPositiveInteger) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("1767225600000", "t"));
  EXPECT_EQ(t, 1767225600000);
}

TEST(ParseTimeText, AcceptsZero) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("0", "t"));
  EXPECT_EQ(t, 0);
}

TEST(ParseTimeText, AcceptsNegativeInteger) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("-86400000", "t"));
  EXPECT_EQ(t, -86400000);
}

TEST(ParseTimeText, AcceptsExplicitPlusSign) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("+42", "t"));
  EXPECT_EQ(t, 42);
}

TEST(ParseTimeText, AcceptsLeadingZeros) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("000123", "t"));
  EXPECT_EQ(t, 123);
}

TEST(ParseTimeText, AcceptsInt64Max) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("9223372036854775807", "t"));
  EXPECT_EQ(t, std::numeric_limits<int64_t>::max());
}

TEST(ParseTimeText, AcceptsInt64Min) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("-9223372036854775808", "t"));
  EXPECT_EQ(t, std::numeric_limits<int64_t>::min());
}

TEST(ParseTimeText, RejectsOneAboveInt64Max) { ExpectRejected("9223372036854775808"); }

TEST(ParseTimeText, RejectsOneBelowInt64Min) { ExpectRejected("-9223372036854775809"); }

TEST(ParseTimeText, RejectsIntegersFarOutOfRange) {
  ExpectRejected("99999999999999999999999999");
  ExpectRejected("-99999999999999999999999999");
  ExpectRejected("18446744073709551616");  // 2^64: must not wrap around to 0.
}

TEST(ParseTimeText, RejectsSignWithoutDigits) {
  ExpectRejected("-");
  ExpectRejected("+");
  ExpectRejected("--5");
  ExpectRejected("+-5");
}

TEST(ParseTimeText, RejectsNonIntegerNumbers) {
  ExpectRejected("1.5");
  ExpectRejected("1e12");
  ExpectRejected("0x10");
  ExpectRejected("12 34");
}

TEST(ParseTimeText, TrimsSurroundingSpacesAndTabs) {
  ASSERT_OK_AND_ASSIGN(const int64_t a, ParseTimeText("  \t1000\t ", "t"));
  EXPECT_EQ(a, 1000);
  ASSERT_OK_AND_ASSIGN(const int64_t b, ParseTimeText(" 2026-03-01 ", "t"));
  EXPECT_EQ(b, kMarch1st2026);
}

TEST(ParseTimeText, AcceptsDateAsMidnightUtc) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01", "t"));
  EXPECT_EQ(t, kMarch1st2026);
}

TEST(ParseTimeText, AcceptsEpochDate) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("1970-01-01", "t"));
  EXPECT_EQ(t, 0);
}

TEST(ParseTimeText, AcceptsDateBeforeEpoch) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("1969-12-31T23:59:59Z", "t"));
  EXPECT_EQ(t, -1000);
  ASSERT_OK_AND_ASSIGN(const int64_t first_ce, ParseTimeText("0001-01-01", "t"));
  EXPECT_EQ(first_ce, -62135596800000);
}

TEST(ParseTimeText, AcceptsUtcDateTimeWithZ) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00Z", "t"));
  EXPECT_EQ(t, kNoon);
}

TEST(ParseTimeText, AcceptsLowercaseTAndZ) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01t12:00:00z", "t"));
  EXPECT_EQ(t, kNoon);
}

TEST(ParseTimeText, AcceptsSpaceAsDateTimeSeparator) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01 12:00:00Z", "t"));
  EXPECT_EQ(t, kNoon);
}

TEST(ParseTimeText, TreatsDateTimeWithoutZoneAsUtc) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00", "t"));
  EXPECT_EQ(t, kNoon);
}

TEST(ParseTimeText, AcceptsDateTimeWithoutSeconds) {
  ASSERT_OK_AND_ASSIGN(const int64_t a, ParseTimeText("2026-03-01T12:34", "t"));
  EXPECT_EQ(a, kNoon + 34 * kMinuteMs);
  ASSERT_OK_AND_ASSIGN(const int64_t b, ParseTimeText("2026-03-01T12:34Z", "t"));
  EXPECT_EQ(b, kNoon + 34 * kMinuteMs);
  ASSERT_OK_AND_ASSIGN(const int64_t c, ParseTimeText("2026-03-01T12:34+01:00", "t"));
  EXPECT_EQ(c, kNoon + 34 * kMinuteMs - kHourMs);
}

TEST(ParseTimeText, AcceptsPositiveUtcOffsetWithColon) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00+02:00", "t"));
  EXPECT_EQ(t, kNoon - 2 * kHourMs);
}

TEST(ParseTimeText, AcceptsNegativeUtcOffsetWithColon) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00-02:00", "t"));
  EXPECT_EQ(t, kNoon + 2 * kHourMs);
}

TEST(ParseTimeText, AcceptsUtcOffsetWithoutColon) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00-0530", "t"));
  EXPECT_EQ(t, kNoon + 5 * kHourMs + 30 * kMinuteMs);
  ASSERT_OK_AND_ASSIGN(const int64_t u, ParseTimeText("2026-03-01T12:00:00+0530", "t"));
  EXPECT_EQ(u, kNoon - 5 * kHourMs - 30 * kMinuteMs);
}

TEST(ParseTimeText, ZeroOffsetEqualsZ) {
  ASSERT_OK_AND_ASSIGN(const int64_t plus, ParseTimeText("2026-03-01T12:00:00+00:00", "t"));
  ASSERT_OK_AND_ASSIGN(const int64_t minus, ParseTimeText("2026-03-01T12:00:00-00:00", "t"));
  EXPECT_EQ(plus, kNoon);
  EXPECT_EQ(minus, kNoon);
}

TEST(ParseTimeText, OffsetCanCrossMidnightIntoPreviousDay) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T01:00:00+02:00", "t"));
  EXPECT_EQ(t, kMarch1st2026 - kHourMs);
  EXPECT_EQ(FormatUnixMs(t), "2026-02-28T23:00:00.000Z");
}

TEST(ParseTimeText, AcceptsOneDigitFraction) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00.5Z", "t"));
  EXPECT_EQ(t, kNoon + 500);
}

TEST(ParseTimeText, AcceptsMillisecondFraction) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00.123Z", "t"));
  EXPECT_EQ(t, kNoon + 123);
}

TEST(ParseTimeText, TruncatesFractionBeyondMilliseconds) {
  ASSERT_OK_AND_ASSIGN(const int64_t a, ParseTimeText("2026-03-01T12:00:00.123456Z", "t"));
  EXPECT_EQ(a, kNoon + 123);
  ASSERT_OK_AND_ASSIGN(const int64_t b, ParseTimeText("2026-03-01T12:00:00.999999999", "t"));
  EXPECT_EQ(b, kNoon + 999);
}

TEST(ParseTimeText, AcceptsFractionWithoutZone) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00.25", "t"));
  EXPECT_EQ(t, kNoon + 250);
}

TEST(ParseTimeText, AcceptsFractionFollowedByOffset) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00.123456+02:00", "t"));
  EXPECT_EQ(t, kNoon - 2 * kHourMs + 123);
}

TEST(ParseTimeText, AcceptsCommaAsDecimalSign) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-03-01T12:00:00,5Z", "t"));
  EXPECT_EQ(t, kNoon + 500);
}

TEST(ParseTimeText, FractionBeforeEpochAddsToTheSecond) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("1969-12-31T23:59:59.5Z", "t"));
  EXPECT_EQ(t, -500);
}

TEST(ParseTimeText, AcceptsLastMomentOfTheDay) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-02-28T23:59:59.999Z", "t"));
  EXPECT_EQ(t, kMarch1st2026 - 1);
}

TEST(ParseTimeText, AcceptsFebruary29InLeapYears) {
  ASSERT_OK_AND_ASSIGN(const int64_t y2024, ParseTimeText("2024-02-29", "t"));
  EXPECT_EQ(y2024, 1709164800000);
  ASSERT_OK_AND_ASSIGN(const int64_t y2000, ParseTimeText("2000-02-29", "t"));
  EXPECT_EQ(y2000, 951782400000);
}

TEST(ParseTimeText, RejectsFebruary29InCommonYears) {
  ExpectRejected("2026-02-29");
  ExpectRejected("1900-02-29");  // Divisible by 100 but not by 400.
  ExpectRejected("2100-02-29T00:00:00Z");
}

TEST(ParseTimeText, RejectsFebruary30EvenInLeapYears) { ExpectRejected("2024-02-30"); }

TEST(ParseTimeText, RejectsDay31InThirtyDayMonths) {
  ExpectRejected("2026-04-31");
  ExpectRejected("2026-06-31");
  ExpectRejected("2026-09-31");
  ExpectRejected("2026-11-31");
}

TEST(ParseTimeText, AcceptsDay31InThirtyOneDayMonths) {
  ASSERT_OK_AND_ASSIGN(const int64_t t, ParseTimeText("2026-01-31", "t"));
  EXPECT_EQ(t, kMarch1st2026 - 29 * kDayMs);
}

TEST(ParseTimeText, RejectsMonth13AndMonth0) {
  ExpectRejected("2026-13-01");
  ExpectRejected("2026-00-01");
}

TEST(ParseTimeText, RejectsDay32AndDay0) {
  ExpectRejected("2026-01-32");
  ExpectRejected("2026-01-00");
}

TEST(ParseTimeText, RejectsOutOfRangeTimeOfDay) {
  ExpectRejected("2026-03-01T24:00:00Z");
  ExpectRejected("2026-03-01T12:60:00Z");
  ExpectRejected("2026-03-01T12:00:61Z");
  ExpectRejected("2026-03-01T99:99:99Z");
}

TEST(ParseTimeText, RejectsOutOfRangeUtcOffsets) {
  ExpectRejected("2026-03-01T12:00:00+24:00");
  ExpectRejected("2026-03-01T12:00:00+02:60");
}

TEST(ParseTimeText, RejectsMalformedUtcOffsets) {
  ExpectRejected("2026-03-01T12:00:00+");
  ExpectRejected("2026-03-01T12:00:00-");
  ExpectRejected("2026-03-01T12:00:00+2");
  ExpectRejected("2026-03-01T12:00:00+02");
  ExpectRejected("2026-03-01T12:00:00+02:0");
  ExpectRejected("2026-03-01T12:00:00+0a:00");
  ExpectRejected("2026-03-01T12:00:00+02:00:00");
}

TEST(ParseTimeText, RejectsMalformedDates) {
  ExpectRejected("2026-03");
  ExpectRejected("2026-3-1");
  ExpectRejected("26-03-01");
  ExpectRejected("2026/03/01");
  ExpectRejected("20260301T120000Z");
  ExpectRejected("02026-03-01");
  ExpectRejected("2026-03-01T");
  ExpectRejected("2026-03-01T12");
  ExpectRejected("2026-03-01T1:00");
  ExpectRejected("2026-03-01T12:00:0");
  ExpectRejected("2026-03-01Z");
}

TEST(ParseTimeText, RejectsGarbage) {
  ExpectRejected("yesterday");
  ExpectRejected("now");
  ExpectRejected("null");
  ExpectRejected("March 1, 2026");
  ExpectRejected("\xff\xfe\x80");
  ExpectRejected(std::string("2026-03-01\0", 11));
}

TEST(ParseTimeText, RejectsEmptyAndBlankText) {
  ExpectRejected("");
  ExpectRejected("   ");
  ExpectRejected("\t");
}

TEST(ParseTimeText, RejectsTrailingCharacters) {
  ExpectRejected("123abc");
  ExpectRejected("2026-03-01x");
  ExpectRejected("2026-03-01T12:00:00Zx");
  ExpectRejected("2026-03-01T12:00:00ZZ");
  ExpectRejected("2026-03-01T12:00:00+02:00Z");
  ExpectRejected("2026-03-01T12:00:00 Z");
  ExpectRejected("2026-03-01T12:00:00.5 x");
  ExpectRejected("2026-03-01T12:00Zjunk");
}

TEST(ParseTimeText, RejectsFractionWithoutDigits) {
  ExpectRejected("2026-03-01T12:00:00.");
  ExpectRejected("2026-03-01T12:00:00.Z");
  ExpectRejected("2026-03-01T12:00:00.+02:00");
}

TEST(ParseTimeText, RejectsDigitsAfterSecondsWithoutDecimalSign) {
  // "12:00:0012" is not "12:00:00.12".
  ExpectRejected("2026-03-01T12:00:0012");
  ExpectRejected("2026-03-01T12:00:005Z");
}

TEST(ParseTimeText, RejectsFractionWithoutSeconds) { ExpectRejected("2026-03-01T12:00.5Z"); }

TEST(ParseTimeText, ErrorMessageNamesTheArgument) {
  EXPECT_THAT(ParseTimeText("garbage", "as_of"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("as_of")));
  EXPECT_THAT(ParseTimeText("2026-13-01", "valid_to"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("valid_to")));
  EXPECT_THAT(ParseTimeText("", "since"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("since")));
}

TEST(ParseTimeText, ErrorMessageQuotesTheInput) {
  EXPECT_THAT(ParseTimeText("tomorrow-ish", "as_of"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tomorrow-ish")));
}

TEST(ParseTimeText, ErrorMessageShortensHugeInput) {
  const std::string huge(10000, 'x');
  auto result = ParseTimeText(huge, "as_of");
  ASSERT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("as_of")));
  EXPECT_LT(result.status().message().size(), 1000u);
}

TEST(FormatUnixMs, FormatsEpoch) { EXPECT_EQ(FormatUnixMs(0), "1970-01-01T00:00:00.000Z"); }

TEST(FormatUnixMs, FormatsMillisecondsAndDate) {
  EXPECT_EQ(FormatUnixMs(kNoon + 7), "2026-03-01T12:00:00.007Z");
  EXPECT_EQ(FormatUnixMs(1709164800000 + 13 * kHourMs + 14 * kMinuteMs + 15 * 1000 + 160),
            "2024-02-29T13:14:15.160Z");
}

TEST(FormatUnixMs, FormatsTimesBeforeEpoch) {
  EXPECT_EQ(FormatUnixMs(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatUnixMs(-1000), "1969-12-31T23:59:59.000Z");
  EXPECT_EQ(FormatUnixMs(-kDayMs), "1969-12-31T00:00:00.000Z");
  EXPECT_EQ(FormatUnixMs(-kDayMs - 1), "1969-12-30T23:59:59.999Z");
}

TEST(FormatUnixMs, FormatsFourDigitYearBounds) {
  EXPECT_EQ(FormatUnixMs(kYear0000), "0000-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUnixMs(kYear9999End), "9999-12-31T23:59:59.999Z");
}

TEST(FormatUnixMs, HandlesInt64ExtremesWithoutCrashing) {
  const std::string max = FormatUnixMs(std::numeric_limits<int64_t>::max());
  const std::string min = FormatUnixMs(std::numeric_limits<int64_t>::min());
  EXPECT_THAT(max, ::testing::EndsWith(".807Z"));
  EXPECT_THAT(min, ::testing::EndsWith(".192Z"));  // -...808 ms is 192 ms into its second.
}

TEST(FormatUnixMsRoundTrip, ParseOfFormatIsIdentityAtYearBounds) {
  for (const int64_t t : {kYear0000, kYear9999End, int64_t{0}, int64_t{-1}, kNoon}) {
    ASSERT_OK_AND_ASSIGN(const int64_t back, ParseTimeText(FormatUnixMs(t), "t"));
    EXPECT_EQ(back, t) << FormatUnixMs(t);
  }
}

TEST(FormatUnixMsRoundTrip, ParseOfFormatIsIdentityForRandomTimes) {
  std::mt19937_64 rng(20260301);
  std::uniform_int_distribution<int64_t> any_year(kYear0000, kYear9999End);
  // Half the samples near now, where real data lives.
  std::uniform_int_distribution<int64_t> near_now(kMarch1st2026 - 100 * 365 * kDayMs,
                                                  kMarch1st2026 + 100 * 365 * kDayMs);
  for (int i = 0; i < 20000; ++i) {
    const int64_t t = i % 2 == 0 ? any_year(rng) : near_now(rng);
    const std::string text = FormatUnixMs(t);
    auto back = ParseTimeText(text, "t");
    ASSERT_THAT(back, IsOk()) << text;
    ASSERT_EQ(*back, t) << text;
  }
}

TEST(FormatUnixMsRoundTrip, ParseOfFormatWithOffsetIsIdentity) {
  // Rewriting the formatted UTC time in another zone names the same instant.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> dist(0, 4102444800000);  // 1970..2100
  std::uniform_int_distribution<int> offset_minutes(-23 * 60 - 59, 23 * 60 + 59);
  for (int i = 0; i < 5000; ++i) {
    const int64_t t = dist(rng);
    const int offset = offset_minutes(rng);
    const std::string local = FormatUnixMs(t + int64_t{offset} * kMinuteMs);  // "...Z"
    const int abs_offset = offset < 0 ? -offset : offset;
    char zone[32];
    std::snprintf(zone, sizeof zone, "%c%02d:%02d", offset < 0 ? '-' : '+', abs_offset / 60,
                  abs_offset % 60);
    const std::string text = local.substr(0, local.size() - 1) + zone;
    auto back = ParseTimeText(text, "t");
    ASSERT_THAT(back, IsOk()) << text;
    ASSERT_EQ(*back, t) << text;
  }
}

}  // namespace
}  // namespace strata
