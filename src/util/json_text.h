// JSON text to and from nlohmann::json values, fast (the one adapter of simdjson).
//
// The output is exactly what nlohmann's `dump(-1, ' ', false, error_handler_t::replace)`
// writes (compact, keys in the object's order, UTF-8 kept as is, control characters escaped,
// invalid UTF-8 replaced by U+FFFD), so stored text and responses do not change; it is
// several times faster on string-heavy values (bodies), which nlohmann escapes a byte at a
// time. Floating-point numbers and the rare invalid string are still written by nlohmann.
#ifndef STRATA_UTIL_JSON_TEXT_H_
#define STRATA_UTIL_JSON_TEXT_H_

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace strata {

// `value` as compact JSON text.
std::string JsonText(const nlohmann::json& value);

// Appends `value` as compact JSON text to `out`.
void AppendJsonText(const nlohmann::json& value, std::string& out);

// Appends `text` as a JSON string literal (quoted and escaped) to `out`.
void AppendJsonString(std::string_view text, std::string& out);

// The same for a `text` that is valid UTF-8 (RFC 3629); false, with nothing appended, for
// one that is not (where AppendJsonString would write U+FFFD for the bad bytes).
bool AppendJsonStringIfUtf8(std::string_view text, std::string& out);

// Whether `text` is valid UTF-8 (RFC 3629).
bool IsUtf8(std::string_view text);

// Parses JSON text into nlohmann::json several times faster than nlohmann's own parser
// (simdjson underneath, its buffers kept from call to call). Non-negative integers come back
// as signed where they fit (nlohmann's parser makes them unsigned; they compare and print
// the same).
// Thread safety: none; one per thread.
class JsonParser {
 public:
  explicit JsonParser(int max_depth = 1024);
  ~JsonParser();
  JsonParser(const JsonParser&) = delete;
  JsonParser& operator=(const JsonParser&) = delete;

  // The value `text` holds. Errors (InvalidArgument), as a sentence: "the message is not valid
  // UTF-8", "JSON nested deeper than N levels", "a number is out of range", "the message is
  // too large", "not valid JSON (reason)".
  absl::StatusOr<nlohmann::json> Parse(std::string_view text);

 private:
  friend nlohmann::json ParseJsonText(std::string_view text);
  friend bool IsJsonText(std::string_view text);

  // Whether `text` is a JSON text to nlohmann's parser (json::accept), as fast as simdjson
  // checks it.
  bool IsJsonText(std::string_view text);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Exactly what `nlohmann::json::parse(text, nullptr, false)` returns (a discarded value when
// `text` is not JSON), by JsonParser where the two agree and by nlohmann where they might
// not (what simdjson refuses, and negative zero). Uses one JsonParser per thread.
nlohmann::json ParseJsonText(std::string_view text);

// Whether `text` is a JSON text to nlohmann's parser (json::accept), as fast as simdjson
// checks it.
bool IsJsonText(std::string_view text);

}  // namespace strata

#endif  // STRATA_UTIL_JSON_TEXT_H_
