#include "tools/render.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "text/body_text.h"
#include "util/json_text.h"

namespace strata::tools {
namespace {

using nlohmann::json;

json OptInt(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json VersionJson(const Version& v, Dialect dialect) {
  json body = ParseJsonText(v.body_json);
  if (body.is_discarded()) body = v.body_json;
  json out = {
      {"id", v.memory_id},
      {"category", v.identity.category},
      {"key", v.identity.key},
      {"workspace", v.identity.workspace},
      {"version", v.version},
      {"body_json", v.body_json},
      {"body", body},
      {"type", v.type},
      {"tags", v.tags},
      {"source", v.source ? json(*v.source) : json(nullptr)},
      {"importance", v.importance ? json(*v.importance) : json(nullptr)},
      {"valid_from", v.valid_from_unix_ms},
      {"valid_to", OptInt(v.valid_to_unix_ms)},
      {"recorded_at", v.recorded_at_unix_ms},
      {"superseded_at", OptInt(v.superseded_at_unix_ms)},
  };
  if (dialect == Dialect::kPerseusVault) {
    out["entity_type"] = v.type;
    out["workspace_hash"] = v.identity.workspace;
    out["valid_from_unix_ms"] = v.valid_from_unix_ms;
    out["valid_to_unix_ms"] = OptInt(v.valid_to_unix_ms);
    out["recorded_at_unix_ms"] = v.recorded_at_unix_ms;
    out["invalidated_at_unix_ms"] = OptInt(v.superseded_at_unix_ms);
    out["is_live_version"] = !v.superseded_at_unix_ms.has_value();
  }
  return out;
}

json VersionSchema() {
  const json nullable_int = {{"type", json::array({"integer", "null"})}};
  return {
      {"type", "object"},
      {"properties",
       {
           {"id", {{"type", "integer"}, {"description", "Stable id of the memory"}}},
           {"category", {{"type", "string"}}},
           {"key", {{"type", "string"}}},
           {"workspace", {{"type", "string"}}},
           {"version", {{"type", "integer"}, {"description", "1 for the first version"}}},
           {"body_json", {{"type", "string"}, {"description", "The body as stored (JSON text)"}}},
           {"body", {{"description", "The body, parsed"}}},
           {"type", {{"type", "string"}}},
           {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}}},
           {"source", {{"type", json::array({"string", "null"})}}},
           {"importance", {{"type", json::array({"number", "null"})}}},
           {"valid_from",
            {{"type", "integer"}, {"description", "Unix ms; true in the world from"}}},
           {"valid_to", nullable_int},
           {"recorded_at", {{"type", "integer"}, {"description", "Unix ms; believed from"}}},
           {"superseded_at", nullable_int},
       }},
      {"required", json::array({"id", "category", "key", "version", "body_json", "type", "tags",
                                "valid_from", "recorded_at"})},
  };
}

bool IsCutBodyField(std::string_view name) {
  return name == "snippet" || name == "cut" || name == "body_chars";
}

void ShapeItem(const ItemShape& shape, json& item) {
  const auto asked = [&shape](std::string_view name) {
    return name == "id" || !shape.fields ||
           std::find(shape.fields->begin(), shape.fields->end(), name) != shape.fields->end();
  };
  const bool body_asked = asked("body") || asked("body_json");
  auto body_json = item.find("body_json");
  // A body's text is never longer than its JSON text: most bodies are skipped unparsed.
  if (shape.max_chars && body_asked && body_json != item.end() && body_json->is_string() &&
      CodePoints(body_json->get_ref<const std::string&>()) > *shape.max_chars) {
    const std::string text = text::BodyText(body_json->get_ref<const std::string&>());
    const size_t chars = CodePoints(text);
    if (chars > *shape.max_chars) {
      const std::optional<ByteRange> match =
          shape.query != nullptr ? shape.query->FirstMatch(text) : std::nullopt;
      item.erase(body_json);
      item.erase("body");
      item["snippet"] = std::string(Window(text, match, *shape.max_chars));
      item["cut"] = true;
      item["body_chars"] = chars;
    }
  }
  if (!shape.fields) return;
  json kept = json::object();
  for (auto& [name, value] : item.items()) {
    if (asked(name) || (body_asked && IsCutBodyField(name))) kept[name] = std::move(value);
  }
  item = std::move(kept);
}

json MemoryRefJson(int64_t memory_id, const Identity& identity) {
  return {{"id", memory_id},
          {"category", identity.category},
          {"key", identity.key},
          {"workspace", identity.workspace}};
}

json MemoryRefSchema(const std::string& description, json extra) {
  json properties = {{"id", {{"type", "integer"}}},
                     {"category", {{"type", "string"}}},
                     {"key", {{"type", "string"}}},
                     {"workspace", {{"type", "string"}}}};
  properties.update(extra);
  json schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!description.empty()) schema["description"] = description;
  return schema;
}

absl::StatusOr<Identity> ReadIdentity(const Args& args) {
  Identity identity;
  absl::StatusOr<std::string> category = args.RequiredString("category");
  if (!category.ok()) return category.status();
  absl::StatusOr<std::string> key = args.RequiredString("key");
  if (!key.ok()) return key.status();
  absl::StatusOr<std::optional<std::string>> workspace = args.OptionalString("workspace");
  if (!workspace.ok()) return workspace.status();
  return Identity{.category = *std::move(category),
                  .key = *std::move(key),
                  .workspace = workspace->value_or("")};
}

json StringProp(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}

json IntProp(const std::string& description) {
  return {{"type", "integer"}, {"description", description}};
}

json TimeProp(const std::string& description) {
  return {
      {"type", json::array({"integer", "string"})},
      {"description", description + " Unix milliseconds, or an ISO-8601 time such as 2026-03-01 or "
                                    "2026-03-01T12:00:00Z."}};
}

json IdentityProps() {
  return {
      {"category", StringProp("Category of the memory, e.g. \"preference\", \"decision\".")},
      {"key", StringProp("Key of the memory within its category, e.g. \"editor\".")},
      {"workspace", StringProp("Workspace (project) the memory belongs to; \"\" (the default) "
                               "is global.")},
  };
}

}  // namespace strata::tools
