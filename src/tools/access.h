#pragma once
// Which workspaces a tool call may touch: every one (stdio, an unrestricted HTTP token) or a
// list (a restricted HTTP token, src/http/token_file.h).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace strata::tools {

// Thread safety: immutable.
class WorkspaceAccess {
 public:
  // Every workspace.
  WorkspaceAccess() = default;
  // Only these workspaces ("" is the global one).
  explicit WorkspaceAccess(std::vector<std::string> allowed) : allowed_(std::move(allowed)) {}

  bool unrestricted() const { return !allowed_.has_value(); }
  bool Allows(std::string_view workspace) const;
  // The workspaces allowed; empty when unrestricted.
  const std::vector<std::string>& allowed() const;

  // OK when `workspace` is allowed, else PermissionDenied naming `argument` and the workspace.
  // Callers check before they read the store, so the answer is the same whether or not
  // anything is stored there.
  absl::Status Check(std::string_view argument, std::string_view workspace) const;
  // OK when unrestricted, else PermissionDenied: `what` needs every workspace.
  absl::Status CheckUnrestricted(std::string_view what) const;

 private:
  std::optional<std::vector<std::string>> allowed_;
};

}  // namespace strata::tools
