#pragma once
// The searchable text of a memory body.

#include <string>
#include <string_view>

namespace strata::text {

// The string values of the JSON text `body_json`, depth first, separated by newlines (object
// keys are not included). A body that is not JSON is returned as is.
std::string BodyText(std::string_view body_json);

}  // namespace strata::text
