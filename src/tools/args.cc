#include "tools/args.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "tools/limits.h"
#include "util/json_text.h"
#include "util/time_parse.h"

namespace strata::tools {
namespace {

bool ParseInt64(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return false;
  }
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  out = v;
  return true;
}

// Integral JSON numbers (1.7e12 included) as int64.
bool JsonToInt64(const nlohmann::json& v, int64_t& out) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return false;
    }
    out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > 9.2e18) return false;
    out = static_cast<int64_t>(d);
    return true;
  }
  return false;
}

// InvalidArgument when `value` of argument `name` is longer than its bound.
absl::Status CheckLength(const char* name, const std::string& value, const char* what) {
  const size_t max_bytes = MaxStringBytes(name);
  if (value.size() <= max_bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": ", what, "at most ", max_bytes, " bytes, got ", value.size()));
}

std::string Shown(const nlohmann::json& v) {
  std::string s = JsonText(v);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

}  // namespace

const char* JsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::number_float:
      return "a number";
    default:
      return "an integer";
  }
}

const nlohmann::json* Args::Raw(const char* name) const {
  if (!object_.is_object()) return nullptr;
  auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool Args::Has(const char* name) const { return Raw(name) != nullptr; }

absl::StatusOr<std::string> Args::RequiredString(const char* name) const {
  const nlohmann::json* v = Raw(name);
  if (v == nullptr) return absl::InvalidArgumentError(absl::StrCat(name, ": required"));
  if (!v->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": must be a string, got ", JsonTypeName(*v)));
  }
  const std::string& s = v->get_ref<const std::string&>();
  if (absl::Status length = CheckLength(name, s, ""); !length.ok()) return length;
  return s;
}

absl::StatusOr<std::optional<std::string>> Args::OptionalString(const char* name) const {
  if (!Has(name)) return std::nullopt;
  absl::StatusOr<std::string> s = RequiredString(name);
  if (!s.ok()) return s.status();
  return std::optional<std::string>(*std::move(s));
}

absl::StatusOr<std::optional<int64_t>> Args::OptionalInt(const char* name, int64_t min,
                                                         int64_t max) const {
  const nlohmann::json* v = Raw(name);
  if (v == nullptr) return std::nullopt;
  int64_t out = 0;
  const bool ok = v->is_string() ? ParseInt64(v->get<std::string>(), out) : JsonToInt64(*v, out);
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": must be an integer, got ", Shown(*v)));
  }
  if (out < min || out > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": must be between ", min, " and ", max, ", got ", out));
  }
  return out;
}

absl::StatusOr<std::optional<double>> Args::OptionalNumber(const char* name) const {
  const nlohmann::json* v = Raw(name);
  if (v == nullptr) return std::nullopt;
  if (v->is_number()) return v->get<double>();
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d)) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat(name, ": must be a number, got ", Shown(*v)));
}

absl::StatusOr<std::optional<bool>> Args::OptionalBool(const char* name) const {
  const nlohmann::json* v = Raw(name);
  if (v == nullptr) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  return absl::InvalidArgumentError(absl::StrCat(name, ": must be true or false, got ", Shown(*v)));
}

absl::StatusOr<std::optional<int64_t>> Args::OptionalTime(const char* name) const {
  const nlohmann::json* v = Raw(name);
  if (v == nullptr) return std::nullopt;
  int64_t out = 0;
  if (JsonToInt64(*v, out)) return out;
  if (v->is_string()) {
    absl::StatusOr<int64_t> parsed = ParseTimeText(v->get_ref<const std::string&>(), name);
    if (!parsed.ok()) return parsed.status();
    return *parsed;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      name, ": must be unix milliseconds or an ISO-8601 time string, got ", Shown(*v)));
}

absl::StatusOr<int64_t> Args::RequiredTime(const char* name) const {
  absl::StatusOr<std::optional<int64_t>> t = OptionalTime(name);
  if (!t.ok()) return t.status();
  if (!*t) return absl::InvalidArgumentError(absl::StrCat(name, ": required"));
  return **t;
}

absl::StatusOr<std::vector<std::string>> Args::StringList(const char* name,
                                                          size_t max_items) const {
  std::vector<std::string> out;
  const nlohmann::json* v = Raw(name);
  if (v == nullptr) return out;
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    if (absl::Status length = CheckLength(name, s, "each item "); !length.ok()) return length;
    out.push_back(s);
    return out;
  }
  if (!v->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": must be an array of strings, got ", JsonTypeName(*v)));
  }
  if (v->size() > max_items) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": at most ", max_items, " items, got ", v->size()));
  }
  for (const auto& item : *v) {
    if (!item.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": every item must be a string, got ", JsonTypeName(item)));
    }
    const std::string& s = item.get_ref<const std::string&>();
    if (absl::Status length = CheckLength(name, s, "each item "); !length.ok()) return length;
    out.push_back(s);
  }
  return out;
}

}  // namespace strata::tools
