#include "tools/registry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/sv.h"

namespace strata::tools {
namespace {

using nlohmann::json;

// Perseus Vault argument names and the canonical names they stand for.
constexpr std::pair<const char*, const char*> kPerseusArgs[] = {
    {"workspace_hash", "workspace"},  {"valid_from_unix_ms", "valid_from"},
    {"valid_to_unix_ms", "valid_to"}, {"as_of_unix_ms", "as_of"},
    {"valid_at_unix_ms", "valid_at"}, {"tx_at_unix_ms", "tx_at"},
};

// The name a Perseus Vault client uses for a canonical argument of `tool`.
std::string_view PerseusArgName(std::string_view canonical, std::string_view tool) {
  // recall keeps `valid_at` (COMPAT.md); the others take `valid_at_unix_ms`.
  if (canonical == "valid_at" && tool == "recall") return canonical;
  for (const auto& [perseus, name] : kPerseusArgs) {
    if (canonical == name) return perseus;
  }
  return canonical;
}

// Rewrites a Perseus Vault call's arguments into canonical names.
json CanonicalArgs(const json& args) {
  if (!args.is_object()) return args;
  json out = args;
  for (const auto& [perseus, canonical] : kPerseusArgs) {
    auto it = out.find(perseus);
    if (it == out.end()) continue;
    if (!out.contains(canonical)) out[canonical] = *it;
    out.erase(perseus);
  }
  return out;
}

// The inputSchema a Perseus Vault client expects: the same arguments under its names.
json PerseusInputSchema(const ToolSpec& spec) {
  json schema = spec.input_schema;
  json& props = schema["properties"];
  auto rename = [&](const char* from, const char* to) {
    if (!props.contains(from)) return;
    props[to] = props[from];
    props.erase(from);
    if (schema.contains("required")) {
      for (json& r : schema["required"]) {
        if (r == from) r = to;
      }
    }
  };
  for (const auto& [perseus, canonical] : kPerseusArgs) {
    const std::string_view name = PerseusArgName(canonical, spec.name);
    if (name == perseus) rename(canonical, perseus);
  }
  if (props.contains("dedup")) {
    props.erase("dedup");
    props["skip_dedup"] = {
        {"type", "boolean"},
        {"description", "true stores the memory even if it duplicates another."}};
  }
  return schema;
}

}  // namespace

ToolRegistry::ToolRegistry(Store* store, RegistryOptions options)
    : store_(store), options_(std::move(options)) {
  for (auto family : {WriteTools, ReadTools, RecallTools, AdminTools}) {
    for (ToolSpec& spec : family()) specs_.push_back(std::move(spec));
  }
}

json ToolRegistry::List() const {
  json tools = json::array();
  for (const ToolSpec& spec : specs_) {
    const bool perseus = options_.list_perseus_names && !spec.perseus_name.empty();
    tools.push_back({
        {"name", perseus ? spec.perseus_name : options_.prefix + spec.name},
        {"title", spec.title},
        {"description", spec.description},
        {"inputSchema", perseus ? PerseusInputSchema(spec) : spec.input_schema},
        {"outputSchema", spec.output_schema},
        {"annotations", spec.annotations},
    });
    tools.back()["annotations"]["title"] = spec.title;
  }
  return tools;
}

std::optional<ToolRegistry::Resolved> ToolRegistry::Find(std::string_view name) const {
  for (const ToolSpec& spec : specs_) {
    if (name == spec.name || (!options_.prefix.empty() && name == options_.prefix + spec.name)) {
      return Resolved{.spec = &spec, .dialect = Dialect::kCanonical};
    }
    if (!spec.perseus_name.empty() && name == spec.perseus_name) {
      return Resolved{.spec = &spec, .dialect = Dialect::kPerseusVault};
    }
  }
  return std::nullopt;
}

absl::StatusOr<json> ToolRegistry::Call(const Resolved& tool, const json& args,
                                        WorkControl work) const {
  const ToolContext ctx{.store = store_, .dialect = tool.dialect, .work = std::move(work)};
  const json empty = json::object();
  const json& given = args.is_null() ? empty : args;
  if (!given.is_object()) {
    return absl::InvalidArgumentError("arguments: must be an object");
  }
  if (tool.dialect != Dialect::kPerseusVault) return tool.spec->handler(ctx, given);
  absl::StatusOr<json> result = tool.spec->handler(ctx, CanonicalArgs(given));
  if (result.ok() || result.status().code() != absl::StatusCode::kInvalidArgument) return result;
  // Messages name the argument first ("as_of: required"); name it as the client sent it.
  const std::string_view message = ToStd(result.status().message());
  const size_t colon = message.find(':');
  if (colon == std::string_view::npos) return result;
  const std::string_view name = PerseusArgName(message.substr(0, colon), tool.spec->name);
  if (name == message.substr(0, colon)) return result;
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(name), ToAbsl(message.substr(colon))));
}

std::string ToolRegistry::ListedNames() const {
  std::vector<std::string> names;
  for (const ToolSpec& spec : specs_) {
    names.push_back(options_.list_perseus_names && !spec.perseus_name.empty()
                        ? spec.perseus_name
                        : options_.prefix + spec.name);
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace strata::tools
