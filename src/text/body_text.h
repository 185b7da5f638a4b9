#pragma once
// The searchable text of a memory body.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::text {

// The string values of the JSON text `body_json`, depth first, separated by newlines (object
// keys are not included). A body that is not JSON is returned as is.
std::string BodyText(std::string_view body_json);

// The deepest nesting of arrays and objects a body may have.
inline constexpr int kMaxBodyDepth = 128;

// What the write path needs of a body, from one parse.
struct ParsedBody {
  std::string normal_json;   // The compact serialization with object keys sorted.
  uint64_t normal_hash = 0;  // FNV-1a 64 of normal_json.
  std::string text;          // As BodyText: the string values, for the keyword index.
  std::string values;        // Every scalar value (strings, numbers, booleans), one a line.
};

// Parses `body_json`. Errors: InvalidArgument when it is not a JSON text or nests deeper than
// kMaxBodyDepth.
absl::StatusOr<ParsedBody> ParseBody(std::string_view body_json);

}  // namespace strata::text
