#include "tools/access.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "util/sv.h"

namespace strata::tools {

bool WorkspaceAccess::Allows(std::string_view workspace) const {
  return !allowed_ || std::find(allowed_->begin(), allowed_->end(), workspace) != allowed_->end();
}

const std::vector<std::string>& WorkspaceAccess::allowed() const {
  static const std::vector<std::string> kNone;
  return allowed_ ? *allowed_ : kNone;
}

absl::Status WorkspaceAccess::Check(std::string_view argument, std::string_view workspace) const {
  if (Allows(workspace)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(ToAbsl(argument),
                                                  ": this token may not use workspace \"",
                                                  ToAbsl(workspace.substr(0, 64)), "\""));
}

absl::Status WorkspaceAccess::CheckUnrestricted(std::string_view what) const {
  if (!allowed_) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat(ToAbsl(what), ": needs a token that may use every workspace"));
}

}  // namespace strata::tools
