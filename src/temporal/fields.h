#pragma once
// Bounds on a memory's fields, checked before they are stored: by the write path (api/) and
// by import (transfer/). docs/decisions.md, "Limits", gives the reasons.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "strata/strata.h"

namespace strata::temporal {

inline constexpr size_t kMaxCategoryBytes = 256;  // Also the bound on a workspace.
inline constexpr size_t kMaxKeyBytes = 1024;
inline constexpr size_t kMaxTypeBytes = 128;
inline constexpr size_t kMaxTags = 64;
inline constexpr size_t kMaxTagBytes = 256;
// A body as a JSON text. Checked by the tools (tools/limits.h) and by imports of other
// memories' files, whose records are new writes; a strata export restores what was stored.
inline constexpr size_t kMaxBodyBytes = 1 << 20;

// InvalidArgument naming the field (`key: at most 1024 bytes, got 5000`) unless category and
// key are non-empty and every part is within its bound.
absl::Status ValidateIdentity(const Identity& identity);
// The same for a version's type (non-empty) and tags.
absl::Status ValidateTypeAndTags(const std::string& type, const std::vector<std::string>& tags);

}  // namespace strata::temporal
