#include "transfer/server_memory.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "util/json_text.h"
#include "util/status_macros.h"

namespace strata::transfer {
namespace {

using nlohmann::json;

struct Relation {
  std::string from;
  std::string to;
  std::string relation_type;
  auto operator<=>(const Relation&) const = default;
};

struct Entity {
  int64_t line = 0;
  std::string name;
  std::string entity_type;
  json observations;
  std::set<Relation> relations;  // Sorted: the body does not depend on the file's order.
};

// The category of an entityType: trimmed and ASCII-lowercased ("Person " and "person" are
// one category); an empty one takes the default, else "entity".
std::string Category(const std::string& entity_type, const ForeignImport& what) {
  std::string category = absl::AsciiStrToLower(absl::StripAsciiWhitespace(entity_type));
  if (category.empty()) category = what.default_category.value_or("entity");
  return category;
}

absl::Status OnlyKnown(const json& object, std::initializer_list<const char*> names) {
  for (const auto& item : object.items()) {
    const std::string& name = item.key();  // A structured binding cannot be captured.
    if (std::find_if(names.begin(), names.end(), [&](const char* n) { return name == n; }) ==
        names.end()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": unknown field"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StringField(const json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end()) return absl::InvalidArgumentError(absl::StrCat(name, ": missing"));
  if (!it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": expected a string, got ", it->type_name()));
  }
  return it->get<std::string>();
}

absl::StatusOr<Entity> ParseEntity(const json& object) {
  RETURN_IF_ERROR(OnlyKnown(object, {"type", "name", "entityType", "observations"}));
  Entity e;
  ASSIGN_OR_RETURN(e.name, StringField(object, "name"));
  ASSIGN_OR_RETURN(e.entity_type, StringField(object, "entityType"));
  auto it = object.find("observations");
  if (it == object.end()) return absl::InvalidArgumentError("observations: missing");
  if (!it->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("observations: expected a list of strings, got ", it->type_name()));
  }
  for (const json& o : *it) {
    if (!o.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("observations: expected strings, got ", o.type_name()));
    }
  }
  e.observations = *it;
  return e;
}

absl::StatusOr<Relation> ParseRelation(const json& object) {
  RETURN_IF_ERROR(OnlyKnown(object, {"type", "from", "to", "relationType"}));
  Relation r;
  ASSIGN_OR_RETURN(r.from, StringField(object, "from"));
  ASSIGN_OR_RETURN(r.to, StringField(object, "to"));
  ASSIGN_OR_RETURN(r.relation_type, StringField(object, "relationType"));
  return r;
}

}  // namespace

absl::StatusOr<std::vector<ForeignRecord>> ReadServerMemory(const ForeignImport& what) {
  int64_t budget = kMaxForeignBytes;
  ASSIGN_OR_RETURN(const std::string text, ReadWhole(what.path, budget));
  std::vector<ForeignRecord> records;
  const auto bad = [&](int64_t line, const absl::Status& error) {
    records.push_back({.at = {.file = what.path, .line = line}, .record = error});
  };
  // The whole graph first: a relation may come before the entities it names.
  std::vector<Entity> entities;
  absl::flat_hash_map<std::string, size_t> by_name;
  std::vector<std::pair<int64_t, Relation>> relations;
  JsonParser parser;
  for (const TextLine& line : NonBlankLines(text)) {
    absl::StatusOr<json> parsed = parser.Parse(line.text);
    if (!parsed.ok()) {
      bad(line.number, parsed.status());
      continue;
    }
    const json& object = *parsed;
    const json type = object.is_object() ? object.value("type", json()) : json();
    if (type == "entity") {
      absl::StatusOr<Entity> entity = ParseEntity(object);
      if (!entity.ok()) {
        bad(line.number, entity.status());
      } else if (auto [it, added] = by_name.emplace(entity->name, entities.size()); !added) {
        bad(line.number, absl::InvalidArgumentError(absl::StrCat("name: entity \"", entity->name,
                                                                 "\" is defined already, at line ",
                                                                 entities[it->second].line)));
      } else {
        entity->line = line.number;
        entities.push_back(*std::move(entity));
      }
    } else if (type == "relation") {
      absl::StatusOr<Relation> relation = ParseRelation(object);
      if (!relation.ok()) {
        bad(line.number, relation.status());
      } else {
        relations.emplace_back(line.number, *std::move(relation));
      }
    } else {
      bad(line.number, absl::InvalidArgumentError(
                           "expected an object with \"type\": \"entity\" or \"relation\""));
    }
  }
  // Each relation goes into the bodies of both ends, or of the one end in the file.
  for (auto& [line, relation] : relations) {
    auto from = by_name.find(relation.from);
    auto to = by_name.find(relation.to);
    if (from == by_name.end() && to == by_name.end()) {
      bad(line,
          absl::InvalidArgumentError(absl::StrCat("relation from \"", relation.from, "\" to \"",
                                                  relation.to, "\" names no entity of this file")));
      continue;
    }
    if (from != by_name.end()) entities[from->second].relations.insert(relation);
    if (to != by_name.end()) entities[to->second].relations.insert(relation);
  }
  for (Entity& e : entities) {
    json links = json::array();
    for (const Relation& r : e.relations) {
      links.push_back({{"from", r.from}, {"relationType", r.relation_type}, {"to", r.to}});
    }
    const json body = {{"name", e.name},
                       {"entityType", e.entity_type},
                       {"observations", std::move(e.observations)},
                       {"relations", std::move(links)}};
    WriteRequest request{.identity = {.category = Category(e.entity_type, what),
                                      .key = e.name,
                                      .workspace = what.workspace},
                         .body_json = JsonText(body),
                         .type = "entity",
                         .source = "server-memory",
                         .dedup = false};
    records.push_back({.at = {.file = what.path, .line = e.line}, .record = std::move(request)});
  }
  std::stable_sort(
      records.begin(), records.end(),
      [](const ForeignRecord& a, const ForeignRecord& b) { return a.at.line < b.at.line; });
  return records;
}

}  // namespace strata::transfer
