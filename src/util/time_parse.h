#pragma once
// Parsing of time arguments: unix milliseconds, numeric strings and ISO-8601 / RFC 3339.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata {

// Parses `text` as one of:
//   an integer (unix ms, optional sign), e.g. "1767225600000";
//   a date "YYYY-MM-DD" (midnight UTC);
//   a date-time "YYYY-MM-DDTHH:MM[:SS[.fraction]]" (or a space for 'T') followed by
//   "Z", "+HH:MM", "-HH:MM", "+HHMM" or nothing (UTC).
// Returns InvalidArgument naming `arg_name` for anything else or for out-of-range fields.
absl::StatusOr<int64_t> ParseTimeText(std::string_view text, std::string_view arg_name);

// Formats unix ms as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC), for people.
std::string FormatUnixMs(int64_t unix_ms);

}  // namespace strata
