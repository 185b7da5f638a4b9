// recall: find memories by what they say.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/args.h"
#include "tools/limits.h"
#include "tools/render.h"
#include "tools/tool.h"
#include "util/status_macros.h"

namespace strata::tools {
namespace {

using nlohmann::json;

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
  ASSIGN_OR_RETURN(r.filters.tags, a.StringList("tags", kMaxFilterTags));
  ASSIGN_OR_RETURN(r.as_of_unix_ms, a.OptionalTime("as_of"));
  ASSIGN_OR_RETURN(r.valid_at_unix_ms, a.OptionalTime("valid_at"));
  if (mode) {
    ASSIGN_OR_RETURN(r.mode, ParseMode(*mode));
  }
  ASSIGN_OR_RETURN(RecallResult result, ctx.store->Recall(r));
  json items = json::array();
  for (const RecallItem& item : result.items) items.push_back(ItemJson(item, ctx.dialect));
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
  };
  json item = VersionSchema();
  item["properties"]["score"] = {{"type", "number"}, {"description", "Higher is better"}};
  item["properties"]["fts5_rank"] = {{"type", json::array({"integer", "null"})}};
  item["properties"]["dense_rank"] = {{"type", json::array({"integer", "null"})}};
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
                         {{"items", {{"type", "array"}, {"items", item}}},
                          {"total", {{"type", "integer"}}},
                          {"mode", {{"type", "string"}}}}},
                        {"required", json::array({"items", "total", "mode"})}},
      .annotations = {{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}},
      .handler = Recall,
  });
  return tools;
}

}  // namespace strata::tools
