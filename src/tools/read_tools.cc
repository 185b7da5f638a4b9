// get, history, as_of, valid_at, bitemporal: reads of one memory, on either time axis.

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

// {found: true, <version>} or {found: false, category, key, workspace}.
json LookupJson(const Identity& identity, const std::optional<Version>& version, Dialect dialect) {
  if (version) {
    json out = VersionJson(*version, dialect);
    out["found"] = true;
    return out;
  }
  return {{"found", false},
          {"category", identity.category},
          {"key", identity.key},
          {"workspace", identity.workspace}};
}

// Echoes a query instant under its canonical name and, for Perseus Vault, "<name>_unix_ms".
void EchoInstant(json& out, const char* name, int64_t unix_ms, Dialect dialect) {
  out[name] = unix_ms;
  if (dialect == Dialect::kPerseusVault) out[absl::StrCat(name, "_unix_ms")] = unix_ms;
}

json LookupSchema(std::initializer_list<const char*> instants) {
  json schema = VersionSchema();
  schema["properties"]["found"] = {{"type", "boolean"},
                                   {"description", "false when no version matches"}};
  for (const char* name : instants) schema["properties"][name] = {{"type", "integer"}};
  schema["required"] = json::array({"found", "category", "key"});
  return schema;
}

json LookupInputSchema(std::initializer_list<std::pair<const char*, const char*>> times) {
  json props = IdentityProps();
  json required = json::array({"category", "key"});
  for (const auto& [name, description] : times) {
    props[name] = TimeProp(description);
    required.push_back(name);
  }
  return {{"type", "object"}, {"properties", props}, {"required", required}};
}

absl::StatusOr<json> Get(const ToolContext& ctx, const json& args) {
  const Args a(args);
  absl::StatusOr<Version> version = absl::NotFoundError("");
  Identity identity;
  if (a.Has("id")) {
    ASSIGN_OR_RETURN(std::optional<int64_t> id, a.OptionalInt("id", 1, INT64_MAX));
    version = ctx.store->GetById(*id);
    // A memory of a workspace the caller may not use is not there for it.
    if ((!version.ok() && version.status().code() == absl::StatusCode::kNotFound) ||
        (version.ok() && !ctx.access->Allows(version->identity.workspace))) {
      return json{{"found", false}, {"id", *id}};
    }
  } else {
    if (!a.Has("category") && !a.Has("key")) {
      return absl::InvalidArgumentError("id: required (or category and key)");
    }
    ASSIGN_OR_RETURN(identity, ReadIdentity(a));
    RETURN_IF_ERROR(ctx.access->Check("workspace", identity.workspace));
    version = ctx.store->Get(identity);
  }
  if (!version.ok() && version.status().code() == absl::StatusCode::kNotFound) {
    return LookupJson(identity, std::nullopt, ctx.dialect);
  }
  if (!version.ok()) return version.status();
  return LookupJson(identity, *version, ctx.dialect);
}

// The other ends of a memory's explicit corrections (supersedes), those in workspaces the
// caller may use.
json LinksJson(const std::vector<SupersessionLink>& links, const WorkspaceAccess& access) {
  json out = json::array();
  for (const SupersessionLink& link : links) {
    if (!access.Allows(link.identity.workspace)) continue;
    out.push_back(MemoryRefJson(link.memory_id, link.identity));
    out.back()["at"] = link.at_unix_ms;
  }
  return out;
}

// `what`: which memories they are.
json LinksSchema(const char* what) {
  const json at = {{"type", "integer"}, {"description", "When the correction was recorded"}};
  return {{"type", "array"},
          {"description", absl::StrCat(what, " (remember with supersedes), oldest first")},
          {"items", MemoryRefSchema("", {{"at", at}})}};
}

absl::StatusOr<json> History(const ToolContext& ctx, const json& args) {
  const Args a(args);
  ASSIGN_OR_RETURN(Identity identity, ReadIdentity(a));
  RETURN_IF_ERROR(ctx.access->Check("workspace", identity.workspace));
  ASSIGN_OR_RETURN(std::optional<int64_t> limit, a.OptionalInt("limit", 1, kMaxHistoryLimit));
  ASSIGN_OR_RETURN(std::optional<int64_t> offset, a.OptionalInt("offset", 0, kMaxHistoryOffset));
  json out = {
      {"category", identity.category}, {"key", identity.key}, {"workspace", identity.workspace}};
  absl::StatusOr<HistoryPage> page = ctx.store->History(
      identity, static_cast<int>(limit.value_or(20)), static_cast<int>(offset.value_or(0)));
  if (!page.ok() && page.status().code() == absl::StatusCode::kNotFound) {
    out["found"] = false;
    out["versions"] = json::array();
    out["total"] = 0;
    out["returned"] = 0;
    out["forgotten_at"] = json::array();
    out["successors"] = json::array();
    out["predecessors"] = json::array();
    return out;
  }
  if (!page.ok()) return page.status();
  json versions = json::array();
  for (const Version& v : page->versions) versions.push_back(VersionJson(v, ctx.dialect));
  out["found"] = true;
  out["returned"] = versions.size();
  out["versions"] = std::move(versions);
  out["total"] = page->total;
  out["forgotten_at"] = page->retracted_at_unix_ms;
  out["successors"] = LinksJson(page->successors, *ctx.access);
  out["predecessors"] = LinksJson(page->predecessors, *ctx.access);
  return out;
}

absl::StatusOr<json> AsOf(const ToolContext& ctx, const json& args) {
  const Args a(args);
  ASSIGN_OR_RETURN(Identity identity, ReadIdentity(a));
  RETURN_IF_ERROR(ctx.access->Check("workspace", identity.workspace));
  ASSIGN_OR_RETURN(int64_t as_of, a.RequiredTime("as_of"));
  ASSIGN_OR_RETURN(std::optional<Version> v, ctx.store->AsOf(identity, as_of));
  json out = LookupJson(identity, v, ctx.dialect);
  EchoInstant(out, "as_of", as_of, ctx.dialect);
  return out;
}

absl::StatusOr<json> ValidAt(const ToolContext& ctx, const json& args) {
  const Args a(args);
  ASSIGN_OR_RETURN(Identity identity, ReadIdentity(a));
  RETURN_IF_ERROR(ctx.access->Check("workspace", identity.workspace));
  ASSIGN_OR_RETURN(int64_t valid_at, a.RequiredTime("valid_at"));
  ASSIGN_OR_RETURN(std::optional<Version> v, ctx.store->ValidAt(identity, valid_at));
  json out = LookupJson(identity, v, ctx.dialect);
  EchoInstant(out, "valid_at", valid_at, ctx.dialect);
  return out;
}

absl::StatusOr<json> Bitemporal(const ToolContext& ctx, const json& args) {
  const Args a(args);
  ASSIGN_OR_RETURN(Identity identity, ReadIdentity(a));
  RETURN_IF_ERROR(ctx.access->Check("workspace", identity.workspace));
  ASSIGN_OR_RETURN(int64_t tx_at, a.RequiredTime("tx_at"));
  ASSIGN_OR_RETURN(int64_t valid_at, a.RequiredTime("valid_at"));
  ASSIGN_OR_RETURN(std::optional<Version> v, ctx.store->Bitemporal(identity, tx_at, valid_at));
  json out = LookupJson(identity, v, ctx.dialect);
  EchoInstant(out, "tx_at", tx_at, ctx.dialect);
  EchoInstant(out, "valid_at", valid_at, ctx.dialect);
  return out;
}

constexpr auto kReadOnly = [] {
  return json{{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}};
};

}  // namespace

std::vector<ToolSpec> ReadTools() {
  std::vector<ToolSpec> tools;
  tools.push_back({
      .name = "get",
      .perseus_name = "perseus_vault_get_entity",
      .title = "Get a memory",
      .description = "The current version of one memory, by id or by (category, key). "
                     "found is false when it does not exist or was forgotten.",
      .input_schema = {{"type", "object"},
                       {"properties",
                        [] {
                          json p = IdentityProps();
                          p["id"] = {{"type", json::array({"integer", "string"})},
                                     {"description", "The memory's id, from recall or remember."}};
                          return p;
                        }()}},
      .output_schema = LookupSchema({}),
      .annotations = kReadOnly(),
      .handler = Get,
  });
  tools.back().output_schema["required"] = json::array({"found"});
  tools.push_back({
      .name = "history",
      .perseus_name = "perseus_vault_history",
      .title = "History of a memory",
      .description = "Every version of one memory, newest recorded first, including versions "
                     "that were superseded or forgotten, with when each was true and believed.",
      .input_schema = {{"type", "object"},
                       {"properties",
                        [] {
                          json p = IdentityProps();
                          p["limit"] = IntProp(absl::StrCat("How many versions (1-",
                                                            kMaxHistoryLimit, ", default 20)."));
                          p["offset"] = IntProp("How many of the newest to skip (default 0).");
                          return p;
                        }()},
                       {"required", json::array({"category", "key"})}},
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"found", {{"type", "boolean"}}},
                          {"category", {{"type", "string"}}},
                          {"key", {{"type", "string"}}},
                          {"versions", {{"type", "array"}, {"items", VersionSchema()}}},
                          {"total", {{"type", "integer"}}},
                          {"returned", {{"type", "integer"}}},
                          {"forgotten_at", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
                          {"successors", LinksSchema("Memories that superseded this one")},
                          {"predecessors", LinksSchema("Memories this one superseded")}}},
                        {"required", json::array({"found", "versions", "total", "returned"})}},
      .annotations = kReadOnly(),
      .handler = History,
  });
  tools.push_back({
      .name = "as_of",
      .perseus_name = "perseus_vault_as_of",
      .title = "What was believed then",
      .description = "The version of a memory that strata believed at a past instant "
                     "(transaction time), e.g. what did we think the deadline was last Monday.",
      .input_schema = LookupInputSchema({{"as_of", "The instant of belief."}}),
      .output_schema = LookupSchema({"as_of"}),
      .annotations = kReadOnly(),
      .handler = AsOf,
  });
  tools.push_back({
      .name = "valid_at",
      .perseus_name = "perseus_vault_valid_at",
      .title = "What was true then",
      .description = "The version of a memory that, by what strata believes now, was true in "
                     "the world at an instant (valid time), e.g. her title on 2025-06-01.",
      .input_schema = LookupInputSchema({{"valid_at", "The instant in the world."}}),
      .output_schema = LookupSchema({"valid_at"}),
      .annotations = kReadOnly(),
      .handler = ValidAt,
  });
  tools.push_back({
      .name = "bitemporal",
      .perseus_name = "perseus_vault_bitemporal",
      .title = "What was believed then about another time",
      .description = "The version of a memory that, as believed at tx_at, was true at "
                     "valid_at: both time axes at once.",
      .input_schema = LookupInputSchema(
          {{"tx_at", "The instant of belief."}, {"valid_at", "The instant in the world."}}),
      .output_schema = LookupSchema({"tx_at", "valid_at"}),
      .annotations = kReadOnly(),
      .handler = Bitemporal,
  });
  return tools;
}

}  // namespace strata::tools
