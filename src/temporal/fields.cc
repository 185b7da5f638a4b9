#include "temporal/fields.h"

#include "absl/strings/str_cat.h"

namespace strata::temporal {

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
  return absl::OkStatus();
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
  for (const std::string& tag : tags) {
    if (tag.size() > kMaxTagBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("tags: each tag at most ", kMaxTagBytes, " bytes, got ", tag.size()));
    }
  }
  return absl::OkStatus();
}

}  // namespace strata::temporal
