// recall: find memories by what they say.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/args.h"
#include "tools/limits.h"
#include "tools/render.h"
#include "tools/snippet.h"
#include "tools/tool.h"
#include "util/status_macros.h"

namespace strata::tools {
namespace {

using nlohmann::json;

// The bounds of `max_chars`: below the lower, a snippet is too short to read.
constexpr int64_t kMinMaxChars = 40;
constexpr int64_t kMaxMaxChars = 100000;

// The JSON Schema of a recall item. Only `id` is required: `fields` and `max_chars` leave the
// others out when asked.
json ItemSchema() {
  json item = VersionSchema();
  item["description"] =
      "A memory. Every field below, unless fields chose some or max_chars cut the body.";
  json& p = item["properties"];
  p["score"] = {{"type", "number"}, {"description", "Higher is better"}};
  p["fts5_rank"] = {{"type", json::array({"integer", "null"})}};
  p["dense_rank"] = {{"type", json::array({"integer", "null"})}};
  p["snippet"] = {{"type", "string"},
                  {"description",
                   "A cut body's text (a string body, or the string values of an object body "
                   "one per line): max_chars characters around the first word the query "
                   "matched, or from the start."}};
  p["cut"] = {{"type", "boolean"},
              {"description", "true: body and body_json were left out, snippet stands in."}};
  p["body_chars"] = {{"type", "integer"},
                     {"description", "A cut body's text length in characters (code points)."}};
  item["required"] = json::array({"id"});
  return item;
}

// The names `fields` may list: the item's fields but a cut body's stand-ins.
std::vector<std::string> FieldNames() {
  std::vector<std::string> names;
  const json schema = ItemSchema();
  for (const auto& [name, property] : schema["properties"].items()) {
    if (!IsCutBodyField(name)) names.push_back(name);
  }
  return names;
}

// Reads `fields` and `max_chars` (canonical calls only: docs/compat.md).
absl::StatusOr<ItemShape> ReadShape(const Args& a) {
  static const std::vector<std::string>* const kFieldNames =
      new std::vector<std::string>(FieldNames());
  ItemShape shape;
  if (a.Has("fields")) {
    ASSIGN_OR_RETURN(std::vector<std::string> fields, a.StringList("fields", kFieldNames->size()));
    for (const std::string& field : fields) {
      if (std::find(kFieldNames->begin(), kFieldNames->end(), field) == kFieldNames->end()) {
        return absl::InvalidArgumentError(absl::StrCat("fields: each must be one of ",
                                                       absl::StrJoin(*kFieldNames, ", "),
                                                       "; got \"", field, "\""));
      }
    }
    shape.fields = std::move(fields);
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> max_chars,
                   a.OptionalInt("max_chars", kMinMaxChars, kMaxMaxChars));
  if (max_chars) shape.max_chars = static_cast<size_t>(*max_chars);
  return shape;
}

json ItemJson(const RecallItem& item, Dialect dialect) {
  json out = VersionJson(item.version, dialect);
  out["score"] = item.score;
  out["fts5_rank"] = item.fts5_rank ? json(*item.fts5_rank) : json(nullptr);
  out["dense_rank"] = item.dense_rank ? json(*item.dense_rank) : json(nullptr);
  if (dialect == Dialect::kPerseusVault && out["body"].is_object()) {
    // Perseus Vault clients read body fields from the item itself.
    for (const auto& [name, value] : out["body"].items()) {
      if (!out.contains(name)) out[name] = value;
    }
  }
  return out;
}

// A recall by a caller limited to some workspaces searches one of them: the one it names,
// else its only one; with several and none named, it must name one.
absl::Status ScopeToAccess(const WorkspaceAccess& access, std::optional<std::string>& workspace) {
  if (workspace) return access.Check("workspace", *workspace);
  if (access.unrestricted()) return absl::OkStatus();
  if (access.allowed().size() == 1) {
    workspace = access.allowed().front();
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      "workspace: required for this token, which may use several workspaces but not all");
}

json ModeNames() {
  json names = json::array();
  for (RecallMode mode : kRecallModes) names.push_back(RecallModeName(mode));
  return names;
}

absl::StatusOr<RecallMode> ParseMode(const std::string& name) {
  if (std::optional<RecallMode> mode = RecallModeNamed(name)) return *mode;
  std::string names;
  for (RecallMode mode : kRecallModes) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", "\"", RecallModeName(mode), "\"");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("mode: must be one of ", names, ", got \"", name.substr(0, 40), "\""));
}

absl::StatusOr<json> Recall(const ToolContext& ctx, const json& args) {
  const Args a(args);
  RecallRequest r;
  ASSIGN_OR_RETURN(std::optional<std::string> query, a.OptionalString("query"));
  r.query = query.value_or("");
  ASSIGN_OR_RETURN(std::optional<std::string> mode, a.OptionalString("mode"));
  ASSIGN_OR_RETURN(std::optional<int64_t> limit, a.OptionalInt("limit", 1, kMaxRecallLimit));
  r.limit = static_cast<int>(limit.value_or(10));
  ASSIGN_OR_RETURN(std::optional<int64_t> offset, a.OptionalInt("offset", 0, kMaxRecallOffset));
  r.offset = static_cast<int>(offset.value_or(0));
  ASSIGN_OR_RETURN(r.filters.category, a.OptionalString("category"));
  ASSIGN_OR_RETURN(r.filters.type, a.OptionalString("type"));
  ASSIGN_OR_RETURN(r.filters.workspace, a.OptionalString("workspace"));
  RETURN_IF_ERROR(ScopeToAccess(*ctx.access, r.filters.workspace));
  ASSIGN_OR_RETURN(r.filters.tags, a.StringList("tags", kMaxFilterTags));
  ASSIGN_OR_RETURN(r.as_of_unix_ms, a.OptionalTime("as_of"));
  ASSIGN_OR_RETURN(r.valid_at_unix_ms, a.OptionalTime("valid_at"));
  if (mode) {
    ASSIGN_OR_RETURN(r.mode, ParseMode(*mode));
  }
  ItemShape shape;
  if (ctx.dialect == Dialect::kCanonical) {
    ASSIGN_OR_RETURN(shape, ReadShape(a));
  }
  ASSIGN_OR_RETURN(RecallResult result, ctx.store->Recall(r));
  const std::optional<QueryTerms> terms =
      shape.max_chars ? std::make_optional<QueryTerms>(r.query) : std::nullopt;
  shape.query = terms ? &*terms : nullptr;
  json items = json::array();
  for (const RecallItem& item : result.items) {
    items.push_back(ItemJson(item, ctx.dialect));
    ShapeItem(shape, items.back());
  }
  return json{
      {"total", items.size()}, {"items", std::move(items)}, {"mode", RecallModeName(result.mode)}};
}

}  // namespace

std::vector<ToolSpec> RecallTools() {
  json props = {
      {"query", StringProp("What to look for, in plain words. Not a query language: words are "
                           "matched (stemmed) and, in dense and hybrid modes, meaning too; "
                           "best matches first. Empty: newest memories.")},
      {"mode",
       {{"type", "string"},
        {"enum", ModeNames()},
        {"description",
         "fts5 ranks by keywords (BM25); dense by meaning (embeddings); hybrid runs both and "
         "fuses their ranks. auto (default): hybrid once embeddings exist, else fts5."}}},
      {"limit", IntProp(absl::StrCat("How many results (1-", kMaxRecallLimit, ", default 10)."))},
      {"offset", IntProp("How many of the best results to skip, for paging (default 0).")},
      {"category", StringProp("Only memories of this category.")},
      {"type", StringProp("Only memories of this type.")},
      {"workspace", StringProp("Only memories of this workspace (\"\" is global). Default: "
                               "every workspace.")},
      {"tags",
       {{"type", "array"},
        {"items", {{"type", "string"}}},
        {"description", absl::StrCat("Only memories carrying every one of these tags (at most ",
                                     kMaxFilterTags, ").")}}},
      {"as_of", TimeProp("Search what was believed at this past instant instead of now.")},
      {"valid_at", TimeProp("Only versions true in the world at this instant.")},
      {"fields",
       {{"type", "array"},
        {"items", {{"type", "string"}, {"enum", FieldNames()}}},
        {"description",
         "Only these fields of each item (id always comes), to keep the answer short, e.g. "
         "[\"key\", \"body\", \"score\"]. Default: every field."}}},
      {"max_chars",
       IntProp(absl::StrCat(
           "Longest body text to return whole, in characters (", kMinMaxChars, "-", kMaxMaxChars,
           "). A longer body comes as a snippet of this many characters around the first "
           "word the query matched, with cut: true and body_chars (its full length), and "
           "without body and body_json; get by id returns it whole. Default: no limit."))},
  };
  std::vector<ToolSpec> tools;
  tools.push_back({
      .name = "recall",
      .perseus_name = "perseus_vault_recall",
      .title = "Recall",
      .description =
          "Find memories relevant to a question or topic, best first. Filter by category, "
          "type, tags or workspace; add as_of or valid_at to search the past.",
      .input_schema = {{"type", "object"}, {"properties", props}},
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"items", {{"type", "array"}, {"items", ItemSchema()}}},
                          {"total", {{"type", "integer"}}},
                          {"mode", {{"type", "string"}}}}},
                        {"required", json::array({"items", "total", "mode"})}},
      .annotations = {{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}},
      .handler = Recall,
      .canonical_only_args = {"fields", "max_chars"},
  });
  return tools;
}

}  // namespace strata::tools
