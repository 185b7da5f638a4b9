#pragma once
// What a tool is: its description for tools/list and its handler.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "tools/access.h"

namespace strata::tools {

// Which client vocabulary a call uses. Perseus Vault clients call `perseus_vault_<verb>` with
// their own argument names and read extra response fields (docs/compat.md); the canonical
// fields are always present.
enum class Dialect { kCanonical, kPerseusVault };

struct ToolSpec;

struct ToolContext {
  Store* store;          // Not owned; outlives the call.
  const ToolSpec* tool;  // Not owned; the tool called, in the registry.
  Dialect dialect;
  // Long work's progress reports to the client (when it asked for them) and whether the
  // client cancelled the call.
  WorkControl work;
  // The workspaces the caller may use; never null. A handler checks every workspace it
  // reads or writes before it touches the store, and never shows another one.
  const WorkspaceAccess* access;
};

using ToolHandler =
    std::function<absl::StatusOr<nlohmann::json>(const ToolContext&, const nlohmann::json& args)>;

struct ToolSpec {
  std::string name;          // Canonical, e.g. "remember".
  std::string perseus_name;  // e.g. "perseus_vault_remember"; empty when none.
  std::string title;
  std::string description;
  nlohmann::json input_schema;
  nlohmann::json output_schema;
  nlohmann::json annotations;
  ToolHandler handler;
  // Arguments that the perseus_vault_* name neither lists nor reads (its clients read fixed
  // fields: docs/compat.md).
  std::vector<std::string> canonical_only_args;
};

// The argument contract of canonical calls (Perseus Vault calls ignore what they do not know:
// docs/compat.md). OK when every member of `args` is a property `schema` defines, and so is every
// member of a member whose schema is an object with properties. Otherwise InvalidArgument
// naming the first other member by its path under `path` (e.g. "items[3].vaild_from"), the
// tool, and the property it most likely meant. Arrays are not entered: the handler that reads
// an array's elements checks each, so that a bad one fails alone (remember_batch).
absl::Status CheckDefinedArguments(const ToolSpec& tool, const nlohmann::json& schema,
                                   const nlohmann::json& args, const std::string& path = "");

// Each tool family's specs (one file each).
std::vector<ToolSpec> WriteTools();   // remember, remember_batch, forget, purge
std::vector<ToolSpec> ReadTools();    // get, history, as_of, valid_at, bitemporal
std::vector<ToolSpec> RecallTools();  // recall
std::vector<ToolSpec> AdminTools();   // stats, embed

}  // namespace strata::tools
