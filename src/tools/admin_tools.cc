// stats: what the store holds and how big it is; embed: vectors on demand.

#include <string>
#include <vector>

#include "tools/args.h"
#include "tools/render.h"
#include "tools/tool.h"
#include "util/status_macros.h"

namespace strata::tools {
namespace {

using nlohmann::json;

constexpr int64_t kMaxEmbedLimit = 1000000;

absl::StatusOr<json> GetStats(const ToolContext& ctx, const json&) {
  // Counts and paths span every workspace.
  RETURN_IF_ERROR(ctx.access->CheckUnrestricted("stats"));
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
      {"recall_modes", json::array()},
      {"embeddings", nullptr},
      {"dedup",
       {{"threshold", s.dedup.threshold},
        {"signatures",
         s.dedup.signatures_complete ? "complete" : "incomplete: run `strata rebuild-signatures`"},
        {"aliases", s.dedup.aliases},
        {"checks", s.dedup.checks},
        {"candidates_verified", s.dedup.candidates_verified},
        {"merges", s.dedup.merges},
        {"candidates_histogram", json::object()}}},
      {"group_commit",
       {{"groups", s.group_commit.groups}, {"writes", s.group_commit.writes}}},
  };
  if (const std::optional<EmbeddingStats>& e = s.embeddings) {
    out["embeddings"] = {
        {"embedder", e->embedder},
        {"dimension", e->dimension},
        {"vectors", e->vectors},
        {"pending", e->pending},
        {"indexed", e->indexed},
        {"index_state", e->index_state},
        {"embedded_since_start", e->embedded_since_start},
        {"last_error", e->last_error.empty() ? json(nullptr) : json(e->last_error)},
        {"index_file_size_bytes", e->index_file_bytes},
        {"similarity_floor", e->similarity_floor ? json(*e->similarity_floor) : json(nullptr)}};
  }
  // The modes a recall can run (auto picks one of them); dense ones need an embedder.
  for (RecallMode mode : kRecallModes) {
    if (mode == RecallMode::kFts5 || (s.embeddings && mode != RecallMode::kAuto)) {
      out["recall_modes"].push_back(RecallModeName(mode));
    }
  }
  for (const auto& [candidates, checks] : s.dedup.candidates_histogram) {
    out["dedup"]["candidates_histogram"][std::to_string(candidates)] = checks;
  }
  if (ctx.dialect == Dialect::kPerseusVault) {
    out["total_entities"] = s.total_memories;
    out["active_entities"] = s.active_memories;
  }
  return out;
}

// embed: vectors now for memories that have none yet. Perseus Vault clients send
// batch_category / batch_limit, or category + key for one memory (docs/compat.md).
absl::StatusOr<json> Embed(const ToolContext& ctx, const json& args) {
  const Args a(args);
  EmbedRequest r;
  ASSIGN_OR_RETURN(std::optional<std::string> category, a.OptionalString("category"));
  ASSIGN_OR_RETURN(std::optional<std::string> batch_category, a.OptionalString("batch_category"));
  r.category = category ? category : batch_category;
  ASSIGN_OR_RETURN(std::optional<std::string> key, a.OptionalString("key"));
  if (key) {
    if (!r.category) return absl::InvalidArgumentError("category: required with key");
    ASSIGN_OR_RETURN(std::optional<std::string> workspace, a.OptionalString("workspace"));
    r.identity =
        Identity{.category = *r.category, .key = *key, .workspace = workspace.value_or("")};
    RETURN_IF_ERROR(ctx.access->Check("workspace", r.identity->workspace));
    r.category.reset();
  } else {
    // A batch embeds, and counts, memories of every workspace.
    RETURN_IF_ERROR(ctx.access->CheckUnrestricted("embed without key"));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> limit, a.OptionalInt("limit", 1, kMaxEmbedLimit));
  ASSIGN_OR_RETURN(std::optional<int64_t> batch_limit,
                   a.OptionalInt("batch_limit", 1, kMaxEmbedLimit));
  r.limit = limit.value_or(batch_limit.value_or(100));
  ASSIGN_OR_RETURN(const EmbedResult e, ctx.store->Embed(r, ctx.work));
  json out = {{"embedded", e.embedded},
              {"attempted", e.attempted},
              {"failed", e.failed},
              {"remaining", e.remaining}};
  if (!e.error.empty()) out["error"] = e.error;
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
      .output_schema =
          {{"type", "object"},
           {"properties",
            {{"total_memories", {{"type", "integer"}}},
             {"active_memories", {{"type", "integer"}}},
             {"versions", {{"type", "integer"}}},
             {"by_category", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}}},
             {"db_file_size_bytes", {{"type", "integer"}}},
             {"recall_modes", {{"type", "array"}, {"items", {{"type", "string"}}}}},
             {"group_commit",
              {{"type", "object"},
               {"description",
                "Single writes over HTTP that shared a transaction (PostgreSQL), since this "
                "server started: transactions committed and the writes in them"},
               {"properties",
                {{"groups", {{"type", "integer"}}}, {"writes", {{"type", "integer"}}}}}}},
             {"embeddings",
              {{"type", json::array({"object", "null"})},
               {"description",
                "The embedder and its backlog; null with "
                "--embedder none"},
               {"properties",
                {{"embedder", {{"type", "string"}}},
                 {"dimension", {{"type", "integer"}}},
                 {"vectors", {{"type", "integer"}}},
                 {"pending", {{"type", "integer"}}},
                 {"indexed", {{"type", "integer"}}},
                 {"index_state", {{"enum", json::array({"loading", "building", "ready"})}}},
                 {"embedded_since_start", {{"type", "integer"}}},
                 {"last_error", {{"type", json::array({"string", "null"})}}},
                 {"index_file_size_bytes", {{"type", "integer"}}},
                 {"similarity_floor",
                  {{"type", json::array({"number", "null"})},
                   {"description",
                    "Dense matches below this cosine similarity are not recalled: unrelated "
                    "texts score up to it under this embedder; null until measured"}}}}}}}}},
           {"required", json::array({"total_memories", "active_memories", "versions", "by_category",
                                     "db_file_size_bytes"})}},
      .annotations = {{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}},
      .handler = GetStats,
  });
  tools.push_back({
      .name = "embed",
      .perseus_name = "perseus_vault_embed",
      .title = "Embed memories now",
      .description =
          "Give vectors (for dense and hybrid recall) to memories that have none yet, now, "
          "instead of waiting for the background worker. Reports progress when the request "
          "carries a progressToken. Returns how many were embedded and how many remain.",
      .input_schema = {{"type", "object"},
                       {"properties",
                        {{"category", StringProp("Only this category's memories.")},
                         {"key", StringProp("With category: only this memory.")},
                         {"workspace",
                          StringProp("With key: the memory's workspace (default \"\").")},
                         {"limit", IntProp("At most this many versions (default 100).")},
                         {"batch_category", StringProp("Perseus Vault's name for category.")},
                         {"batch_limit", IntProp("Perseus Vault's name for limit.")}}}},
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"embedded", {{"type", "integer"}}},
                          {"attempted", {{"type", "integer"}}},
                          {"failed", {{"type", "integer"}}},
                          {"remaining", {{"type", "integer"}}},
                          {"error", {{"type", "string"}}}}},
                        {"required",
                         json::array({"embedded", "attempted", "failed", "remaining"})}},
      .annotations = {{"readOnlyHint", false},
                      {"destructiveHint", false},
                      {"idempotentHint", true},
                      {"openWorldHint", false}},
      .handler = Embed,
  });
  return tools;
}

}  // namespace strata::tools
