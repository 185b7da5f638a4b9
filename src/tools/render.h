#pragma once
// Library values as tool JSON, and the JSON Schema fragments that describe them.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "tools/args.h"
#include "tools/tool.h"

namespace strata::tools {

// A version as a JSON object: id, category, key, workspace, version, body_json (string),
// body (parsed), type, tags, source, importance, valid_from, valid_to, recorded_at,
// superseded_at (unix ms; null when open). The Perseus Vault dialect adds entity_type,
// *_unix_ms, invalidated_at_unix_ms and is_live_version.
nlohmann::json VersionJson(const Version& version, Dialect dialect);

// The JSON Schema of VersionJson's object.
nlohmann::json VersionSchema();

// A reference to a memory: {id, category, key, workspace}, and its schema with `extra`
// properties added (e.g. a similarity).
nlohmann::json MemoryRefJson(int64_t memory_id, const Identity& identity);
nlohmann::json MemoryRefSchema(const std::string& description,
                               nlohmann::json extra = nlohmann::json::object());

// Reads category, key and workspace (default "").
absl::StatusOr<Identity> ReadIdentity(const Args& args);

// Schema helpers for inputSchema/outputSchema.
nlohmann::json StringProp(const std::string& description);
nlohmann::json IntProp(const std::string& description);
nlohmann::json TimeProp(const std::string& description);
nlohmann::json IdentityProps();  // category, key, workspace

}  // namespace strata::tools
