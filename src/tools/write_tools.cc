// remember, remember_batch, forget, purge.

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/args.h"
#include "tools/limits.h"
#include "tools/render.h"
#include "tools/tool.h"
#include "util/json_text.h"
#include "util/status_macros.h"

namespace strata::tools {
namespace {

using nlohmann::json;

// Finds where a JSON text stops parsing, without nlohmann's exceptions.
class SyntaxCheck final : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& error) override {
    // nlohmann counts from 1 and says "[json.exception.parse_error.101] parse error at line 1,
    // column 9: syntax error while parsing object key - unexpected '}'; ...": keep the reason.
    offset_ = position > 0 ? position - 1 : 0;
    std::string_view what = error.what();
    if (const size_t dash = what.find(" - "); dash != std::string_view::npos) {
      what.remove_prefix(dash + 3);
    }
    // The last token read can be a whole unterminated string.
    constexpr size_t kMaxReasonBytes = 120;
    reason_ = what.size() <= kMaxReasonBytes ? std::string(what)
                                             : std::string(what.substr(0, kMaxReasonBytes)) + "...";
    return false;
  }

  // OK, or the InvalidArgument for a text that is not JSON.
  absl::Status Check(const std::string& text) {
    if (json::sax_parse(text, this)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("body_json: not a JSON text (syntax error at byte ", offset_, ": ", reason_,
                     "); give text that is not JSON as body, a string"));
  }

 private:
  size_t offset_ = 0;  // From 0.
  std::string reason_;
};

// The body as a JSON text: `body` (any JSON value) or `body_json` (a JSON text). A Perseus
// Vault body_json that is not JSON reaches here as `body` (registry.cc); a canonical one is
// refused, since storing it as a string would hide a client's broken JSON.
absl::StatusOr<std::string> ReadBody(const Args& args) {
  const json* body = args.Raw("body");
  const json* body_json = args.Raw("body_json");
  if (body != nullptr && body_json != nullptr) {
    return absl::InvalidArgumentError("body: give either body or body_json, not both");
  }
  std::string text;
  if (body_json != nullptr) {
    if (!body_json->is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "body_json: must be a string holding JSON text, got ", JsonTypeName(*body_json)));
    }
    text = body_json->get<std::string>();
  } else if (body != nullptr) {
    text = JsonText(*body);
  } else {
    return absl::InvalidArgumentError(
        "body: required (an object or a string; or body_json, a JSON text)");
  }
  if (text.size() > kMaxBodyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("body: at most ", kMaxBodyBytes, " bytes, got ", text.size()));
  }
  // The slow check finds where the text stops being JSON, for the error.
  if (body_json != nullptr && !IsJsonText(text)) RETURN_IF_ERROR(SyntaxCheck().Check(text));
  return text;
}

// `supersedes`: {category, key[, workspace]}, the memory a write corrects. Its workspace
// defaults to that of the memory written.
absl::StatusOr<std::optional<Identity>> ReadSupersedes(const Args& args, const Identity& writer) {
  const json* supersedes = args.Raw("supersedes");
  if (supersedes == nullptr || supersedes->is_null()) return std::nullopt;
  if (!supersedes->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "supersedes: must be an object {category, key[, workspace]} naming the memory this one "
        "corrects, got ",
        JsonTypeName(*supersedes)));
  }
  const Args target(*supersedes);
  absl::StatusOr<Identity> identity = ReadIdentity(target);
  if (!identity.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("supersedes.", identity.status().message()));
  }
  if (!target.Has("workspace")) identity->workspace = writer.workspace;
  return *std::move(identity);
}

absl::StatusOr<WriteRequest> ReadWrite(const json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("item: must be an object, got ", JsonTypeName(object)));
  }
  const Args args(object);
  WriteRequest r;
  ASSIGN_OR_RETURN(r.identity, ReadIdentity(args));
  ASSIGN_OR_RETURN(r.body_json, ReadBody(args));
  ASSIGN_OR_RETURN(std::optional<std::string> type, args.OptionalString("type"));
  if (type) r.type = *std::move(type);
  ASSIGN_OR_RETURN(r.tags, args.StringList("tags", kMaxTags));
  ASSIGN_OR_RETURN(r.source, args.OptionalString("source"));
  ASSIGN_OR_RETURN(r.importance, args.OptionalNumber("importance"));
  ASSIGN_OR_RETURN(r.valid_from_unix_ms, args.OptionalTime("valid_from"));
  ASSIGN_OR_RETURN(r.valid_to_unix_ms, args.OptionalTime("valid_to"));
  ASSIGN_OR_RETURN(std::optional<bool> dedup, args.OptionalBool("dedup"));
  ASSIGN_OR_RETURN(std::optional<bool> skip_dedup, args.OptionalBool("skip_dedup"));
  r.dedup = dedup.value_or(true) && !skip_dedup.value_or(false);
  ASSIGN_OR_RETURN(r.supersedes, ReadSupersedes(args, r.identity));
  return r;
}

// OK when the caller may use every workspace `request` names: its own and the one it
// supersedes in.
absl::Status CheckWriteAccess(const ToolContext& ctx, const WriteRequest& request) {
  RETURN_IF_ERROR(ctx.access->Check("workspace", request.identity.workspace));
  if (request.supersedes) {
    RETURN_IF_ERROR(ctx.access->Check("supersedes.workspace", request.supersedes->workspace));
  }
  return absl::OkStatus();
}

// The result of writing `request`. On a merge, category/key are the caller's and
// `merged_into` names the memory that holds the body.
json WriteResultJson(const WriteRequest& request, const WriteResult& result) {
  const Version& v = result.version;
  json out = {
      {"ok", true},
      {"action", WriteActionName(result.action)},
      {"id", v.memory_id},
      {"category", request.identity.category},
      {"key", request.identity.key},
      {"workspace", request.identity.workspace},
      {"version", v.version},
      {"recorded_at", v.recorded_at_unix_ms},
      {"valid_from", v.valid_from_unix_ms},
      {"valid_to", v.valid_to_unix_ms ? json(*v.valid_to_unix_ms) : json(nullptr)},
      {"deduped", result.action == WriteAction::kDeduped},
  };
  if (result.action == WriteAction::kDeduped) {
    out["merged_into"] = MemoryRefJson(v.memory_id, v.identity);
    out["similarity"] = result.similarity.value_or(1.0);
  }
  if (const std::optional<SupersessionLink>& s = result.supersedes) {
    out["supersedes"] = MemoryRefJson(s->memory_id, s->identity);
  }
  if (result.action == WriteAction::kCreated) {
    json similar = json::array();
    for (const SimilarMemory& m : result.similar) {
      similar.push_back(MemoryRefJson(m.memory_id, m.identity));
      similar.back()["similarity"] = m.similarity;
    }
    out["similar"] = std::move(similar);
  }
  return out;
}

json WriteInputProps() {
  json props = IdentityProps();
  props["body"] = {{"description",
                    "The memory: an object (e.g. {\"text\": \"...\"}) or a string. Its string "
                    "values are searchable."}};
  props["body_json"] = StringProp("Alternative to body: the memory as a JSON text.");
  props["type"] = StringProp("Kind of memory, e.g. insight (default), decision, fact.");
  props["tags"] = {{"type", "array"},
                   {"items", {{"type", "string"}}},
                   {"description", "Labels to filter recall by (at most 64)."}};
  props["source"] = StringProp("Where this came from (a file, a conversation, a URL).");
  props["importance"] = {{"type", "number"}, {"description", "Optional weight, e.g. 0 to 1."}};
  props["valid_from"] = TimeProp("When the fact became true in the world (default: now).");
  props["valid_to"] = TimeProp("When the fact stopped being true (default: still true).");
  props["dedup"] = {{"type", "boolean"},
                    {"description",
                     "false stores the memory even if it nearly duplicates "
                     "another (default true)."}};
  props["supersedes"] = {
      {"type", "object"},
      {"description",
       "The memory this one corrects or replaces: its valid period ends where this one's "
       "begins (valid_from), recall stops returning it, and both histories name each other. "
       "Its history and as_of reads from before are kept. It must exist and be current; an "
       "error writes nothing."},
      {"properties",
       {{"category", StringProp("Category of the memory superseded.")},
        {"key", StringProp("Key of the memory superseded.")},
        {"workspace", StringProp("Its workspace (default: this memory's workspace).")}}},
      {"required", json::array({"category", "key"})}};
  return props;
}

json WriteResultSchema() {
  return {{"type", "object"},
          {"properties",
           {{"ok", {{"type", "boolean"}}},
            {"action",
             {{"type", "string"},
              {"enum", json::array({"created", "updated", "unchanged", "deduped"})}}},
            {"deduped", {{"type", "boolean"}}},
            {"merged_into", MemoryRefSchema("On a merge: the memory that holds this body")},
            {"similarity",
             {{"type", "number"},
              {"description", "On a merge: character-trigram Jaccard similarity, 0 to 1"}}},
            {"similar",
             {{"type", "array"},
              {"description",
               "On a new memory: stored memories it closely resembles but adds information to "
               "(at most 5, most similar first). If it corrects one of them, remember again "
               "with supersedes naming it."},
              {"items", MemoryRefSchema("", {{"similarity", {{"type", "number"}}}})}}},
            {"supersedes", MemoryRefSchema("With supersedes: the memory this write superseded")},
            {"id", {{"type", "integer"}}},
            {"category", {{"type", "string"}}},
            {"key", {{"type", "string"}}},
            {"workspace", {{"type", "string"}}},
            {"version", {{"type", "integer"}}},
            {"recorded_at", {{"type", "integer"}}},
            {"valid_from", {{"type", "integer"}}},
            {"valid_to", {{"type", json::array({"integer", "null"})}}}}},
          {"required", json::array({"ok", "action", "id", "category", "key", "version"})}};
}

absl::StatusOr<json> Remember(const ToolContext& ctx, const json& args) {
  ASSIGN_OR_RETURN(WriteRequest request, ReadWrite(args));
  RETURN_IF_ERROR(CheckWriteAccess(ctx, request));
  ASSIGN_OR_RETURN(WriteResult result, ctx.store->Remember(request));
  return WriteResultJson(request, result);
}

// An item of remember_batch. Canonical calls have its argument names checked here rather than
// by the registry, so that an item with a name remember does not define fails alone.
absl::StatusOr<WriteRequest> ReadBatchItem(const ToolContext& ctx, const json& item, size_t index) {
  if (ctx.dialect == Dialect::kCanonical) {
    const json& item_schema = ctx.tool->input_schema["properties"]["items"]["items"];
    RETURN_IF_ERROR(
        CheckDefinedArguments(*ctx.tool, item_schema, item, absl::StrCat("items[", index, "]")));
  }
  ASSIGN_OR_RETURN(WriteRequest request, ReadWrite(item));
  RETURN_IF_ERROR(CheckWriteAccess(ctx, request));
  return request;
}

absl::StatusOr<json> RememberBatch(const ToolContext& ctx, const json& args) {
  const json* items = Args(args).Raw("items");
  if (items == nullptr) return absl::InvalidArgumentError("items: required");
  if (!items->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("items: must be an array of memories, got ", JsonTypeName(*items)));
  }
  if (items->size() > kMaxBatchItems) {
    return absl::InvalidArgumentError(
        absl::StrCat("items: at most ", kMaxBatchItems, " per batch, got ", items->size()));
  }
  // Items that fail to parse never reach the store; `slot` maps store results back.
  std::vector<json> results(items->size());
  std::vector<WriteRequest> requests;
  std::vector<size_t> slot;
  for (size_t i = 0; i < items->size(); ++i) {
    absl::StatusOr<WriteRequest> request = ReadBatchItem(ctx, (*items)[i], i);
    if (request.ok()) {
      requests.push_back(*std::move(request));
      slot.push_back(i);
    } else {
      results[i] = {{"ok", false}, {"error", std::string(request.status().message())}};
    }
  }
  ASSIGN_OR_RETURN(std::vector<absl::StatusOr<WriteResult>> written,
                   ctx.store->RememberBatch(requests, ctx.work));
  for (size_t j = 0; j < written.size(); ++j) {
    results[slot[j]] =
        written[j].ok()
            ? WriteResultJson(requests[j], *written[j])
            : json{{"ok", false}, {"error", std::string(written[j].status().message())}};
  }
  json counts = {{"created", 0}, {"updated", 0}, {"unchanged", 0}, {"deduped", 0}, {"failed", 0}};
  for (size_t i = 0; i < results.size(); ++i) {
    results[i]["index"] = i;
    if (results[i]["ok"].get<bool>()) {
      counts[results[i]["action"].get<std::string>()] =
          counts[results[i]["action"].get<std::string>()].get<int>() + 1;
    } else {
      counts["failed"] = counts["failed"].get<int>() + 1;
    }
  }
  json out = counts;
  out["ok"] = counts["failed"].get<int>() == 0;
  out["results"] = std::move(results);
  return out;
}

absl::StatusOr<json> Forget(const ToolContext& ctx, const json& args) {
  const Args a(args);
  ASSIGN_OR_RETURN(Identity identity, ReadIdentity(a));
  RETURN_IF_ERROR(ctx.access->Check("workspace", identity.workspace));
  ASSIGN_OR_RETURN(std::optional<std::string> reason, a.OptionalString("reason"));
  ASSIGN_OR_RETURN(bool forgotten, ctx.store->Forget(identity, reason.value_or("")));
  return json{{"found", forgotten},
              {"forgotten", forgotten},
              {"category", identity.category},
              {"key", identity.key},
              {"workspace", identity.workspace}};
}

absl::StatusOr<json> Purge(const ToolContext& ctx, const json& args) {
  ASSIGN_OR_RETURN(Identity identity, ReadIdentity(Args(args)));
  RETURN_IF_ERROR(ctx.access->Check("workspace", identity.workspace));
  ASSIGN_OR_RETURN(int64_t erased, ctx.store->Purge(identity));
  return json{{"found", erased > 0},
              {"purged_versions", erased},
              {"category", identity.category},
              {"key", identity.key},
              {"workspace", identity.workspace}};
}

}  // namespace

std::vector<ToolSpec> WriteTools() {
  std::vector<ToolSpec> tools;
  tools.push_back({
      .name = "remember",
      .perseus_name = "perseus_vault_remember",
      .title = "Remember",
      .description =
          "Store a memory under (category, key). Writing the same key again creates a new "
          "version and keeps the old one in history; an identical body changes nothing "
          "(action \"unchanged\"). A new key whose text nearly duplicates a memory of the same "
          "category and adds nothing to it (no new word, number or value) is merged into it "
          "(action \"deduped\", see merged_into) and reads by the new key find that memory; one "
          "that adds something is stored, and `similar` lists the memories it resembles. "
          "dedup: false skips the check. Give valid_from/valid_to "
          "when the fact was or will be true at other times than now. To correct or replace "
          "another memory, name it in supersedes: it stops being recalled.",
      .input_schema = {{"type", "object"},
                       {"properties", WriteInputProps()},
                       {"required", json::array({"category", "key"})}},
      .output_schema = WriteResultSchema(),
      .annotations = {{"readOnlyHint", false},
                      {"destructiveHint", false},
                      {"idempotentHint", true},
                      {"openWorldHint", false}},
      .handler = Remember,
  });
  tools.push_back({
      .name = "remember_batch",
      .title = "Remember many",
      .description =
          "Store many memories in one transaction (up to 10000). Each item takes the arguments "
          "of remember and gets its own result; a bad item fails alone.",
      .input_schema = {{"type", "object"},
                       {"properties",
                        {{"items",
                          {{"type", "array"},
                           {"items", {{"type", "object"}, {"properties", WriteInputProps()}}},
                           {"description", "The memories to store."}}}}},
                       {"required", json::array({"items"})}},
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"ok",
                           {{"type", "boolean"}, {"description", "true when no item failed"}}},
                          {"created", {{"type", "integer"}}},
                          {"updated", {{"type", "integer"}}},
                          {"unchanged", {{"type", "integer"}}},
                          {"deduped", {{"type", "integer"}}},
                          {"failed", {{"type", "integer"}}},
                          {"results", {{"type", "array"}, {"items", {{"type", "object"}}}}}}},
                        {"required", json::array({"ok", "results", "failed"})}},
      .annotations = {{"readOnlyHint", false},
                      {"destructiveHint", false},
                      {"idempotentHint", true},
                      {"openWorldHint", false}},
      .handler = RememberBatch,
  });
  tools.push_back({
      .name = "forget",
      .perseus_name = "perseus_vault_forget",
      .title = "Forget",
      .description =
          "Stop believing a memory from now on. Nothing is deleted: history and as_of still "
          "show what was believed before; recall no longer returns it. Use purge to erase.",
      .input_schema = {{"type", "object"},
                       {"properties",
                        [] {
                          json p = IdentityProps();
                          p["reason"] = StringProp("Why it is forgotten (kept in history).");
                          return p;
                        }()},
                       {"required", json::array({"category", "key"})}},
      .output_schema =
          {{"type", "object"},
           {"properties",
            {{"found", {{"type", "boolean"}, {"description", "false when nothing was current"}}},
             {"forgotten", {{"type", "boolean"}}},
             {"category", {{"type", "string"}}},
             {"key", {{"type", "string"}}}}},
           {"required", json::array({"found", "category", "key"})}},
      .annotations = {{"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}},
      .handler = Forget,
  });
  tools.push_back({
      .name = "purge",
      .title = "Purge",
      .description = "Erase a memory completely: every version, its history and its index entries. "
                     "Cannot be undone; prefer forget unless the data must be gone.",
      .input_schema = {{"type", "object"},
                       {"properties", IdentityProps()},
                       {"required", json::array({"category", "key"})}},
      .output_schema = {{"type", "object"},
                        {"properties",
                         {{"found", {{"type", "boolean"}}},
                          {"purged_versions", {{"type", "integer"}}}}},
                        {"required", json::array({"found", "purged_versions"})}},
      .annotations = {{"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}},
      .handler = Purge,
  });
  return tools;
}

}  // namespace strata::tools
