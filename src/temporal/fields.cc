#include "temporal/fields.h"

#include "absl/strings/str_cat.h"
#include "util/json_text.h"
#include "util/status_macros.h"

namespace strata::temporal {

namespace {

// Both stores keep text as UTF-8 (PostgreSQL refuses anything else), so every name is checked
// here, before either sees it: the same error on both.
absl::Status RequireUtf8(const char* field, std::string_view value) {
  if (IsUtf8(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": must be valid UTF-8"));
}

}  // namespace

absl::Status ValidateIdentity(const Identity& identity) {
  if (identity.category.empty()) {
    return absl::InvalidArgumentError("category: must be a non-empty string");
  }
  if (identity.category.size() > kMaxCategoryBytes) {
    return absl::InvalidArgumentError(absl::StrCat("category: at most ", kMaxCategoryBytes,
                                                   " bytes, got ", identity.category.size()));
  }
  if (identity.key.empty()) return absl::InvalidArgumentError("key: must be a non-empty string");
  if (identity.key.size() > kMaxKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("key: at most ", kMaxKeyBytes, " bytes, got ", identity.key.size()));
  }
  if (identity.workspace.size() > kMaxWorkspaceBytes) {
    return absl::InvalidArgumentError(absl::StrCat("workspace: at most ", kMaxWorkspaceBytes,
                                                   " bytes, got ", identity.workspace.size()));
  }
  RETURN_IF_ERROR(RequireUtf8("category", identity.category));
  RETURN_IF_ERROR(RequireUtf8("key", identity.key));
  return RequireUtf8("workspace", identity.workspace);
}

absl::Status ValidateTypeAndTags(const std::string& type, const std::vector<std::string>& tags) {
  if (type.empty() || type.size() > kMaxTypeBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("type: must be a non-empty string of at most ", kMaxTypeBytes, " bytes"));
  }
  if (tags.size() > kMaxTags) {
    return absl::InvalidArgumentError(
        absl::StrCat("tags: at most ", kMaxTags, " tags, got ", tags.size()));
  }
  RETURN_IF_ERROR(RequireUtf8("type", type));
  for (const std::string& tag : tags) {
    if (tag.size() > kMaxTagBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("tags: each tag at most ", kMaxTagBytes, " bytes, got ", tag.size()));
    }
    RETURN_IF_ERROR(RequireUtf8("tags", tag));
  }
  return absl::OkStatus();
}

}  // namespace strata::temporal
