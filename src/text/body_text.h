#pragma once
// The searchable text of a memory body.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::text {

// The string values of the JSON text `body_json`, depth first, separated by newlines (object
// keys are not included). A body that is not JSON is returned as is.
std::string BodyText(std::string_view body_json);

// The deepest nesting of arrays and objects a body may have.
inline constexpr int kMaxBodyDepth = 128;

// One scalar value of a body and the object member that holds it.
struct BodyValue {
  std::string member;  // The nearest enclosing member's name ("" at the top level).
  std::string value;   // A string's text, or a number's or boolean's JSON.
  bool is_string = false;
};

// What the write path needs of a body, from one parse.
struct ParsedBody {
  std::string normal_json;   // The compact serialization with object keys sorted.
  uint64_t normal_hash = 0;  // FNV-1a 64 of normal_json.
  std::string text;          // As BodyText: the string values, for the keyword index.
  // Every scalar value (strings, numbers, booleans; not null), in normal_json's order.
  std::vector<BodyValue> values;
};

// Parses `body_json`. Errors: InvalidArgument when it is not a JSON text or nests deeper than
// kMaxBodyDepth.
absl::StatusOr<ParsedBody> ParseBody(std::string_view body_json);

}  // namespace strata::text
