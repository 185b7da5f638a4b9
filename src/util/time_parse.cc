#include "util/time_parse.h"

#include <cstdio>
#include <limits>

#include "absl/strings/str_cat.h"
#include "util/sv.h"

namespace strata {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t& y, int64_t& m, int64_t& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = yoe + era * 400 + (m <= 2);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// A cursor over the text; every Read* returns false without consuming on mismatch.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool Done() const { return pos_ == s_.size(); }
  bool Peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  bool Read(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  // Reads exactly `n` decimal digits.
  bool ReadDigits(int n, int64_t& out) {
    if (pos_ + n > s_.size()) return false;
    int64_t v = 0;
    for (int i = 0; i < n; ++i) {
      const char c = s_[pos_ + i];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    pos_ += n;
    out = v;
    return true;
  }
  // Reads a fraction's digits (at least one) and returns its milliseconds (truncated).
  bool ReadFractionMs(int64_t& ms) {
    int digits = 0;
    ms = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (digits < 3) ms = ms * 10 + (s_[pos_] - '0');
      ++digits;
      ++pos_;
    }
    for (int i = digits; i < 3; ++i) ms *= 10;
    return digits > 0;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

bool ParseInteger(std::string_view text, int64_t& out) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  if (i == text.size()) return false;
  // Accumulate negatively so that INT64_MIN parses.
  int64_t v = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return false;
    const int digit = c - '0';
    if (v < (std::numeric_limits<int64_t>::min() + digit) / 10) return false;
    v = v * 10 - digit;
  }
  if (!negative) {
    if (v == std::numeric_limits<int64_t>::min()) return false;
    v = -v;
  }
  out = v;
  return true;
}

}  // namespace

absl::StatusOr<int64_t> ParseTimeText(std::string_view text, std::string_view arg_name) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(arg_name), ": ", ToAbsl(why),
                     " (expected unix milliseconds or an ISO-8601 time such as 2026-03-01 or "
                     "2026-03-01T12:00:00Z), got \"",
                     ToAbsl(text.substr(0, 64)), text.size() > 64 ? "..." : "", "\""));
  };
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty()) return bad("empty time");

  int64_t integer = 0;
  if (ParseInteger(text, integer)) return integer;

  Cursor c(text);
  int64_t year = 0, month = 0, day = 0;
  if (!c.ReadDigits(4, year) || !c.Read('-') || !c.ReadDigits(2, month) || !c.Read('-') ||
      !c.ReadDigits(2, day)) {
    return bad("not a time");
  }
  if (month < 1 || month > 12) return bad("month out of range");
  if (day < 1 || day > DaysInMonth(year, month)) return bad("day out of range");
  int64_t hour = 0, minute = 0, second = 0, millis = 0, offset_minutes = 0;
  if (!c.Done()) {
    if (!c.Read('T') && !c.Read('t') && !c.Read(' ')) return bad("not a time");
    if (!c.ReadDigits(2, hour) || !c.Read(':') || !c.ReadDigits(2, minute)) {
      return bad("not a time");
    }
    if (c.Read(':')) {
      if (!c.ReadDigits(2, second)) return bad("not a time");
      if ((c.Read('.') || c.Read(',')) && !c.ReadFractionMs(millis)) {
        return bad("a decimal sign needs digits after it");
      }
    }
    if (hour > 23 || minute > 59 || second > 60) return bad("time of day out of range");
    if (c.Read('Z') || c.Read('z')) {
      // UTC.
    } else if (c.Peek('+') || c.Peek('-')) {
      const int sign = c.Read('-') ? -1 : (c.Read('+'), 1);
      int64_t oh = 0, om = 0;
      if (!c.ReadDigits(2, oh)) return bad("bad UTC offset");
      c.Read(':');
      if (!c.ReadDigits(2, om)) return bad("bad UTC offset");
      if (oh > 23 || om > 59) return bad("UTC offset out of range");
      offset_minutes = sign * (oh * 60 + om);
    }
    if (!c.Done()) return bad("trailing characters");
  }
  if (second == 60) second = 59;  // A leap second names the last second of its minute.
  const int64_t days = DaysFromCivil(year, month, day);
  const int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
  return seconds * 1000 + millis;
}

std::string FormatUnixMs(int64_t unix_ms) {
  int64_t ms = unix_ms % 1000;
  int64_t secs = unix_ms / 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  int64_t y = 0, m = 0, d = 0;
  CivilFromDays(days, y, m, d);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(y), static_cast<long long>(m), static_cast<long long>(d),
                static_cast<long long>(rem / 3600), static_cast<long long>(rem / 60 % 60),
                static_cast<long long>(rem % 60), static_cast<long long>(ms));
  return buf;
}

}  // namespace strata
