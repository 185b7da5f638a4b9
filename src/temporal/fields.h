#pragma once
// Checks of a memory's fields before they are stored: by the write path (api/) and
// by import (transfer/). docs/decisions.md, "Limits", gives the reasons.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "strata/strata.h"

namespace strata::temporal {

// The bounds are the public API's (strata.h: kMaxCategoryBytes, ...).

// InvalidArgument naming the field (`key: at most 1024 bytes, got 5000`) unless category and
// key are non-empty and every part is within its bound and valid UTF-8.
absl::Status ValidateIdentity(const Identity& identity);
// The same for a version's type (non-empty) and tags.
absl::Status ValidateTypeAndTags(const std::string& type, const std::vector<std::string>& tags);

}  // namespace strata::temporal
