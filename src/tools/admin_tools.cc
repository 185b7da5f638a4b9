// stats: what the store holds and how big it is.

#include <string>
#include <vector>

#include "tools/render.h"
#include "tools/tool.h"
#include "util/status_macros.h"

namespace strata::tools {
namespace {

using nlohmann::json;

absl::StatusOr<json> GetStats(const ToolContext& ctx, const json&) {
  ASSIGN_OR_RETURN(Stats s, ctx.store->GetStats());
  json out = {
      {"total_memories", s.total_memories},
      {"active_memories", s.active_memories},
      {"forgotten_memories", s.total_memories - s.active_memories},
      {"versions", s.versions},
      {"by_category", s.active_by_category},
      {"db_file_size_bytes", s.db_file_bytes},
      {"wal_file_size_bytes", s.wal_file_bytes},
      {"schema_version", s.schema_version},
      {"durability", s.durability == Durability::kFull ? "full" : "normal"},
      {"path", s.path},
      {"server_version", kVersion},
      {"recall_modes", json::array({"fts5"})},
      {"embeddings", "not available in this build"},
      {"dedup",
       {{"threshold", s.dedup.threshold},
        {"signatures",
         s.dedup.signatures_complete ? "complete" : "incomplete: run `strata rebuild-signatures`"},
        {"aliases", s.dedup.aliases},
        {"checks", s.dedup.checks},
        {"candidates_verified", s.dedup.candidates_verified},
        {"merges", s.dedup.merges},
        {"candidates_histogram", json::object()}}},
  };
  for (const auto& [candidates, checks] : s.dedup.candidates_histogram) {
    out["dedup"]["candidates_histogram"][std::to_string(candidates)] = checks;
  }
  if (ctx.dialect == Dialect::kPerseusVault) {
    out["total_entities"] = s.total_memories;
    out["active_entities"] = s.active_memories;
  }
  return out;
}

}  // namespace

std::vector<ToolSpec> AdminTools() {
  std::vector<ToolSpec> tools;
  tools.push_back({
      .name = "stats",
      .perseus_name = "perseus_vault_stats",
      .title = "Store statistics",
      .description = "How many memories and versions the store holds, per category, and the "
                     "size of its files.",
      .input_schema = {{"type", "object"}, {"properties", json::object()}},
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"total_memories", {{"type", "integer"}}},
                          {"active_memories", {{"type", "integer"}}},
                          {"versions", {{"type", "integer"}}},
                          {"by_category",
                           {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}}},
                          {"db_file_size_bytes", {{"type", "integer"}}}}},
                        {"required", json::array({"total_memories", "active_memories", "versions",
                                                  "by_category", "db_file_size_bytes"})}},
      .annotations = {{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}},
      .handler = GetStats,
  });
  return tools;
}

}  // namespace strata::tools
