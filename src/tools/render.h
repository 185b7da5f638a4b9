#pragma once
// Library values as tool JSON, and the JSON Schema fragments that describe them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "tools/args.h"
#include "tools/snippet.h"
#include "tools/tool.h"

namespace strata::tools {

// A version as a JSON object: id, category, key, workspace, version, body_json (string),
// body (parsed), type, tags, source, importance, valid_from, valid_to, recorded_at,
// superseded_at (unix ms; null when open). The Perseus Vault dialect adds entity_type,
// *_unix_ms, invalidated_at_unix_ms and is_live_version.
nlohmann::json VersionJson(const Version& version, Dialect dialect);

// The JSON Schema of VersionJson's object.
nlohmann::json VersionSchema();

// How much of each recall item a canonical caller asked for (recall's `fields`, `max_chars`).
struct ItemShape {
  // The fields to keep besides `id`, which is always kept; nullopt keeps every field.
  std::optional<std::vector<std::string>> fields;
  // A body whose text (text::BodyText: a string body itself, else its string values joined by
  // newlines) is longer than this many code points is cut: `body` and `body_json` give way to
  // `snippet` (Window of the text around `query`'s FirstMatch), `cut: true` and `body_chars`
  // (the text's length). nullopt: no body is cut.
  std::optional<size_t> max_chars;
  const QueryTerms* query = nullptr;  // Not owned; outlives this. Required with max_chars.
};

// Whether `name` is one of the fields that stand in for a cut body (snippet, cut,
// body_chars), kept when `fields` keeps `body` or `body_json`.
bool IsCutBodyField(std::string_view name);

// `item` (VersionJson's object and more) cut down to `shape`.
void ShapeItem(const ItemShape& shape, nlohmann::json& item);

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
