#include "text/body_text.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "util/hash.h"
#include "util/json_text.h"

namespace strata::text {
namespace {

// Appends the string values of `value`, depth first, newline-separated.
void Collect(const nlohmann::json& value, std::string& out) {
  if (value.is_structured()) {
    for (const auto& child : value) Collect(child, out);
    return;
  }
  if (!value.is_string()) return;
  if (!out.empty()) out += '\n';
  out += value.get_ref<const std::string&>();
}

// Appends every scalar of `value` but null, depth first, with the member holding it.
void CollectValues(const nlohmann::json& value, const std::string& member,
                   std::vector<BodyValue>& out) {
  if (value.is_object()) {
    for (const auto& [name, child] : value.items()) CollectValues(child, name, out);
  } else if (value.is_array()) {
    for (const auto& child : value) CollectValues(child, member, out);
  } else if (value.is_string()) {
    out.push_back({.member = member, .value = value.get<std::string>(), .is_string = true});
  } else if (value.is_number() || value.is_boolean()) {
    out.push_back({.member = member, .value = value.dump()});
  }
}

// True when no array or object in `json_text` nests deeper than `max_depth`. Strings are
// skipped, so brackets inside them do not count. Checked before parsing: the parser recurses.
bool DepthWithin(std::string_view json_text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json_text.size(); ++i) {
    const char c = json_text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace

std::string BodyText(std::string_view body_json) {
  if (!DepthWithin(body_json, kMaxBodyDepth)) return std::string(body_json);
  nlohmann::json parsed = ParseJsonText(body_json);
  if (parsed.is_discarded()) return std::string(body_json);
  std::string out;
  Collect(parsed, out);
  return out;
}

absl::StatusOr<ParsedBody> ParseBody(std::string_view body_json) {
  if (!DepthWithin(body_json, kMaxBodyDepth)) {
    return absl::InvalidArgumentError(absl::StrCat("body_json: nested deeper than ", kMaxBodyDepth,
                                                   " levels of arrays and objects"));
  }
  nlohmann::json parsed = ParseJsonText(body_json);
  if (parsed.is_discarded()) {
    return absl::InvalidArgumentError("body_json: must be a JSON text (object, array, string...)");
  }
  ParsedBody out;
  out.normal_json = JsonText(parsed);
  out.normal_hash = Fnv1a64(out.normal_json);
  Collect(parsed, out.text);
  CollectValues(parsed, "", out.values);
  return out;
}

}  // namespace strata::text
