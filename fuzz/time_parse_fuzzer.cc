// libFuzzer target: the time parser (util/time_parse.h).
//
// Every input either parses or fails with InvalidArgument naming the argument. A time that
// parses and formats as a four-digit year parses back, from FormatUnixMs's text, to the same
// instant; FormatUnixMs takes any int64 without overflow (UBSan checks the arithmetic).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "util/time_parse.h"

namespace {

[[noreturn]] void Fail(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "time_parse_fuzzer: %s; input: \"%.*s\"\n", what.c_str(),
               static_cast<int>(std::min<size_t>(input.size(), 200)), input.data());
  std::abort();
}

// Unix ms of 0000-01-01T00:00:00Z and of the first instant after 9999-12-31.
constexpr int64_t kYear0 = -62167219200000;
constexpr int64_t kYear10000 = 253402300800000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<int64_t> parsed = strata::ParseTimeText(input, "valid_at");
  if (!parsed.ok()) {
    if (parsed.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("an error other than InvalidArgument", input);
    }
    if (parsed.status().message().substr(0, 10) != "valid_at: ") {
      Fail("an error that does not name the argument", input);
    }
    return 0;
  }
  const std::string text = strata::FormatUnixMs(*parsed);
  if (*parsed >= kYear0 && *parsed < kYear10000) {
    absl::StatusOr<int64_t> again = strata::ParseTimeText(text, "t");
    if (!again.ok() || *again != *parsed) {
      Fail("FormatUnixMs(" + std::to_string(*parsed) + ") = " + text + " does not parse back",
           input);
    }
  }
  return 0;
}
