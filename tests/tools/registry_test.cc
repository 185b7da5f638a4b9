// tools::ToolRegistry over a real Store: what tools/list shows under each naming option, how
// called names resolve, what every tool returns under both dialects (the documented fields of
// docs/compat.md), its argument errors, and that every result satisfies its outputSchema.

#include "tools/registry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "strata/strata.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "tools/tool.h"
#include "util/clock.h"

namespace strata::tools {
namespace {

using ::nlohmann::json;
using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kDay = 24 * 60 * kMinute;

const std::vector<std::string> kCanonicalNames = {
    "remember", "remember_batch", "recall", "get",   "history", "as_of",
    "valid_at", "bitemporal",     "forget", "purge", "embed",   "stats",
};

// The names in a tools/list array, in order.
std::vector<std::string> Names(const json& tools) {
  std::vector<std::string> names;
  for (const json& tool : tools) names.push_back(tool.at("name").get<std::string>());
  return names;
}

// The tools/list entry called `name`, or null.
json Listed(const json& tools, std::string_view name) {
  for (const json& tool : tools) {
    if (tool.at("name") == name) return tool;
  }
  return nullptr;
}

// The property names of an inputSchema.
std::set<std::string> PropertyNames(const json& schema) {
  std::set<std::string> names;
  for (const auto& [name, value] : schema.at("properties").items()) names.insert(name);
  return names;
}

// Whether `value` is of the JSON Schema type `type`.
bool HasSchemaType(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    return value.is_number_integer() ||
           (value.is_number_float() && std::trunc(value.get<double>()) == value.get<double>());
  }
  return false;
}

// How `result` breaks `schema` at the top level: a missing "required" member, a member whose
// value has none of its property's "type"s, or a value outside its "enum". Empty when none.
std::vector<std::string> SchemaViolations(const json& schema, const json& result) {
  std::vector<std::string> violations;
  if (!result.is_object()) {
    violations.push_back("the result is not an object: " + result.dump());
    return violations;
  }
  for (const json& name : schema.value("required", json::array())) {
    if (!result.contains(name.get<std::string>())) {
      violations.push_back("missing required " + name.get<std::string>());
    }
  }
  const json properties = schema.value("properties", json::object());
  for (const auto& [name, property] : properties.items()) {
    auto member = result.find(name);
    if (member == result.end()) continue;
    if (property.contains("type")) {
      const json types =
          property["type"].is_array() ? property["type"] : json::array({property["type"]});
      bool matched = false;
      for (const json& type : types)
        matched = matched || HasSchemaType(*member, type.get<std::string>());
      if (!matched) {
        std::string message = name;
        message.append(": ").append(member->dump()).append(" is not of type ");
        message.append(property["type"].dump());
        violations.push_back(message);
      }
    }
    if (property.contains("enum") && std::find(property["enum"].begin(), property["enum"].end(),
                                               *member) == property["enum"].end()) {
      std::string message = name;
      message.append(": ").append(member->dump()).append(" is not in the enum");
      violations.push_back(message);
    }
  }
  return violations;
}

json Memory(const std::string& key, const std::string& text) {
  return {{"category", "preference"}, {"key", key}, {"body", {{"text", text}}}};
}

json Identity(const std::string& key) { return {{"category", "preference"}, {"key", key}}; }

// A registry over a fresh store whose clock starts at kNow and moves only when told. The store
// runs the default (builtin) embedder, so its background worker embeds what is written: tests
// of keyword ranking ask for mode "fts5", because "auto" turns hybrid once vectors exist.
class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenWith(RegistryOptions{}); }

  void OpenWith(RegistryOptions options) {
    registry_.reset();
    if (store_ == nullptr) {
      absl::StatusOr<std::unique_ptr<Store>> store =
          Store::Open({.path = dir_.File("memory.db"), .clock = &clock_, .embedder = embedder_});
      ASSERT_THAT(store, IsOk());
      store_ = *std::move(store);
    }
    registry_ = std::make_unique<ToolRegistry>(store_.get(), std::move(options));
  }

  // Waits (60 s at most, against hangs) until the vector index holds every version's vector.
  // The background worker loads or builds it; a recall before then may not see every vector.
  void WaitIndexed() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      absl::StatusOr<json> stats = Call("stats", json::object());
      ASSERT_THAT(stats, IsOk());
      const json& e = (*stats)["embeddings"];
      ASSERT_TRUE(e.is_object()) << stats->dump();
      if (e["index_state"] == "ready" && e["pending"] == 0 && e["indexed"] == e["vectors"]) {
        return;
      }
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << e.dump();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Reopens the same file with another embedder ("none": keyword recall only).
  void ReopenWithEmbedder(std::string embedder) {
    registry_.reset();
    store_.reset();
    embedder_ = std::move(embedder);
    OpenWith(RegistryOptions{});
  }

  // Calls a tool by any name it answers to; NotFound when the name is unknown.
  absl::StatusOr<json> Call(std::string_view name, const json& args) {
    std::optional<ToolRegistry::Resolved> tool = registry_->Find(name);
    if (!tool) return absl::NotFoundError(std::string(name));
    return registry_->Call(*tool, args);
  }

  ::strata::testing::TempDir dir_;
  FakeClock clock_{kNow};
  std::string embedder_ = "builtin";
  std::unique_ptr<Store> store_;
  std::unique_ptr<ToolRegistry> registry_;
};

// List.

TEST_F(RegistryTest, ListHasTheTwelveCanonicalTools) {
  EXPECT_THAT(Names(registry_->List()), UnorderedElementsAreArray(kCanonicalNames));
}

TEST_F(RegistryTest, EveryListedToolHasEveryDescriptionField) {
  for (const json& tool : registry_->List()) {
    SCOPED_TRACE(tool.value("name", "?"));
    ASSERT_TRUE(tool.is_object());
    EXPECT_TRUE(tool.at("name").is_string());
    ASSERT_TRUE(tool.contains("title"));
    ASSERT_TRUE(tool["title"].is_string());
    EXPECT_FALSE(tool["title"].get<std::string>().empty());
    ASSERT_TRUE(tool.contains("description"));
    ASSERT_TRUE(tool["description"].is_string());
    EXPECT_GT(tool["description"].get<std::string>().size(), 20u);
    ASSERT_TRUE(tool.contains("inputSchema"));
    EXPECT_EQ(tool["inputSchema"].value("type", ""), "object");
    EXPECT_TRUE(tool["inputSchema"].contains("properties"));
    ASSERT_TRUE(tool.contains("outputSchema"));
    EXPECT_EQ(tool["outputSchema"].value("type", ""), "object");
    EXPECT_TRUE(tool["outputSchema"].contains("required"));
    ASSERT_TRUE(tool.contains("annotations"));
    ASSERT_TRUE(tool["annotations"].is_object());
    EXPECT_TRUE(tool["annotations"].value("readOnlyHint", json()).is_boolean());
    EXPECT_EQ(tool["annotations"].value("title", json()), tool["title"]);
  }
}

TEST_F(RegistryTest, ReadOnlyHintMarksReadsAndDestructiveHintMarksForgetAndPurge) {
  const json tools = registry_->List();
  for (const char* name :
       {"recall", "get", "history", "as_of", "valid_at", "bitemporal", "stats"}) {
    EXPECT_EQ(Listed(tools, name)["annotations"]["readOnlyHint"], true) << name;
  }
  for (const char* name : {"remember", "remember_batch", "forget", "purge", "embed"}) {
    EXPECT_EQ(Listed(tools, name)["annotations"]["readOnlyHint"], false) << name;
  }
  EXPECT_EQ(Listed(tools, "forget")["annotations"]["destructiveHint"], true);
  EXPECT_EQ(Listed(tools, "purge")["annotations"]["destructiveHint"], true);
  EXPECT_EQ(Listed(tools, "remember")["annotations"]["destructiveHint"], false);
  // embed only adds vectors; doing it twice is doing it once.
  EXPECT_EQ(Listed(tools, "embed")["annotations"]["destructiveHint"], false);
  EXPECT_EQ(Listed(tools, "embed")["annotations"]["idempotentHint"], true);
}

TEST_F(RegistryTest, RecallModeEnumListsEveryMode) {
  const json mode = Listed(registry_->List(), "recall")["inputSchema"]["properties"]["mode"];
  EXPECT_EQ(mode["type"], "string");
  EXPECT_THAT(mode["enum"], ElementsAre("auto", "fts5", "dense", "hybrid"));
}

TEST_F(RegistryTest, UnknownRecallModeIsRejectedListingTheModes) {
  for (const std::string& mode :
       std::vector<std::string>{"", "bm25", "Auto", std::string(500, 'm')}) {
    EXPECT_THAT(Call("recall", {{"query", "x"}, {"mode", mode}}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         absl::StrCat("mode: must be one of \"auto\", \"fts5\", \"dense\", "
                                      "\"hybrid\", got \"",
                                      mode.substr(0, 40), "\"")))
        << mode;
  }
}

TEST_F(RegistryTest, EmbedSchemaTakesBothArgumentNameSets) {
  const json embed = Listed(registry_->List(), "embed");
  EXPECT_THAT(PropertyNames(embed["inputSchema"]),
              UnorderedElementsAre("category", "key", "workspace", "limit", "batch_category",
                                   "batch_limit"));
  EXPECT_THAT(embed["outputSchema"]["required"],
              UnorderedElementsAre("embedded", "attempted", "failed", "remaining"));
}

TEST_F(RegistryTest, CanonicalInputSchemasUseCanonicalArgumentNames) {
  const json tools = registry_->List();
  EXPECT_THAT(PropertyNames(Listed(tools, "remember")["inputSchema"]),
              ::testing::IsSupersetOf({"category", "key", "workspace", "body", "body_json", "type",
                                       "tags", "valid_from", "valid_to", "dedup"}));
  EXPECT_THAT(PropertyNames(Listed(tools, "as_of")["inputSchema"]), Contains("as_of"));
  EXPECT_THAT(Listed(tools, "as_of")["inputSchema"]["required"],
              UnorderedElementsAre("category", "key", "as_of"));
  EXPECT_THAT(Listed(tools, "bitemporal")["inputSchema"]["required"],
              UnorderedElementsAre("category", "key", "tx_at", "valid_at"));
}

// Every object schema with properties inside `schema` (itself, nested properties, array
// items), with its path, for checks on all of them.
void ObjectSchemas(const json& schema, const std::string& path,
                   std::vector<std::pair<std::string, json>>& out) {
  if (!schema.is_object()) return;
  if (schema.contains("properties")) {
    out.emplace_back(path, schema);
    for (const auto& [name, property] : schema["properties"].items()) {
      ObjectSchemas(property, path + "." + name, out);
    }
  }
  if (schema.contains("items")) ObjectSchemas(schema["items"], path + "[]", out);
}

TEST_F(RegistryTest, CanonicalInputSchemasTakeNoAdditionalProperties) {
  for (const json& tool : registry_->List()) {
    std::vector<std::pair<std::string, json>> schemas;
    ObjectSchemas(tool["inputSchema"], tool["name"].get<std::string>(), schemas);
    for (const auto& [path, schema] : schemas) {
      EXPECT_EQ(schema.value("additionalProperties", json()), false) << path;
    }
  }
  const json items =
      Listed(registry_->List(), "remember_batch")["inputSchema"]["properties"]["items"]["items"];
  EXPECT_EQ(items["additionalProperties"], false);
  // body is any JSON value: not an object schema to close.
  EXPECT_FALSE(Listed(registry_->List(), "remember")["inputSchema"]["properties"]["body"].contains(
      "additionalProperties"));
}

TEST_F(RegistryTest, PerseusInputSchemasLeaveAdditionalPropertiesOpen) {
  OpenWith({.list_perseus_names = true});
  for (const json& tool : registry_->List()) {
    const std::string name = tool["name"].get<std::string>();
    std::vector<std::pair<std::string, json>> schemas;
    ObjectSchemas(tool["inputSchema"], name, schemas);
    for (const auto& [path, schema] : schemas) {
      // remember_batch and purge have no Perseus Vault name: called by theirs, they are strict.
      if (name.starts_with("perseus_vault_")) {
        EXPECT_FALSE(schema.contains("additionalProperties")) << path;
      } else {
        EXPECT_EQ(schema.value("additionalProperties", json()), false) << path;
      }
    }
  }
}

TEST_F(RegistryTest, PerseusListShowsPerseusNames) {
  OpenWith({.list_perseus_names = true});
  // remember_batch and purge have no Perseus Vault name and keep their own.
  EXPECT_THAT(Names(registry_->List()),
              UnorderedElementsAre(
                  "perseus_vault_remember", "remember_batch", "perseus_vault_recall",
                  "perseus_vault_get_entity", "perseus_vault_history", "perseus_vault_as_of",
                  "perseus_vault_valid_at", "perseus_vault_bitemporal", "perseus_vault_forget",
                  "purge", "perseus_vault_embed", "perseus_vault_stats"));
}

TEST_F(RegistryTest, PerseusEmbedSchemaNamesTheWorkspaceWorkspaceHash) {
  OpenWith({.list_perseus_names = true});
  const std::set<std::string> props =
      PropertyNames(Listed(registry_->List(), "perseus_vault_embed")["inputSchema"]);
  EXPECT_THAT(props, ::testing::IsSupersetOf(
                         {"batch_category", "batch_limit", "category", "key", "workspace_hash"}));
  EXPECT_THAT(props, Not(Contains("workspace")));
}

TEST_F(RegistryTest, PerseusRememberSchemaUsesPerseusArgumentNames) {
  OpenWith({.list_perseus_names = true});
  const std::set<std::string> props =
      PropertyNames(Listed(registry_->List(), "perseus_vault_remember")["inputSchema"]);
  EXPECT_THAT(props,
              ::testing::IsSupersetOf({"category", "key", "body_json", "workspace_hash",
                                       "valid_from_unix_ms", "valid_to_unix_ms", "skip_dedup"}));
  for (const char* canonical : {"workspace", "valid_from", "valid_to", "dedup"}) {
    EXPECT_THAT(props, Not(Contains(canonical)));
  }
}

TEST_F(RegistryTest, PerseusRecallSchemaRenamesAsOfAndKeepsValidAt) {
  OpenWith({.list_perseus_names = true});
  const std::set<std::string> props =
      PropertyNames(Listed(registry_->List(), "perseus_vault_recall")["inputSchema"]);
  EXPECT_THAT(props,
              ::testing::IsSupersetOf({"query", "workspace_hash", "as_of_unix_ms", "valid_at"}));
  EXPECT_THAT(props, Not(Contains("as_of")));
  EXPECT_THAT(props, Not(Contains("workspace")));
  EXPECT_THAT(props, Not(Contains("valid_at_unix_ms")));
}

TEST_F(RegistryTest, PerseusTimeAxisSchemasRenameTheirRequiredInstants) {
  OpenWith({.list_perseus_names = true});
  const json tools = registry_->List();
  const json as_of = Listed(tools, "perseus_vault_as_of")["inputSchema"];
  EXPECT_THAT(PropertyNames(as_of), Contains("as_of_unix_ms"));
  EXPECT_THAT(as_of["required"], UnorderedElementsAre("category", "key", "as_of_unix_ms"));
  const json valid_at = Listed(tools, "perseus_vault_valid_at")["inputSchema"];
  EXPECT_THAT(valid_at["required"], UnorderedElementsAre("category", "key", "valid_at_unix_ms"));
  const json bitemporal = Listed(tools, "perseus_vault_bitemporal")["inputSchema"];
  EXPECT_THAT(bitemporal["required"],
              UnorderedElementsAre("category", "key", "tx_at_unix_ms", "valid_at_unix_ms"));
  EXPECT_THAT(PropertyNames(bitemporal), Not(Contains("tx_at")));
}

TEST_F(RegistryTest, PrefixIsPrependedToListedNames) {
  OpenWith({.prefix = "strata_"});
  std::vector<std::string> expected;
  for (const std::string& name : kCanonicalNames) expected.push_back("strata_" + name);
  EXPECT_THAT(Names(registry_->List()), UnorderedElementsAreArray(expected));
  EXPECT_THAT(registry_->ListedNames(), HasSubstr("strata_remember"));
}

TEST_F(RegistryTest, PrefixDoesNotApplyToPerseusNames) {
  OpenWith({.list_perseus_names = true, .prefix = "strata_"});
  const std::vector<std::string> names = Names(registry_->List());
  EXPECT_THAT(names, Contains("perseus_vault_remember"));
  EXPECT_THAT(names, Contains("strata_remember_batch"));
  EXPECT_THAT(names, Contains("strata_purge"));
}

TEST_F(RegistryTest, ListedNamesFollowTheListOption) {
  EXPECT_THAT(registry_->ListedNames(), HasSubstr("remember, remember_batch"));
  EXPECT_THAT(registry_->ListedNames(), Not(HasSubstr("perseus_vault_")));
  OpenWith({.list_perseus_names = true});
  EXPECT_THAT(registry_->ListedNames(), HasSubstr("perseus_vault_recall"));
}

// Find.

TEST_F(RegistryTest, FindResolvesCanonicalNamesInTheCanonicalDialect) {
  for (const std::string& name : kCanonicalNames) {
    std::optional<ToolRegistry::Resolved> tool = registry_->Find(name);
    ASSERT_TRUE(tool.has_value()) << name;
    EXPECT_EQ(tool->spec->name, name);
    EXPECT_EQ(tool->dialect, Dialect::kCanonical);
  }
}

TEST_F(RegistryTest, FindResolvesPerseusNamesInThePerseusDialect) {
  const std::map<std::string, std::string> perseus = {
      {"perseus_vault_remember", "remember"},     {"perseus_vault_recall", "recall"},
      {"perseus_vault_get_entity", "get"},        {"perseus_vault_history", "history"},
      {"perseus_vault_as_of", "as_of"},           {"perseus_vault_valid_at", "valid_at"},
      {"perseus_vault_bitemporal", "bitemporal"}, {"perseus_vault_forget", "forget"},
      {"perseus_vault_embed", "embed"},           {"perseus_vault_stats", "stats"},
  };
  for (const auto& [called, canonical] : perseus) {
    std::optional<ToolRegistry::Resolved> tool = registry_->Find(called);
    ASSERT_TRUE(tool.has_value()) << called;
    EXPECT_EQ(tool->spec->name, canonical);
    EXPECT_EQ(tool->dialect, Dialect::kPerseusVault);
  }
}

TEST_F(RegistryTest, FindResolvesPrefixedAndUnprefixedNamesWhenAPrefixIsSet) {
  OpenWith({.prefix = "strata_"});
  std::optional<ToolRegistry::Resolved> prefixed = registry_->Find("strata_recall");
  ASSERT_TRUE(prefixed.has_value());
  EXPECT_EQ(prefixed->spec->name, "recall");
  EXPECT_EQ(prefixed->dialect, Dialect::kCanonical);
  ASSERT_TRUE(registry_->Find("recall").has_value());
  std::optional<ToolRegistry::Resolved> perseus = registry_->Find("perseus_vault_recall");
  ASSERT_TRUE(perseus.has_value());
  EXPECT_EQ(perseus->dialect, Dialect::kPerseusVault);
}

TEST_F(RegistryTest, FindReturnsNulloptForUnknownNames) {
  for (const char* name :
       {"", "nope", "Remember", "remember ", "strata_remember", "perseus_vault_purge",
        "perseus_vault_remember_batch", "perseus_vault_get"}) {
    EXPECT_FALSE(registry_->Find(name).has_value()) << '"' << name << '"';
  }
}

// Call: the canonical dialect.

TEST_F(RegistryTest, RememberReportsTheWrite) {
  ASSERT_OK_AND_ASSIGN(json r, Call("remember", Memory("editor", "vim")));
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["action"], "created");
  EXPECT_TRUE(r["id"].is_number_integer());
  EXPECT_GT(r["id"].get<int64_t>(), 0);
  EXPECT_EQ(r["category"], "preference");
  EXPECT_EQ(r["key"], "editor");
  EXPECT_EQ(r["workspace"], "");
  EXPECT_EQ(r["version"], 1);
  EXPECT_EQ(r["recorded_at"], kNow);
  EXPECT_EQ(r["valid_from"], kNow);
  EXPECT_TRUE(r["valid_to"].is_null());
}

TEST_F(RegistryTest, RememberAgainIsUnchangedOrUpdated) {
  ASSERT_OK_AND_ASSIGN(json first, Call("remember", Memory("editor", "vim")));
  clock_.Advance(kMinute);
  ASSERT_OK_AND_ASSIGN(json same, Call("remember", Memory("editor", "vim")));
  EXPECT_EQ(same["action"], "unchanged");
  EXPECT_EQ(same["version"], 1);
  EXPECT_EQ(same["id"], first["id"]);
  ASSERT_OK_AND_ASSIGN(json changed, Call("remember", Memory("editor", "emacs")));
  EXPECT_EQ(changed["action"], "updated");
  EXPECT_EQ(changed["version"], 2);
  EXPECT_EQ(changed["id"], first["id"]);
  EXPECT_EQ(changed["recorded_at"], kNow + kMinute);
}

TEST_F(RegistryTest, GetReturnsEveryVersionField) {
  json args = Memory("editor", "vim");
  args["type"] = "fact";
  args["tags"] = {"tools", "daily"};
  args["source"] = "chat";
  args["importance"] = 0.5;
  ASSERT_OK_AND_ASSIGN(json written, Call("remember", args));
  ASSERT_OK_AND_ASSIGN(json r, Call("get", Identity("editor")));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["id"], written["id"]);
  EXPECT_EQ(r["category"], "preference");
  EXPECT_EQ(r["key"], "editor");
  EXPECT_EQ(r["workspace"], "");
  EXPECT_EQ(r["version"], 1);
  EXPECT_EQ(r["body_json"], R"({"text":"vim"})");
  EXPECT_EQ(r["body"], json({{"text", "vim"}}));
  EXPECT_EQ(r["type"], "fact");
  EXPECT_EQ(r["tags"], json({"tools", "daily"}));
  EXPECT_EQ(r["source"], "chat");
  EXPECT_EQ(r["importance"], 0.5);
  EXPECT_EQ(r["valid_from"], kNow);
  EXPECT_TRUE(r["valid_to"].is_null());
  EXPECT_EQ(r["recorded_at"], kNow);
  EXPECT_TRUE(r["superseded_at"].is_null());
}

TEST_F(RegistryTest, CanonicalResultsCarryNoPerseusFields) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  ASSERT_OK_AND_ASSIGN(json r, Call("get", Identity("editor")));
  for (const char* field : {"entity_type", "is_live_version", "valid_from_unix_ms",
                            "recorded_at_unix_ms", "invalidated_at_unix_ms", "workspace_hash"}) {
    EXPECT_FALSE(r.contains(field)) << field;
  }
  ASSERT_OK_AND_ASSIGN(json stats, Call("stats", json::object()));
  EXPECT_FALSE(stats.contains("total_entities"));
}

TEST_F(RegistryTest, GetByIdAcceptsAnIntegerOrANumericString) {
  ASSERT_OK_AND_ASSIGN(json written, Call("remember", Memory("editor", "vim")));
  const int64_t id = written["id"].get<int64_t>();
  ASSERT_OK_AND_ASSIGN(json by_int, Call("get", {{"id", id}}));
  EXPECT_EQ(by_int["found"], true);
  EXPECT_EQ(by_int["key"], "editor");
  ASSERT_OK_AND_ASSIGN(json by_text, Call("get", {{"id", std::to_string(id)}}));
  EXPECT_EQ(by_text["found"], true);
  EXPECT_EQ(by_text["key"], "editor");
}

TEST_F(RegistryTest, GetOfAnUnknownIdIsNotFound) {
  ASSERT_OK_AND_ASSIGN(json r, Call("get", {{"id", 999}}));
  EXPECT_EQ(r["found"], false);
  EXPECT_EQ(r["id"], 999);
}

TEST_F(RegistryTest, GetOfAnUnknownOrForgottenIdentityIsNotFound) {
  ASSERT_OK_AND_ASSIGN(json unknown, Call("get", Identity("nothing")));
  EXPECT_EQ(unknown["found"], false);
  EXPECT_EQ(unknown["category"], "preference");
  EXPECT_EQ(unknown["key"], "nothing");
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  ASSERT_OK(Call("forget", Identity("editor")));
  ASSERT_OK_AND_ASSIGN(json forgotten, Call("get", Identity("editor")));
  EXPECT_EQ(forgotten["found"], false);
}

TEST_F(RegistryTest, GetWithoutIdOrIdentityIsAnError) {
  EXPECT_THAT(Call("get", json::object()), StatusIs(kInvalid, HasSubstr("id: required")));
  EXPECT_THAT(Call("get", {{"id", "seven"}}),
              StatusIs(kInvalid, HasSubstr("id: must be an integer")));
  EXPECT_THAT(Call("get", {{"category", "preference"}}),
              StatusIs(kInvalid, HasSubstr("key: required")));
}

TEST_F(RegistryTest, HistoryListsVersionsNewestFirst) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  clock_.Advance(kMinute);
  ASSERT_OK(Call("remember", Memory("editor", "emacs")));
  ASSERT_OK_AND_ASSIGN(json r, Call("history", Identity("editor")));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["category"], "preference");
  EXPECT_EQ(r["key"], "editor");
  EXPECT_EQ(r["total"], 2);
  EXPECT_EQ(r["returned"], 2);
  ASSERT_THAT(r["versions"], SizeIs(2));
  EXPECT_EQ(r["versions"][0]["version"], 2);
  EXPECT_EQ(r["versions"][0]["body"]["text"], "emacs");
  EXPECT_TRUE(r["versions"][0]["superseded_at"].is_null());
  EXPECT_EQ(r["versions"][1]["version"], 1);
  EXPECT_EQ(r["versions"][1]["superseded_at"], kNow + kMinute);
  EXPECT_EQ(r["forgotten_at"], json::array());
}

TEST_F(RegistryTest, HistoryPagesWithLimitAndOffset) {
  for (const char* text : {"a", "b", "c"}) {
    ASSERT_OK(Call("remember", Memory("editor", text)));
    clock_.Advance(kMinute);
  }
  json args = Identity("editor");
  args["limit"] = 1;
  args["offset"] = "1";
  ASSERT_OK_AND_ASSIGN(json r, Call("history", args));
  EXPECT_EQ(r["total"], 3);
  EXPECT_EQ(r["returned"], 1);
  ASSERT_THAT(r["versions"], SizeIs(1));
  EXPECT_EQ(r["versions"][0]["version"], 2);
}

TEST_F(RegistryTest, HistoryOfAnUnknownIdentityIsNotFoundAndEmpty) {
  ASSERT_OK_AND_ASSIGN(json r, Call("history", Identity("nothing")));
  EXPECT_EQ(r["found"], false);
  EXPECT_EQ(r["versions"], json::array());
  EXPECT_EQ(r["total"], 0);
  EXPECT_EQ(r["returned"], 0);
}

TEST_F(RegistryTest, HistoryLimitOutOfRangeIsAnErrorForAModel) {
  json args = Identity("editor");
  args["limit"] = 5000;
  EXPECT_THAT(Call("history", args),
              StatusIs(kInvalid, "limit: must be between 1 and 1000, got 5000"));
}

TEST_F(RegistryTest, AsOfReturnsWhatWasBelievedThenAndEchoesTheInstant) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  clock_.Advance(kMinute);
  ASSERT_OK(Call("remember", Memory("editor", "emacs")));
  json args = Identity("editor");
  args["as_of"] = kNow + kMinute / 2;
  ASSERT_OK_AND_ASSIGN(json r, Call("as_of", args));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["version"], 1);
  EXPECT_EQ(r["body"]["text"], "vim");
  EXPECT_EQ(r["superseded_at"], kNow + kMinute);
  EXPECT_EQ(r["as_of"], kNow + kMinute / 2);
  EXPECT_FALSE(r.contains("as_of_unix_ms"));
}

TEST_F(RegistryTest, AsOfAcceptsAnIsoTime) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  json args = Identity("editor");
  args["as_of"] = "2026-03-01T00:00:30Z";
  ASSERT_OK_AND_ASSIGN(json r, Call("as_of", args));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["as_of"], kNow + 30 * 1000);
}

TEST_F(RegistryTest, AsOfBeforeTheFirstWriteIsNotFound) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  json args = Identity("editor");
  args["as_of"] = kNow - 1;
  ASSERT_OK_AND_ASSIGN(json r, Call("as_of", args));
  EXPECT_EQ(r["found"], false);
  EXPECT_EQ(r["category"], "preference");
  EXPECT_EQ(r["key"], "editor");
  EXPECT_EQ(r["as_of"], kNow - 1);
}

TEST_F(RegistryTest, AsOfWithoutTheInstantIsAnError) {
  EXPECT_THAT(Call("as_of", Identity("editor")), StatusIs(kInvalid, "as_of: required"));
  json args = Identity("editor");
  args["as_of"] = "last tuesday";
  EXPECT_THAT(Call("as_of", args), StatusIs(kInvalid, HasSubstr("as_of: ")));
}

TEST_F(RegistryTest, ValidAtReturnsTheVersionTrueAtTheInstant) {
  json args = Memory("title", "engineer");
  args["valid_from"] = kNow - 10 * kDay;
  args["valid_to"] = kNow - 5 * kDay;
  ASSERT_OK(Call("remember", args));
  json inside = Identity("title");
  inside["valid_at"] = kNow - 7 * kDay;
  ASSERT_OK_AND_ASSIGN(json found, Call("valid_at", inside));
  EXPECT_EQ(found["found"], true);
  EXPECT_EQ(found["valid_from"], kNow - 10 * kDay);
  EXPECT_EQ(found["valid_to"], kNow - 5 * kDay);
  EXPECT_EQ(found["valid_at"], kNow - 7 * kDay);
  json outside = Identity("title");
  outside["valid_at"] = kNow - kDay;
  ASSERT_OK_AND_ASSIGN(json missing, Call("valid_at", outside));
  EXPECT_EQ(missing["found"], false);
  EXPECT_EQ(missing["valid_at"], kNow - kDay);
}

TEST_F(RegistryTest, BitemporalReadsBothAxesAndEchoesBothInstants) {
  json first = Memory("title", "engineer");
  first["valid_from"] = kNow - 10 * kDay;
  ASSERT_OK(Call("remember", first));
  clock_.Advance(kMinute);
  json second = Memory("title", "manager");
  second["valid_from"] = kNow - 10 * kDay;
  ASSERT_OK(Call("remember", second));
  json args = Identity("title");
  args["tx_at"] = kNow + kMinute / 2;
  args["valid_at"] = kNow - 7 * kDay;
  ASSERT_OK_AND_ASSIGN(json r, Call("bitemporal", args));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["body"]["text"], "engineer");
  EXPECT_EQ(r["tx_at"], kNow + kMinute / 2);
  EXPECT_EQ(r["valid_at"], kNow - 7 * kDay);
  args["tx_at"] = kNow + kMinute;
  ASSERT_OK_AND_ASSIGN(json later, Call("bitemporal", args));
  EXPECT_EQ(later["body"]["text"], "manager");
  EXPECT_THAT(Call("bitemporal", Identity("title")), StatusIs(kInvalid, "tx_at: required"));
}

TEST_F(RegistryTest, RecallFindsByWordsAndCarriesRankingFields) {
  ASSERT_OK(Call("remember", Memory("editor", "vim with many plugins")));
  ASSERT_OK(Call("remember", Memory("shell", "zsh")));
  ASSERT_OK_AND_ASSIGN(json r, Call("recall", {{"query", "plugins"}, {"mode", "fts5"}}));
  EXPECT_EQ(r["total"], 1);
  EXPECT_EQ(r["mode"], "fts5");
  ASSERT_THAT(r["items"], SizeIs(1));
  const json& item = r["items"][0];
  EXPECT_EQ(item["key"], "editor");
  EXPECT_EQ(item["category"], "preference");
  EXPECT_EQ(item["body_json"], R"({"text":"vim with many plugins"})");
  EXPECT_TRUE(item["score"].is_number());
  EXPECT_EQ(item["fts5_rank"], 1);
  EXPECT_TRUE(item["dense_rank"].is_null());
  EXPECT_FALSE(item.contains("text"));  // Body fields are copied only for Perseus Vault.
}

TEST_F(RegistryTest, RecallArgumentErrorsNameTheArgument) {
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"limit", 5000}}),
              StatusIs(kInvalid, "limit: must be between 1 and 1000, got 5000"));
  EXPECT_THAT(Call("recall", {{"query", 5}}),
              StatusIs(kInvalid, "query: must be a string, got an integer"));
  EXPECT_THAT(Call("recall", {{"tags", {1}}}),
              StatusIs(kInvalid, HasSubstr("tags: every item must be a string")));
  EXPECT_THAT(Call("recall", {{"query", std::string(20000, 'a')}}),
              StatusIs(kInvalid, HasSubstr("query: at most")));
}

TEST_F(RegistryTest, ForgetEndsBeliefAndKeepsHistory) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  clock_.Advance(kMinute);
  json args = Identity("editor");
  args["reason"] = "switched";
  ASSERT_OK_AND_ASSIGN(json r, Call("forget", args));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["forgotten"], true);
  EXPECT_EQ(r["category"], "preference");
  EXPECT_EQ(r["key"], "editor");
  ASSERT_OK_AND_ASSIGN(json again, Call("forget", Identity("editor")));
  EXPECT_EQ(again["found"], false);
  ASSERT_OK_AND_ASSIGN(json history, Call("history", Identity("editor")));
  EXPECT_EQ(history["total"], 1);
  EXPECT_EQ(history["forgotten_at"], json::array({kNow + kMinute}));
}

TEST_F(RegistryTest, PurgeErasesEveryVersion) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  clock_.Advance(kMinute);
  ASSERT_OK(Call("remember", Memory("editor", "emacs")));
  ASSERT_OK_AND_ASSIGN(json r, Call("purge", Identity("editor")));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["purged_versions"], 2);
  ASSERT_OK_AND_ASSIGN(json history, Call("history", Identity("editor")));
  EXPECT_EQ(history["found"], false);
  ASSERT_OK_AND_ASSIGN(json again, Call("purge", Identity("editor")));
  EXPECT_EQ(again["found"], false);
  EXPECT_EQ(again["purged_versions"], 0);
}

TEST_F(RegistryTest, StatsCountsMemoriesPerCategory) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  ASSERT_OK(Call("remember", Memory("shell", "zsh")));
  ASSERT_OK(Call("remember", {{"category", "decision"}, {"key", "db"}, {"body", "sqlite"}}));
  ASSERT_OK(Call("forget", Identity("shell")));
  ASSERT_OK_AND_ASSIGN(json r, Call("stats", json::object()));
  EXPECT_EQ(r["total_memories"], 3);
  EXPECT_EQ(r["active_memories"], 2);
  EXPECT_EQ(r["forgotten_memories"], 1);
  EXPECT_EQ(r["versions"], 3);
  EXPECT_EQ(r["by_category"], json({{"decision", 1}, {"preference", 1}}));
  EXPECT_GT(r["db_file_size_bytes"].get<int64_t>(), 0);
}

// Call: embed, and recall in the modes it enables. The background worker embeds too, so how
// many versions one call embeds depends on timing; what it leaves behind does not.

TEST_F(RegistryTest, EmbedLeavesNothingPendingAndReportsItsOwnWork) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK(Call("remember", Memory(absl::StrCat("k", i), absl::StrCat("note ", i))));
  }
  ASSERT_OK_AND_ASSIGN(json r, Call("embed", json::object()));
  EXPECT_THAT(SchemaViolations(Listed(registry_->List(), "embed")["outputSchema"], r), IsEmpty());
  EXPECT_EQ(r["remaining"], 0);
  EXPECT_EQ(r["failed"], 0);
  EXPECT_EQ(r["attempted"], r["embedded"]);
  EXPECT_GE(r["embedded"].get<int64_t>(), 0);
  EXPECT_LE(r["embedded"].get<int64_t>(), 5);
  EXPECT_FALSE(r.contains("error"));
  // Nothing is left, so another call embeds nothing.
  ASSERT_OK_AND_ASSIGN(json again, Call("embed", {{"limit", 1}}));
  EXPECT_EQ(again, json({{"embedded", 0}, {"attempted", 0}, {"failed", 0}, {"remaining", 0}}));
  ASSERT_OK_AND_ASSIGN(json stats, Call("stats", json::object()));
  EXPECT_EQ(stats["embeddings"]["vectors"], 5);
  EXPECT_EQ(stats["embeddings"]["pending"], 0);
}

TEST_F(RegistryTest, EmbedReportsProgressUpToItsTotal) {
  json items = json::array();
  for (int i = 0; i < 600; ++i) {
    json memory = Memory(absl::StrCat("k", i), absl::StrCat("progress note number ", i));
    memory["dedup"] = false;
    items.push_back(memory);
  }
  ASSERT_OK(Call("remember_batch", {{"items", items}}));
  std::optional<ToolRegistry::Resolved> embed = registry_->Find("embed");
  ASSERT_TRUE(embed.has_value());
  std::vector<std::pair<int64_t, int64_t>> reports;
  ASSERT_OK_AND_ASSIGN(json r, registry_->Call(*embed, {{"limit", 100000}},
                                               {.progress = [&](int64_t done, int64_t total) {
                                                 reports.emplace_back(done, total);
                                               }}));
  EXPECT_EQ(r["remaining"], 0);
  const int64_t embedded = r["embedded"].get<int64_t>();
  EXPECT_EQ(reports.empty(), embedded == 0);
  int64_t last = 0;
  for (const auto& [done, total] : reports) {
    EXPECT_GT(done, last);
    EXPECT_LE(done, total);
    EXPECT_LE(total, 600);
    last = done;
  }
  EXPECT_EQ(last, embedded);
}

TEST_F(RegistryTest, PerseusEmbedBatchesLoopUntilLessThanTheBatchLimit) {
  json items = json::array();
  for (int i = 0; i < 7; ++i) {
    json memory = Memory(absl::StrCat("k", i), absl::StrCat("batch note number ", i));
    memory["dedup"] = false;
    items.push_back(memory);
  }
  ASSERT_OK(Call("remember_batch", {{"items", items}}));
  ASSERT_OK(Call("remember", {{"category", "other"}, {"key", "k"}, {"body", "elsewhere"}}));
  // A Perseus Vault client calls again while `embedded` equals its batch_limit.
  const json args = {{"batch_category", "preference"}, {"batch_limit", 3}};
  int calls = 0;
  int64_t embedded = 0;
  json r;
  do {
    ASSERT_LT(calls++, 3) << "7 memories in batches of 3 take at most 3 calls";
    ASSERT_OK_AND_ASSIGN(r, Call("perseus_vault_embed", args));
    EXPECT_LE(r["embedded"].get<int64_t>(), 3);
    EXPECT_EQ(r["failed"], 0);
    // Less than a full batch only when none remain in scope (so the client's loop ends).
    if (r["embedded"] != 3) {
      EXPECT_EQ(r["remaining"], 0) << r.dump();
    }
    embedded += r["embedded"].get<int64_t>();
  } while (r["embedded"] == 3);
  EXPECT_LE(embedded, 7);
  ASSERT_OK_AND_ASSIGN(json canonical, Call("embed", {{"category", "preference"}}));
  EXPECT_EQ(canonical["embedded"], 0);
  EXPECT_EQ(canonical["remaining"], 0);
}

TEST_F(RegistryTest, EmbedOfOneMemoryByCategoryAndKey) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  ASSERT_OK(Call(
      "remember",
      {{"category", "preference"}, {"key", "editor"}, {"workspace", "ws1"}, {"body", "emacs"}}));
  for (const char* tool : {"embed", "perseus_vault_embed"}) {
    SCOPED_TRACE(tool);
    json args = Identity("editor");
    args[std::string(tool) == "embed" ? "workspace" : "workspace_hash"] = "ws1";
    ASSERT_OK_AND_ASSIGN(json r, Call(tool, args));
    EXPECT_LE(r["embedded"].get<int64_t>(), 1);
    EXPECT_EQ(r["remaining"], 0);
  }
  ASSERT_OK_AND_ASSIGN(json r, Call("perseus_vault_embed", Identity("editor")));
  EXPECT_LE(r["embedded"].get<int64_t>(), 1);
  EXPECT_EQ(r["remaining"], 0);
}

TEST_F(RegistryTest, EmbedArgumentErrorsNameTheArgument) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  EXPECT_THAT(Call("embed", {{"key", "editor"}}),
              StatusIs(kInvalid, "category: required with key"));
  EXPECT_THAT(Call("embed", {{"limit", 0}}),
              StatusIs(kInvalid, "limit: must be between 1 and 1000000, got 0"));
  EXPECT_THAT(Call("perseus_vault_embed", {{"batch_limit", "many"}}),
              StatusIs(kInvalid, HasSubstr("batch_limit: must be an integer")));
  EXPECT_THAT(Call("embed", {{"category", 5}}),
              StatusIs(kInvalid, "category: must be a string, got an integer"));
  EXPECT_THAT(Call("embed", Identity("nothing")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("nothing")));
}

TEST_F(RegistryTest, DenseAndHybridRecallCarryTheirModeAndRanks) {
  ASSERT_OK(Call("remember", Memory("tea", "She drinks green tea after lunch")));
  ASSERT_OK(Call("remember", Memory("coffee", "She drinks black coffee")));
  ASSERT_OK(Call("remember", Memory("shell", "zsh with many plugins")));
  ASSERT_OK_AND_ASSIGN(json embedded, Call("embed", json::object()));
  ASSERT_EQ(embedded["remaining"], 0);
  ASSERT_NO_FATAL_FAILURE(WaitIndexed());
  const json schema = Listed(registry_->List(), "recall")["outputSchema"];
  ASSERT_OK_AND_ASSIGN(json dense, Call("recall", {{"query", "green tea"}, {"mode", "dense"}}));
  EXPECT_THAT(SchemaViolations(schema, dense), IsEmpty());
  EXPECT_EQ(dense["mode"], "dense");
  // Dense ranks the memories above the embedder's similarity floor: not the shell's.
  ASSERT_THAT(dense["items"], SizeIs(2));
  EXPECT_EQ(dense["items"][0]["key"], "tea");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(dense["items"][i]["dense_rank"], i + 1);
    EXPECT_TRUE(dense["items"][i]["fts5_rank"].is_null());
  }
  ASSERT_OK_AND_ASSIGN(json hybrid, Call("recall", {{"query", "green tea"}, {"mode", "hybrid"}}));
  EXPECT_THAT(SchemaViolations(schema, hybrid), IsEmpty());
  EXPECT_EQ(hybrid["mode"], "hybrid");
  ASSERT_THAT(hybrid["items"], SizeIs(2));
  EXPECT_EQ(hybrid["items"][0]["key"], "tea");
  EXPECT_EQ(hybrid["items"][0]["fts5_rank"], 1);
  EXPECT_EQ(hybrid["items"][0]["dense_rank"], 1);
  EXPECT_EQ(hybrid["items"][1]["key"], "coffee");
  EXPECT_TRUE(hybrid["items"][1]["fts5_rank"].is_null());  // Only the dense arm found it.
  EXPECT_EQ(hybrid["items"][1]["dense_rank"], 2);
}

TEST_F(RegistryTest, StatsDescribesTheEmbeddings) {
  ASSERT_OK_AND_ASSIGN(json r, Call("stats", json::object()));
  EXPECT_EQ(r["recall_modes"], json({"fts5", "dense", "hybrid"}));
  const json& e = r["embeddings"];
  ASSERT_TRUE(e.is_object()) << r.dump();
  EXPECT_THAT(e["embedder"].get<std::string>(), StartsWith("builtin/"));
  EXPECT_GT(e["dimension"].get<int64_t>(), 0);
  for (const char* count :
       {"vectors", "pending", "indexed", "embedded_since_start", "index_file_size_bytes"}) {
    EXPECT_TRUE(e[count].is_number_integer()) << count;
  }
  EXPECT_THAT(e["index_state"].get<std::string>(),
              ::testing::AnyOf("loading", "building", "ready"));
  EXPECT_TRUE(e["last_error"].is_null());
}

TEST_F(RegistryTest, WithoutAnEmbedderDenseHybridAndEmbedAreRefused) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  ReopenWithEmbedder("none");
  for (const char* mode : {"dense", "hybrid"}) {
    EXPECT_THAT(Call("recall", {{"query", "vim"}, {"mode", mode}}),
                StatusIs(kInvalid, HasSubstr("--embedder none")))
        << mode;
  }
  EXPECT_THAT(Call("embed", json::object()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("--embedder none")));
  ASSERT_OK_AND_ASSIGN(json recalled, Call("recall", {{"query", "vim"}}));
  EXPECT_EQ(recalled["mode"], "fts5");
  ASSERT_OK_AND_ASSIGN(json stats, Call("stats", json::object()));
  EXPECT_TRUE(stats["embeddings"].is_null());
  EXPECT_EQ(stats["recall_modes"], json({"fts5"}));
}

// Call: bodies.

TEST_F(RegistryTest, BodyJsonHoldingJsonIsStoredAsThatJson) {
  ASSERT_OK(Call("remember", {{"category", "c"}, {"key", "k"}, {"body_json", R"({"a":[1,2]})"}}));
  ASSERT_OK_AND_ASSIGN(json r, Call("get", {{"category", "c"}, {"key", "k"}}));
  EXPECT_EQ(r["body_json"], R"({"a":[1,2]})");
  EXPECT_EQ(r["body"], json({{"a", {1, 2}}}));
}

TEST_F(RegistryTest, BodyJsonThatIsNotJsonIsAnErrorNamingTheByteOffset) {
  const struct {
    const char* body_json;
    const char* message;
  } cases[] = {
      {R"({"title": "staff")",
       "body_json: not a JSON text (syntax error at byte 17: unexpected end of input; expected "
       "'}'); give text that is not JSON as body, a string"},
      {"not {json", "body_json: not a JSON text (syntax error at byte 1: invalid literal"},
      {R"({"a": 1,})", "body_json: not a JSON text (syntax error at byte 8: unexpected '}'"},
      {"", "body_json: not a JSON text (syntax error at byte 0: unexpected end of input"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(Call("remember", {{"category", "c"}, {"key", "k"}, {"body_json", c.body_json}}),
                StatusIs(kInvalid, StartsWith(c.message)))
        << c.body_json;
  }
  ASSERT_OK_AND_ASSIGN(json r, Call("get", {{"category", "c"}, {"key", "k"}}));
  EXPECT_EQ(r["found"], false);
}

TEST_F(RegistryTest, BodyJsonSyntaxErrorsQuoteAtMostAShortPieceOfTheText) {
  const std::string unterminated = "[\"" + std::string(100000, 'a');
  absl::StatusOr<json> r =
      Call("remember", {{"category", "c"}, {"key", "k"}, {"body_json", unterminated}});
  EXPECT_THAT(r, StatusIs(kInvalid, StartsWith("body_json: not a JSON text (syntax error at")));
  EXPECT_LT(r.status().message().size(), 400u);
}

TEST_F(RegistryTest, PerseusBodyJsonHoldingPlainTextIsStoredAsAJsonString) {
  ASSERT_OK(Call("perseus_vault_remember",
                 {{"category", "c"}, {"key", "k"}, {"body_json", "not {json"}}));
  ASSERT_OK_AND_ASSIGN(json r, Call("get", {{"category", "c"}, {"key", "k"}}));
  EXPECT_EQ(r["body_json"], R"("not {json")");
  EXPECT_EQ(r["body"], "not {json");
}

TEST_F(RegistryTest, AStringBodyIsStoredAsAJsonString) {
  ASSERT_OK(Call("remember", {{"category", "c"}, {"key", "k"}, {"body", "hello"}}));
  ASSERT_OK_AND_ASSIGN(json r, Call("get", {{"category", "c"}, {"key", "k"}}));
  EXPECT_EQ(r["body_json"], R"("hello")");
  EXPECT_EQ(r["body"], "hello");
}

TEST_F(RegistryTest, BodyAndBodyJsonTogetherIsAnError) {
  EXPECT_THAT(
      Call("remember",
           {{"category", "c"}, {"key", "k"}, {"body", {{"a", 1}}}, {"body_json", R"({"a":1})"}}),
      StatusIs(kInvalid, "body: give either body or body_json, not both"));
}

TEST_F(RegistryTest, MissingOrMistypedBodyIsAnError) {
  EXPECT_THAT(Call("remember", {{"category", "c"}, {"key", "k"}}),
              StatusIs(kInvalid, HasSubstr("body: required")));
  EXPECT_THAT(Call("remember", {{"category", "c"}, {"key", "k"}, {"body_json", {{"a", 1}}}}),
              StatusIs(kInvalid, "body_json: must be a string holding JSON text, got an object"));
}

TEST_F(RegistryTest, ABodyOverOneMebibyteIsAnError) {
  json args = Identity("big");
  args["body"] = std::string(1 << 20, 'a');
  EXPECT_THAT(Call("remember", args), StatusIs(kInvalid, HasSubstr("body: at most 1048576 bytes")));
}

// Call: argument errors.

TEST_F(RegistryTest, RememberArgumentErrorsNameTheArgument) {
  const struct {
    json args;
    const char* message;
  } cases[] = {
      {{{"key", "k"}, {"body", "x"}}, "category: required"},
      {{{"category", 3}, {"key", "k"}, {"body", "x"}},
       "category: must be a string, got an integer"},
      {{{"category", "c"}, {"key", ""}, {"body", "x"}}, "key: must be a non-empty string"},
      {{{"category", "c"}, {"key", "k"}, {"body", "x"}, {"tags", {"a", true}}},
       "tags: every item must be a string, got a boolean"},
      {{{"category", "c"}, {"key", "k"}, {"body", "x"}, {"valid_from", "soon"}}, "valid_from: "},
      {{{"category", "c"}, {"key", "k"}, {"body", "x"}, {"dedup", "maybe"}},
       "dedup: must be true or false"},
      {{{"category", "c"}, {"key", "k"}, {"body", "x"}, {"valid_from", kNow}, {"valid_to", kNow}},
       "valid_to: must be after valid_from"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(Call("remember", c.args), StatusIs(kInvalid, HasSubstr(c.message)))
        << c.args.dump();
  }
}

// Call: arguments a tool does not define.

TEST_F(RegistryTest, AMisspeltArgumentIsRefusedWithTheClosestNameAndNothingIsWritten) {
  json args = Memory("editor", "vim");
  args["vaild_from"] = kNow - kDay;
  EXPECT_THAT(Call("remember", args),
              StatusIs(kInvalid,
                       "vaild_from: unknown argument of remember; did you mean "
                       "valid_from?"));
  ASSERT_OK_AND_ASSIGN(json r, Call("get", Identity("editor")));
  EXPECT_EQ(r["found"], false);
}

TEST_F(RegistryTest, EveryCanonicalToolRefusesAMisspeltArgument) {
  const struct {
    const char* tool;
    json args;
    const char* message;
  } cases[] = {
      {"recall",
       {{"query", "x"}, {"limt", 3}},
       "limt: unknown argument of recall; did you mean limit?"},
      {"get", {{"category", "c"}, {"ky", "k"}}, "ky: unknown argument of get; did you mean key?"},
      {"history",
       {{"category", "c"}, {"key", "k"}, {"ofset", 1}},
       "ofset: unknown argument of history; did you mean offset?"},
      {"as_of",
       {{"category", "c"}, {"key", "k"}, {"asof", kNow}},
       "asof: unknown argument of as_of; did you mean as_of?"},
      {"valid_at",
       {{"Category", "c"}, {"key", "k"}, {"valid_at", kNow}},
       "Category: unknown argument of valid_at; did you mean category?"},
      {"bitemporal",
       {{"category", "c"}, {"key", "k"}, {"tx_at", kNow}, {"valid_at", kNow}, {"workspce", ""}},
       "workspce: unknown argument of bitemporal; did you mean workspace?"},
      {"forget",
       {{"category", "c"}, {"key", "k"}, {"reasn", "old"}},
       "reasn: unknown argument of forget; did you mean reason?"},
      {"purge",
       {{"category", "c"}, {"kye", "k"}},
       "kye: unknown argument of purge; did you mean key?"},
      {"embed",
       {{"batch_limt", 5}},
       "batch_limt: unknown argument of embed; did you mean batch_limit?"},
      {"remember_batch",
       {{"item", json::array()}},
       "item: unknown argument of remember_batch; did you mean items?"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(Call(c.tool, c.args), StatusIs(kInvalid, c.message)) << c.tool;
  }
}

TEST_F(RegistryTest, APerseusNameOnACanonicalToolIsRefusedNamingTheCanonicalOne) {
  json args = Memory("editor", "vim");
  args["valid_from_unix_ms"] = kNow - kDay;
  EXPECT_THAT(Call("remember", args),
              StatusIs(kInvalid,
                       "valid_from_unix_ms: unknown argument of remember (a "
                       "perseus_vault_remember name); did you mean valid_from?"));
  args.erase("valid_from_unix_ms");
  args["skip_dedup"] = true;
  EXPECT_THAT(Call("remember", args),
              StatusIs(kInvalid, HasSubstr("skip_dedup: unknown argument of remember (a "
                                           "perseus_vault_remember name; skip_dedup: true is "
                                           "dedup: false); did you mean dedup?")));
  EXPECT_THAT(Call("as_of", {{"category", "c"}, {"key", "k"}, {"as_of_unix_ms", kNow}}),
              StatusIs(kInvalid,
                       "as_of_unix_ms: unknown argument of as_of (a "
                       "perseus_vault_as_of name); did you mean as_of?"));
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"workspace_hash", "ws"}}),
              StatusIs(kInvalid,
                       "workspace_hash: unknown argument of recall (a "
                       "perseus_vault_recall name); did you mean workspace?"));
  // perseus_vault_recall itself says valid_at; the name is still Perseus Vault's valid_at's.
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"valid_at_unix_ms", kNow}}),
              StatusIs(kInvalid,
                       "valid_at_unix_ms: unknown argument of recall; did you mean "
                       "valid_at?"));
  ASSERT_OK_AND_ASSIGN(json stats, Call("stats", json::object()));
  EXPECT_EQ(stats["total_memories"], 0);
}

TEST_F(RegistryTest, AnUnknownArgumentWithNoCloseNameListsTheKnownOnes) {
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"trust_weight", 0.5}}),
              StatusIs(kInvalid,
                       "trust_weight: unknown argument of recall; the known arguments "
                       "are as_of, category, fields, limit, max_chars, mode, offset, query, "
                       "tags, type, valid_at, workspace"));
  EXPECT_THAT(Call("get", {{"x", 1}}),
              StatusIs(kInvalid,
                       "x: unknown argument of get; the known arguments are category, "
                       "id, key, workspace"));
  EXPECT_THAT(Call("stats", {{"verbose", true}}),
              StatusIs(kInvalid, "verbose: unknown argument of stats, which takes no arguments"));
}

TEST_F(RegistryTest, AnUnknownArgumentIsRefusedEvenWhenNull) {
  EXPECT_THAT(Call("stats", {{"verbose", nullptr}}),
              StatusIs(kInvalid, HasSubstr("verbose: unknown argument of stats")));
}

TEST_F(RegistryTest, AVeryLongUnknownNameIsShortenedInTheMessage) {
  absl::StatusOr<json> r = Call("stats", {{std::string(100000, 'v'), 1}});
  EXPECT_THAT(r, StatusIs(kInvalid, HasSubstr("...: unknown argument of stats")));
  EXPECT_LT(r.status().message().size(), 200u);
}

TEST_F(RegistryTest, PrefixedNamesAreCanonicalAndRefuseUnknownArguments) {
  OpenWith({.prefix = "strata_"});
  json args = Memory("editor", "vim");
  args["vaild_from"] = kNow;
  EXPECT_THAT(Call("strata_remember", args),
              StatusIs(kInvalid,
                       "vaild_from: unknown argument of remember; did you mean "
                       "valid_from?"));
}

TEST_F(RegistryTest, TheBodyIsFreeFormAndNotCheckedForNames) {
  ASSERT_OK(Call("remember", {{"category", "c"},
                              {"key", "k"},
                              {"body", {{"vaild_from", 1}, {"nested", {{"anything", true}}}}}}));
}

TEST_F(RegistryTest, PerseusNamesIgnoreArgumentsTheyDoNotDefine) {
  ASSERT_OK_AND_ASSIGN(json r,
                       Call("perseus_vault_remember", {{"category", "preference"},
                                                       {"key", "editor"},
                                                       {"body_json", R"({"text":"vim"})"},
                                                       {"trust_weight", 0.9},
                                                       {"vaild_from", kNow},
                                                       {"something_new", {{"nested", true}}}}));
  EXPECT_EQ(r["ok"], true);
  ASSERT_OK_AND_ASSIGN(
      json recalled,
      Call("perseus_vault_recall",
           {{"query", "vim"}, {"mode", "fts5"}, {"trust_weight", 0.7}, {"min_decay", 0.2}}));
  EXPECT_EQ(recalled["total"], 1);
  ASSERT_OK(Call("perseus_vault_stats", {{"verbose", true}}));
  ASSERT_OK(Call("perseus_vault_get_entity", {{"id", r["id"]}, {"include_history", true}}));
}

TEST_F(RegistryTest, WrongTypesOfKnownArgumentsAreStillErrors) {
  EXPECT_THAT(Call("recall", {{"query", "x"}, {"limit", "ten"}}),
              StatusIs(kInvalid, "limit: must be an integer, got \"ten\""));
  EXPECT_THAT(Call("perseus_vault_recall", {{"query", "x"}, {"limit", "ten"}}),
              StatusIs(kInvalid, "limit: must be an integer, got \"ten\""));
}

// A tool with an object argument, like remember's supersedes: {category, key, workspace}.
ToolSpec NestedTool() {
  return ToolSpec{
      .name = "nested",
      .input_schema = {{"type", "object"},
                       {"properties",
                        {{"key", {{"type", "string"}}},
                         {"body", {{"description", "Any JSON value."}}},
                         {"target",
                          {{"type", "object"},
                           {"properties",
                            {{"category", {{"type", "string"}}},
                             {"key", {{"type", "string"}}},
                             {"workspace", {{"type", "string"}}}}}}}}}},
  };
}

TEST(CheckDefinedArguments, RefusesAnUnknownMemberOfAnObjectArgumentByItsPath) {
  const ToolSpec tool = NestedTool();
  EXPECT_THAT(CheckDefinedArguments(tool, tool.input_schema,
                                    {{"key", "k"}, {"target", {{"categroy", "c"}, {"key", "k"}}}}),
              StatusIs(kInvalid,
                       "target.categroy: unknown argument of nested; did you mean "
                       "target.category?"));
  EXPECT_THAT(CheckDefinedArguments(tool, tool.input_schema, {{"target", {{"zzz", 1}}}}),
              StatusIs(kInvalid,
                       "target.zzz: unknown argument of nested; the known arguments "
                       "are target.category, target.key, target.workspace"));
}

TEST(CheckDefinedArguments, AcceptsDefinedMembersFreeFormValuesAndLeavesTypesToTheHandler) {
  const ToolSpec tool = NestedTool();
  EXPECT_THAT(CheckDefinedArguments(tool, tool.input_schema,
                                    {{"key", "k"},
                                     {"target", {{"category", "c"}, {"key", "k"}}},
                                     {"body", {{"anything", {{"at", "all"}}}}}}),
              IsOk());
  // A target that is not an object is the handler's type error to report.
  EXPECT_THAT(CheckDefinedArguments(tool, tool.input_schema, {{"target", "c/k"}}), IsOk());
  EXPECT_THAT(CheckDefinedArguments(tool, tool.input_schema, json::object()), IsOk());
}

TEST(CheckDefinedArguments, NamesThePathItIsGiven) {
  const ToolSpec tool = NestedTool();
  EXPECT_THAT(CheckDefinedArguments(tool, tool.input_schema, {{"kye", "k"}}, "items[3]"),
              StatusIs(kInvalid,
                       "items[3].kye: unknown argument of nested; did you mean "
                       "items[3].key?"));
}

TEST_F(RegistryTest, ArgumentsThatAreNotAnObjectAreInvalid) {
  for (const json& args : {json::array({"category", "c"}), json("category=c"), json(42)}) {
    EXPECT_THAT(Call("remember", args), StatusIs(kInvalid, "arguments: must be an object"))
        << args.dump();
    EXPECT_THAT(Call("perseus_vault_remember", args),
                StatusIs(kInvalid, "arguments: must be an object"))
        << args.dump();
  }
}

TEST_F(RegistryTest, NullArgumentsAreTakenAsEmpty) {
  ASSERT_OK_AND_ASSIGN(json stats, Call("stats", nullptr));
  EXPECT_EQ(stats["total_memories"], 0);
  EXPECT_THAT(Call("remember", nullptr), StatusIs(kInvalid, "category: required"));
}

// Call: remember_batch.

TEST_F(RegistryTest, RememberBatchGivesEachItemItsOwnResult) {
  const json items = json::array({
      Memory("a", "first"),
      {{"category", "preference"}, {"key", "b"}},                // No body: fails to parse.
      {{"category", "preference"}, {"key", ""}, {"body", "x"}},  // Empty key: the store refuses.
      Memory("d", "fourth"),
  });
  ASSERT_OK_AND_ASSIGN(json r, Call("remember_batch", {{"items", items}}));
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["created"], 2);
  EXPECT_EQ(r["updated"], 0);
  EXPECT_EQ(r["unchanged"], 0);
  EXPECT_EQ(r["failed"], 2);
  ASSERT_THAT(r["results"], SizeIs(4));
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r["results"][i]["index"], i);
  EXPECT_EQ(r["results"][0]["ok"], true);
  EXPECT_EQ(r["results"][0]["action"], "created");
  EXPECT_EQ(r["results"][0]["key"], "a");
  EXPECT_EQ(r["results"][1]["ok"], false);
  EXPECT_THAT(r["results"][1]["error"].get<std::string>(), HasSubstr("body: required"));
  EXPECT_EQ(r["results"][2]["ok"], false);
  EXPECT_THAT(r["results"][2]["error"].get<std::string>(),
              HasSubstr("key: must be a non-empty string"));
  EXPECT_EQ(r["results"][3]["ok"], true);
  EXPECT_EQ(r["results"][3]["key"], "d");
  // The good items were stored; the bad ones were not.
  ASSERT_OK_AND_ASSIGN(json stats, Call("stats", json::object()));
  EXPECT_EQ(stats["total_memories"], 2);
}

TEST_F(RegistryTest, RememberBatchCountsCreatedUpdatedAndUnchanged) {
  ASSERT_OK(Call("remember", Memory("a", "same")));
  ASSERT_OK(Call("remember", Memory("b", "old")));
  const json items = json::array({Memory("a", "same"), Memory("b", "new"), Memory("c", "x")});
  ASSERT_OK_AND_ASSIGN(json r, Call("remember_batch", {{"items", items}}));
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["unchanged"], 1);
  EXPECT_EQ(r["updated"], 1);
  EXPECT_EQ(r["created"], 1);
  EXPECT_EQ(r["failed"], 0);
  EXPECT_EQ(r["results"][1]["version"], 2);
}

TEST_F(RegistryTest, RememberBatchRejectsANonObjectItemAlone) {
  const json items = json::array({5, Memory("a", "x")});
  ASSERT_OK_AND_ASSIGN(json r, Call("remember_batch", {{"items", items}}));
  EXPECT_EQ(r["failed"], 1);
  EXPECT_EQ(r["created"], 1);
  EXPECT_EQ(r["results"][0]["error"], "item: must be an object, got an integer");
}

TEST_F(RegistryTest, RememberBatchNeedsAnArrayOfItems) {
  EXPECT_THAT(Call("remember_batch", json::object()), StatusIs(kInvalid, "items: required"));
  EXPECT_THAT(Call("remember_batch", {{"items", Memory("a", "x")}}),
              StatusIs(kInvalid, "items: must be an array of memories, got an object"));
}

TEST_F(RegistryTest, RememberBatchRejectsMoreThanTenThousandItems) {
  const json items(10001, json::object());
  EXPECT_THAT(Call("remember_batch", {{"items", items}}),
              StatusIs(kInvalid, "items: at most 10000 per batch, got 10001"));
}

TEST_F(RegistryTest, RememberBatchOfNoItemsIsOk) {
  ASSERT_OK_AND_ASSIGN(json r, Call("remember_batch", {{"items", json::array()}}));
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["results"], json::array());
  EXPECT_EQ(r["failed"], 0);
}

TEST_F(RegistryTest, RememberBatchRefusesAnItemsUnknownArgumentInThatItemAlone) {
  json misspelt = Memory("b", "second");
  misspelt["vaild_from"] = kNow - kDay;
  json perseus = Memory("c", "third");
  perseus["valid_from_unix_ms"] = kNow - kDay;
  const json items = json::array({Memory("a", "first"), misspelt, perseus});
  ASSERT_OK_AND_ASSIGN(json r, Call("remember_batch", {{"items", items}}));
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["created"], 1);
  EXPECT_EQ(r["failed"], 2);
  EXPECT_EQ(r["results"][0]["ok"], true);
  EXPECT_EQ(r["results"][1]["error"],
            "items[1].vaild_from: unknown argument of remember_batch; did you mean "
            "items[1].valid_from?");
  EXPECT_EQ(r["results"][2]["error"],
            "items[2].valid_from_unix_ms: unknown argument of remember_batch (a Perseus Vault "
            "name); did you mean items[2].valid_from?");
  ASSERT_OK_AND_ASSIGN(json b, Call("get", Identity("b")));
  EXPECT_EQ(b["found"], false);
}

TEST_F(RegistryTest, RememberBatchItemsTakeExactlyTheArgumentsOfRemember) {
  const json tools = registry_->List();
  EXPECT_EQ(
      PropertyNames(Listed(tools, "remember_batch")["inputSchema"]["properties"]["items"]["items"]),
      PropertyNames(Listed(tools, "remember")["inputSchema"]));
}

// Call: the Perseus Vault dialect.

TEST_F(RegistryTest, PerseusRememberTakesPerseusArgumentNames) {
  ASSERT_OK_AND_ASSIGN(
      json r, Call("perseus_vault_remember", {{"category", "decision"},
                                              {"key", "db"},
                                              {"body_json", R"({"choice":"sqlite"})"},
                                              {"type", "decision"},
                                              {"workspace_hash", "ws1"},
                                              {"valid_from_unix_ms", kNow - 3 * kDay},
                                              {"valid_to_unix_ms", std::to_string(kNow + 3 * kDay)},
                                              {"skip_dedup", true}}));
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["action"], "created");
  EXPECT_TRUE(r["id"].is_number_integer());
  EXPECT_EQ(r["category"], "decision");
  EXPECT_EQ(r["key"], "db");
  EXPECT_EQ(r["workspace"], "ws1");
  EXPECT_EQ(r["valid_from"], kNow - 3 * kDay);
  EXPECT_EQ(r["valid_to"], kNow + 3 * kDay);
  ASSERT_OK_AND_ASSIGN(
      json stored, Call("get", {{"category", "decision"}, {"key", "db"}, {"workspace", "ws1"}}));
  EXPECT_EQ(stored["found"], true);
  EXPECT_EQ(stored["type"], "decision");
  EXPECT_EQ(stored["body"]["choice"], "sqlite");
}

TEST_F(RegistryTest, PerseusAsOfTakesAsOfUnixMsAndAddsPerseusFields) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  clock_.Advance(kMinute);
  ASSERT_OK(Call("remember", Memory("editor", "emacs")));
  json args = Identity("editor");
  args["as_of_unix_ms"] = std::to_string(kNow + 1);
  ASSERT_OK_AND_ASSIGN(json r, Call("perseus_vault_as_of", args));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["body_json"], R"({"text":"vim"})");
  EXPECT_EQ(r["entity_type"], "insight");
  EXPECT_EQ(r["valid_from_unix_ms"], kNow);
  EXPECT_TRUE(r["valid_to_unix_ms"].is_null());
  EXPECT_EQ(r["recorded_at_unix_ms"], kNow);
  EXPECT_EQ(r["invalidated_at_unix_ms"], kNow + kMinute);
  EXPECT_EQ(r["is_live_version"], false);
  EXPECT_EQ(r["as_of_unix_ms"], kNow + 1);
  EXPECT_EQ(r["as_of"], kNow + 1);
  // The canonical fields stay.
  EXPECT_EQ(r["valid_from"], kNow);
  EXPECT_EQ(r["version"], 1);
}

TEST_F(RegistryTest, PerseusAsOfOfTheCurrentVersionIsLive) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  json args = Identity("editor");
  args["as_of_unix_ms"] = kNow + kDay;
  ASSERT_OK_AND_ASSIGN(json r, Call("perseus_vault_as_of", args));
  EXPECT_EQ(r["is_live_version"], true);
  EXPECT_TRUE(r["invalidated_at_unix_ms"].is_null());
}

TEST_F(RegistryTest, PerseusAsOfNotFoundEchoesTheInstant) {
  json args = Identity("nothing");
  args["as_of_unix_ms"] = kNow;
  ASSERT_OK_AND_ASSIGN(json r, Call("perseus_vault_as_of", args));
  EXPECT_EQ(r["found"], false);
  EXPECT_EQ(r["category"], "preference");
  EXPECT_EQ(r["key"], "nothing");
  EXPECT_EQ(r["as_of_unix_ms"], kNow);
}

TEST_F(RegistryTest, PerseusValidAtTakesValidAtUnixMs) {
  json memory = Memory("title", "engineer");
  memory["valid_from"] = kNow - 10 * kDay;
  memory["valid_to"] = kNow - 5 * kDay;
  ASSERT_OK(Call("remember", memory));
  json args = Identity("title");
  args["valid_at_unix_ms"] = kNow - 7 * kDay;
  ASSERT_OK_AND_ASSIGN(json r, Call("perseus_vault_valid_at", args));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["valid_to_unix_ms"], kNow - 5 * kDay);
  EXPECT_EQ(r["valid_at_unix_ms"], kNow - 7 * kDay);
  EXPECT_EQ(r["is_live_version"], true);
}

TEST_F(RegistryTest, PerseusBitemporalTakesTxAtAndValidAtUnixMs) {
  json memory = Memory("title", "engineer");
  memory["valid_from"] = kNow - 10 * kDay;
  ASSERT_OK(Call("remember", memory));
  json args = Identity("title");
  args["tx_at_unix_ms"] = kNow;
  args["valid_at_unix_ms"] = kNow - kDay;
  ASSERT_OK_AND_ASSIGN(json r, Call("perseus_vault_bitemporal", args));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["body"]["text"], "engineer");
  EXPECT_EQ(r["tx_at_unix_ms"], kNow);
  EXPECT_EQ(r["valid_at_unix_ms"], kNow - kDay);
  args["tx_at_unix_ms"] = kNow - 1;
  ASSERT_OK_AND_ASSIGN(json before, Call("perseus_vault_bitemporal", args));
  EXPECT_EQ(before["found"], false);
}

TEST_F(RegistryTest, PerseusRecallCopiesBodyFieldsOntoItems) {
  ASSERT_OK(Call(
      "remember",
      {{"category", "person"}, {"key", "ana"}, {"body", {{"role", "lead"}, {"team", "storage"}}}}));
  ASSERT_OK_AND_ASSIGN(json r,
                       Call("perseus_vault_recall", {{"query", "storage"}, {"mode", "fts5"}}));
  EXPECT_EQ(r["total"], 1);
  ASSERT_THAT(r["items"], SizeIs(1));
  const json& item = r["items"][0];
  EXPECT_EQ(item["key"], "ana");
  EXPECT_TRUE(item["body_json"].is_string());
  EXPECT_EQ(item["role"], "lead");
  EXPECT_EQ(item["team"], "storage");
  EXPECT_EQ(item["entity_type"], "insight");
  EXPECT_EQ(item["is_live_version"], true);
  EXPECT_EQ(item["recorded_at_unix_ms"], kNow);
  // A body field never replaces an item field of the same name.
  ASSERT_OK(Call(
      "remember",
      {{"category", "person"}, {"key", "bo"}, {"body", {{"key", "shadow"}, {"team", "storage"}}}}));
  ASSERT_OK_AND_ASSIGN(json both,
                       Call("perseus_vault_recall", {{"query", "shadow"}, {"mode", "fts5"}}));
  ASSERT_THAT(both["items"], SizeIs(1));
  EXPECT_EQ(both["items"][0]["key"], "bo");
}

TEST_F(RegistryTest, PerseusRecallTakesWorkspaceHashAndAsOfUnixMs) {
  ASSERT_OK(
      Call("remember", {{"category", "c"}, {"key", "k"}, {"workspace", "ws1"}, {"body", "alpha"}}));
  ASSERT_OK(
      Call("remember", {{"category", "c"}, {"key", "k"}, {"workspace", "ws2"}, {"body", "alpha"}}));
  ASSERT_OK_AND_ASSIGN(json scoped,
                       Call("perseus_vault_recall",
                            {{"query", "alpha"}, {"mode", "fts5"}, {"workspace_hash", "ws2"}}));
  ASSERT_THAT(scoped["items"], SizeIs(1));
  EXPECT_EQ(scoped["items"][0]["workspace"], "ws2");
  clock_.Advance(kMinute);
  ASSERT_OK(
      Call("remember", {{"category", "c"}, {"key", "k"}, {"workspace", "ws1"}, {"body", "beta"}}));
  ASSERT_OK_AND_ASSIGN(json now,
                       Call("perseus_vault_recall",
                            {{"query", "alpha"}, {"mode", "fts5"}, {"workspace_hash", "ws1"}}));
  EXPECT_THAT(now["items"], IsEmpty());
  ASSERT_OK_AND_ASSIGN(json past, Call("perseus_vault_recall", {{"query", "alpha"},
                                                                {"mode", "fts5"},
                                                                {"workspace_hash", "ws1"},
                                                                {"as_of_unix_ms", kNow + 1}}));
  ASSERT_THAT(past["items"], SizeIs(1));
  EXPECT_EQ(past["items"][0]["body"], "alpha");
  EXPECT_EQ(past["items"][0]["is_live_version"], false);
}

TEST_F(RegistryTest, PerseusRecallKeepsValidAt) {
  json memory = Memory("title", "engineer");
  memory["valid_from"] = kNow - 10 * kDay;
  memory["valid_to"] = kNow - 5 * kDay;
  ASSERT_OK(Call("remember", memory));
  ASSERT_OK_AND_ASSIGN(json inside, Call("perseus_vault_recall",
                                         {{"query", "engineer"}, {"valid_at", kNow - 7 * kDay}}));
  EXPECT_THAT(inside["items"], SizeIs(1));
  ASSERT_OK_AND_ASSIGN(json outside,
                       Call("perseus_vault_recall", {{"query", "engineer"}, {"valid_at", kNow}}));
  EXPECT_THAT(outside["items"], IsEmpty());
}

TEST_F(RegistryTest, PerseusGetEntityReadsById) {
  ASSERT_OK_AND_ASSIGN(json written, Call("remember", Memory("editor", "vim")));
  ASSERT_OK_AND_ASSIGN(json r, Call("perseus_vault_get_entity", {{"id", written["id"]}}));
  EXPECT_EQ(r["found"], true);
  EXPECT_EQ(r["key"], "editor");
  EXPECT_EQ(r["entity_type"], "insight");
  EXPECT_EQ(r["is_live_version"], true);
}

TEST_F(RegistryTest, PerseusHistoryMarksOnlyTheNewestVersionLive) {
  ASSERT_OK(Call("remember", Memory("editor", "vim")));
  clock_.Advance(kMinute);
  ASSERT_OK(Call("remember", Memory("editor", "emacs")));
  ASSERT_OK_AND_ASSIGN(json r, Call("perseus_vault_history", Identity("editor")));
  EXPECT_EQ(r["total"], 2);
  EXPECT_EQ(r["returned"], 2);
  ASSERT_THAT(r["versions"], SizeIs(2));
  EXPECT_EQ(r["versions"][0]["is_live_version"], true);
  EXPECT_EQ(r["versions"][1]["is_live_version"], false);
  EXPECT_EQ(r["versions"][1]["invalidated_at_unix_ms"], kNow + kMinute);
}

TEST_F(RegistryTest, PerseusForgetAndStatsUsePerseusFields) {
  ASSERT_OK(Call("perseus_vault_remember", Memory("editor", "vim")));
  ASSERT_OK(Call("perseus_vault_remember", Memory("shell", "zsh")));
  ASSERT_OK_AND_ASSIGN(json forgot, Call("perseus_vault_forget", Identity("shell")));
  EXPECT_EQ(forgot["found"], true);
  EXPECT_EQ(forgot["key"], "shell");
  ASSERT_OK_AND_ASSIGN(json stats, Call("perseus_vault_stats", json::object()));
  EXPECT_EQ(stats["total_entities"], 2);
  EXPECT_EQ(stats["active_entities"], 1);
  EXPECT_EQ(stats["by_category"], json({{"preference", 1}}));
  EXPECT_GT(stats["db_file_size_bytes"].get<int64_t>(), 0);
}

// Every result satisfies its tool's outputSchema.

TEST(SchemaViolations, ReportsMissingRequiredMembersWrongTypesAndValuesOutsideTheEnum) {
  const json schema = {
      {"type", "object"},
      {"properties",
       {{"n", {{"type", "integer"}}},
        {"s", {{"type", json::array({"string", "null"})}}},
        {"e", {{"type", "string"}, {"enum", {"a", "b"}}}}}},
      {"required", {"n", "e"}},
  };
  EXPECT_THAT(SchemaViolations(schema, {{"n", 1}, {"s", nullptr}, {"e", "a"}}), IsEmpty());
  EXPECT_THAT(SchemaViolations(schema, {{"n", 2.0}, {"e", "b"}}), IsEmpty());
  EXPECT_THAT(SchemaViolations(schema, {{"e", "a"}}), ElementsAre("missing required n"));
  EXPECT_THAT(SchemaViolations(schema, {{"n", 1.5}, {"e", "a"}}),
              ElementsAre(StartsWith("n: 1.5 is not of type")));
  EXPECT_THAT(SchemaViolations(schema, {{"n", 1}, {"s", 3}, {"e", "a"}}), SizeIs(1));
  EXPECT_THAT(SchemaViolations(schema, {{"n", 1}, {"e", "c"}}),
              ElementsAre(HasSubstr("not in the enum")));
  EXPECT_THAT(SchemaViolations(schema, json::array()), SizeIs(1));
}

// Arguments for each tool that make it find something, after SeedForSchemaCheck.
// The identity of `key` and each of `instants` at `at`: a time-axis read's arguments, exactly.
json TimeAxis(const std::string& key, std::initializer_list<const char*> instants, int64_t at) {
  json args = Identity(key);
  for (const char* instant : instants) args[instant] = at;
  return args;
}

std::map<std::string, json> FoundArgs(int64_t id) {
  return {
      {"remember", Memory("editor", "vim")},
      {"remember_batch", {{"items", json::array({Memory("x", "y"), json(5)})}}},
      {"recall", {{"query", "vim"}}},
      {"get", {{"id", id}}},
      {"history", Identity("editor")},
      {"as_of", TimeAxis("editor", {"as_of"}, kNow + 1)},
      {"valid_at", TimeAxis("editor", {"valid_at"}, kNow + 1)},
      {"bitemporal", TimeAxis("editor", {"tx_at", "valid_at"}, kNow + 1)},
      {"forget", Identity("shell")},
      {"purge", Identity("gone")},
      {"embed", Identity("editor")},
      {"stats", json::object()},
  };
}

// Arguments for each tool that make it find nothing.
std::map<std::string, json> NotFoundArgs() {
  return {
      {"remember", Memory("fresh", "new")},
      {"remember_batch", {{"items", json::array()}}},
      {"recall", {{"query", "nowhere"}}},
      {"get", Identity("nothing")},
      {"history", Identity("nothing")},
      {"as_of", TimeAxis("nothing", {"as_of"}, kNow)},
      {"valid_at", TimeAxis("nothing", {"valid_at"}, kNow)},
      {"bitemporal", TimeAxis("nothing", {"tx_at", "valid_at"}, kNow)},
      {"forget", Identity("nothing")},
      {"purge", Identity("nothing")},
      {"embed", {{"category", "nothing"}}},
      {"stats", json::object()},
  };
}

class OutputSchemaTest : public RegistryTest {
 protected:
  // Stores the memories FoundArgs refers to; returns the id of "editor".
  int64_t Seed() {
    absl::StatusOr<json> editor = Call("remember", Memory("editor", "vim"));
    EXPECT_THAT(editor, IsOk());
    EXPECT_THAT(Call("remember", Memory("shell", "zsh")), IsOk());
    EXPECT_THAT(Call("remember", Memory("gone", "soon")), IsOk());
    clock_.Advance(kMinute);
    return editor.ok() ? (*editor)["id"].get<int64_t>() : 0;
  }

  // Calls every listed tool with `args_by_tool` under `dialect`'s names and checks each
  // result against the listed outputSchema.
  void CheckEveryTool(const std::map<std::string, json>& args_by_tool, Dialect dialect) {
    const json tools = registry_->List();
    ASSERT_THAT(tools, SizeIs(args_by_tool.size()));
    for (const json& tool : tools) {
      const std::string name = tool["name"].get<std::string>();
      SCOPED_TRACE(name);
      auto args = args_by_tool.find(name);
      ASSERT_NE(args, args_by_tool.end()) << "no sample arguments for " << name;
      std::optional<ToolRegistry::Resolved> resolved = registry_->Find(name);
      ASSERT_TRUE(resolved.has_value());
      ToolRegistry::Resolved in_dialect = *resolved;
      in_dialect.dialect = dialect;
      absl::StatusOr<json> result = registry_->Call(in_dialect, args->second);
      ASSERT_THAT(result, IsOk());
      EXPECT_THAT(SchemaViolations(tool["outputSchema"], *result), IsEmpty()) << result->dump();
    }
  }
};

TEST_F(OutputSchemaTest, EveryToolsResultWhenFoundMatchesItsOutputSchema) {
  const int64_t id = Seed();
  CheckEveryTool(FoundArgs(id), Dialect::kCanonical);
}

TEST_F(OutputSchemaTest, EveryToolsResultWhenNotFoundMatchesItsOutputSchema) {
  Seed();
  CheckEveryTool(NotFoundArgs(), Dialect::kCanonical);
}

TEST_F(OutputSchemaTest, EveryToolsPerseusResultMatchesItsOutputSchema) {
  const int64_t id = Seed();
  CheckEveryTool(FoundArgs(id), Dialect::kPerseusVault);
}

TEST_F(OutputSchemaTest, AnUnknownIdMatchesGetsOutputSchema) {
  Seed();
  std::map<std::string, json> args = NotFoundArgs();
  args["get"] = {{"id", 123456}};
  CheckEveryTool(args, Dialect::kCanonical);
}

}  // namespace
}  // namespace strata::tools
