#pragma once
// What a tool is: its description for tools/list and its handler.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "strata/strata.h"

namespace strata::tools {

// Which client vocabulary a call uses. Perseus Vault clients call `perseus_vault_<verb>` with
// their own argument names and read extra response fields (shared/COMPAT.md); the canonical
// fields are always present.
enum class Dialect { kCanonical, kPerseusVault };

struct ToolContext {
  Store* store;  // Not owned; outlives the call.
  Dialect dialect;
  // Long work's progress reports to the client (when it asked for them) and whether the
  // client cancelled the call.
  WorkControl work;
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
};

// Each tool family's specs (one file each).
std::vector<ToolSpec> WriteTools();   // remember, remember_batch, forget, purge
std::vector<ToolSpec> ReadTools();    // get, history, as_of, valid_at, bitemporal
std::vector<ToolSpec> RecallTools();  // recall
std::vector<ToolSpec> AdminTools();   // stats, embed

}  // namespace strata::tools
