#pragma once
// Reading tool arguments: types checked, numeric strings accepted, every error naming the
// argument, the rule and the value, for a model to read.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace strata::tools {

// A view over a tool call's `arguments` object. Unknown members are ignored here (the registry
// refuses them in canonical calls first: CheckDefinedArguments in tools/tool.h). Every string
// read, and every item of a string list, is at most MaxStringBytes(name) bytes
// (tools/limits.h); a longer one is an InvalidArgument naming the argument and the bound.
// Thread safety: immutable; borrows the JSON it reads.
class Args {
 public:
  explicit Args(const nlohmann::json& object) : object_(object) {}

  bool Has(const char* name) const;
  absl::StatusOr<std::string> RequiredString(const char* name) const;
  absl::StatusOr<std::optional<std::string>> OptionalString(const char* name) const;
  // An integer (or a numeric string) in [min, max].
  absl::StatusOr<std::optional<int64_t>> OptionalInt(const char* name, int64_t min,
                                                     int64_t max) const;
  absl::StatusOr<std::optional<double>> OptionalNumber(const char* name) const;
  absl::StatusOr<std::optional<bool>> OptionalBool(const char* name) const;
  // Unix ms as an integer, a numeric string or an ISO-8601 / RFC 3339 string.
  absl::StatusOr<std::optional<int64_t>> OptionalTime(const char* name) const;
  absl::StatusOr<int64_t> RequiredTime(const char* name) const;
  // An array of strings (a single string is taken as one element), at most `max_items`.
  // Absent or null: empty.
  absl::StatusOr<std::vector<std::string>> StringList(const char* name, size_t max_items) const;
  // The raw member, or null when absent.
  const nlohmann::json* Raw(const char* name) const;

 private:
  const nlohmann::json& object_;  // Not owned; outlives this.
};

// "a string", "an integer", ... for error messages.
const char* JsonTypeName(const nlohmann::json& value);

}  // namespace strata::tools
