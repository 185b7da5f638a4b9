#include "tools/registry.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/json_text.h"
#include "util/status_macros.h"
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
  // recall keeps `valid_at` (docs/compat.md); the others take `valid_at_unix_ms`.
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
  // Perseus Vault stores a body_json that is not JSON as a JSON string, and its clients send
  // plain text there (test_compat.py); canonical calls refuse it, so it goes in as a string body.
  if (auto it = out.find("body_json"); it != out.end() && it->is_string() &&
                                       !out.contains("body") &&
                                       !IsJsonText(it->get_ref<const std::string&>())) {
    json text = std::move(*it);
    out.erase(it);
    out["body"] = std::move(text);
  }
  return out;
}

// The edits (insertions, deletions, substitutions, swaps of neighbours) that turn `a` into `b`,
// ignoring case: the optimal string alignment distance. A swap is one edit because transposed
// letters are the commonest typo (vaild_from).
size_t EditDistance(std::string_view a, std::string_view b) {
  const auto same = [](char x, char y) { return absl::ascii_tolower(x) == absl::ascii_tolower(y); };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// Whether `distance` edits leave `a` and `b` recognisably the same name: at most a third of the
// longer one differs (one edit always counts, so "ky" suggests "key"), so "x" suggests no "id".
bool CloseEnough(std::string_view a, std::string_view b, size_t distance) {
  return distance <= std::max<size_t>(1, std::max(a.size(), b.size()) / 3);
}

// The property a caller most likely meant by a name the tool does not define.
struct Suggestion {
  std::string name;  // Empty when no property is close.
  std::string note;  // Why, e.g. "a perseus_vault_remember name"; may be empty.
};

// For `name`, which `properties` lacks: a Perseus Vault name's canonical twin, else the
// closest property by EditDistance, else none.
Suggestion Suggest(const ToolSpec& tool, const json& properties, std::string_view name) {
  const std::string perseus_tool =
      tool.perseus_name.empty() ? std::string("Perseus Vault") : tool.perseus_name;
  if (name == "skip_dedup" && properties.contains("dedup")) {
    return {.name = "dedup",
            .note = absl::StrCat("a ", perseus_tool, " name; skip_dedup: true is dedup: false")};
  }
  for (const auto& [perseus, canonical] : kPerseusArgs) {
    if (name != perseus || !properties.contains(canonical)) continue;
    const bool theirs = PerseusArgName(canonical, tool.name) == name;
    return {.name = canonical, .note = theirs ? absl::StrCat("a ", perseus_tool, " name") : ""};
  }
  Suggestion best;
  size_t best_distance = SIZE_MAX;
  for (const auto& [property, schema] : properties.items()) {
    // The distance is at least the difference in length: skip what cannot be close, which
    // also bounds the work on a long name.
    const size_t length_gap = name.size() > property.size() ? name.size() - property.size()
                                                            : property.size() - name.size();
    if (!CloseEnough(name, property, length_gap)) continue;
    const size_t distance = EditDistance(name, property);
    if (distance < best_distance && CloseEnough(name, property, distance)) {
      best = {.name = property, .note = ""};
      best_distance = distance;
    }
  }
  return best;
}

// `name` as shown in a message: a name can be any string a client sent.
std::string Shown(std::string_view name) {
  constexpr size_t kMaxShownBytes = 64;
  if (name.size() <= kMaxShownBytes) return std::string(name);
  size_t end = kMaxShownBytes;
  while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(ToAbsl(name.substr(0, end)), "...");
}

// `schema` as tools/list shows it for a canonical tool: every object schema with properties,
// nested ones and array items included, says that it takes nothing else.
json StrictSchema(json schema) {
  if (!schema.is_object()) return schema;
  if (auto props = schema.find("properties"); props != schema.end() && props->is_object()) {
    schema["additionalProperties"] = false;
    for (json& property : *props) property = StrictSchema(std::move(property));
  }
  if (auto items = schema.find("items"); items != schema.end()) {
    *items = StrictSchema(std::move(*items));
  }
  return schema;
}

// The inputSchema a Perseus Vault client expects: the same arguments under its names.
json PerseusInputSchema(const ToolSpec& spec) {
  json schema = spec.input_schema;
  json& props = schema["properties"];
  for (const std::string& name : spec.canonical_only_args) props.erase(name);
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

absl::Status CheckDefinedArguments(const ToolSpec& tool, const json& schema, const json& args,
                                   const std::string& path) {
  if (!args.is_object()) return absl::OkStatus();
  const json empty = json::object();
  auto found = schema.find("properties");
  const json& properties = found != schema.end() && found->is_object() ? *found : empty;
  const std::string prefix = path.empty() ? "" : path + ".";
  for (const auto& [name, value] : args.items()) {
    auto property = properties.find(name);
    if (property != properties.end()) {
      if (value.is_object() && property->contains("properties")) {
        RETURN_IF_ERROR(CheckDefinedArguments(tool, *property, value, prefix + name));
      }
      continue;
    }
    std::string message = absl::StrCat(prefix, Shown(name), ": unknown argument of ", tool.name);
    const Suggestion suggestion = Suggest(tool, properties, name);
    if (!suggestion.note.empty()) absl::StrAppend(&message, " (", suggestion.note, ")");
    if (!suggestion.name.empty()) {
      absl::StrAppend(&message, "; did you mean ", prefix, suggestion.name, "?");
    } else if (properties.empty()) {
      absl::StrAppend(&message, ", which takes no arguments");
    } else {
      std::vector<std::string> known;
      for (const auto& [known_name, known_schema] : properties.items()) {
        known.push_back(prefix + known_name);
      }
      absl::StrAppend(&message, "; the known arguments are ", absl::StrJoin(known, ", "));
    }
    return absl::InvalidArgumentError(message);
  }
  return absl::OkStatus();
}

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
        // Perseus Vault clients send arguments beyond these (docs/compat.md), which are ignored.
        {"inputSchema", perseus ? PerseusInputSchema(spec) : StrictSchema(spec.input_schema)},
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

absl::StatusOr<json> ToolRegistry::Call(const Resolved& tool, const json& args, WorkControl work,
                                        const WorkspaceAccess* access) const {
  static const WorkspaceAccess kEveryWorkspace;
  const ToolContext ctx{.store = store_,
                        .tool = tool.spec,
                        .dialect = tool.dialect,
                        .work = std::move(work),
                        .access = access != nullptr ? access : &kEveryWorkspace};
  const json empty = json::object();
  const json& given = args.is_null() ? empty : args;
  if (!given.is_object()) {
    return absl::InvalidArgumentError("arguments: must be an object");
  }
  if (tool.dialect != Dialect::kPerseusVault) {
    // Before the handler runs, so that a misspelt argument (a valid time the caller meant to
    // set) never lets a write through without it.
    RETURN_IF_ERROR(CheckDefinedArguments(*tool.spec, tool.spec->input_schema, given));
    return tool.spec->handler(ctx, given);
  }
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
