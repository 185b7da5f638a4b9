#pragma once
// The one bridge between std::string_view and Debian abseil's own absl::string_view
// (abseil 20220623 here is built without ABSL_USES_STD_STRING_VIEW).

#include <string_view>

#include "absl/strings/string_view.h"

namespace strata {

inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view ToStd(absl::string_view s) { return {s.data(), s.size()}; }

}  // namespace strata
