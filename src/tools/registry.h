#pragma once
// Every tool, under its canonical name, its Perseus Vault name and an optional prefix.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "tools/tool.h"

namespace strata::tools {

struct RegistryOptions {
  // tools/list shows the perseus_vault_* names (docs/compat.md) instead of the canonical ones.
  bool list_perseus_names = false;
  // Prepended to canonical names in tools/list and accepted in calls, e.g. "strata_".
  std::string prefix;
};

// Thread safety: immutable after construction; Call is as thread-safe as the Store.
class ToolRegistry {
 public:
  ToolRegistry(Store* store, RegistryOptions options);

  // The tools/list array: name, title, description, inputSchema, outputSchema, annotations.
  nlohmann::json List() const;

  struct Resolved {
    const ToolSpec* spec;  // Not owned; points into the registry.
    Dialect dialect;
  };
  // Resolves a called name (canonical, prefixed or perseus_vault_*); nullopt when unknown.
  std::optional<Resolved> Find(std::string_view name) const;

  // Runs a resolved tool. Errors: the tool's status (InvalidArgument for bad arguments, ...).
  // `work` carries progress reports out of long work and the client's cancellation in;
  // `access` limits the workspaces the call may use (null: every one).
  absl::StatusOr<nlohmann::json> Call(const Resolved& tool, const nlohmann::json& args,
                                      WorkControl work = {},
                                      const WorkspaceAccess* access = nullptr) const;

  // Names a model may call, for error messages.
  std::string ListedNames() const;

  // The Store the tools call.
  Store& store() const { return *store_; }

 private:
  Store* store_;  // Not owned; outlives this.
  RegistryOptions options_;
  std::vector<ToolSpec> specs_;
};

}  // namespace strata::tools
