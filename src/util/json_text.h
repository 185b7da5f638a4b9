// JSON text from nlohmann::json values, fast.
//
// The output is exactly what nlohmann's `dump(-1, ' ', false, error_handler_t::replace)`
// writes (compact, keys in the object's order, UTF-8 kept as is, control characters escaped,
// invalid UTF-8 replaced by U+FFFD), so stored text and responses do not change; it is
// several times faster on string-heavy values (bodies), which nlohmann escapes a byte at a
// time. Floating-point numbers and the rare invalid string are still written by nlohmann.
#ifndef STRATA_UTIL_JSON_TEXT_H_
#define STRATA_UTIL_JSON_TEXT_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace strata {

// `value` as compact JSON text.
std::string JsonText(const nlohmann::json& value);

// Appends `value` as compact JSON text to `out`.
void AppendJsonText(const nlohmann::json& value, std::string& out);

// Appends `text` as a JSON string literal (quoted and escaped) to `out`.
void AppendJsonString(std::string_view text, std::string& out);

}  // namespace strata

#endif  // STRATA_UTIL_JSON_TEXT_H_
