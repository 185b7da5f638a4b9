#include "text/body_text.h"

#include <nlohmann/json.hpp>

namespace strata::text {
namespace {

void Collect(const nlohmann::json& value, std::string& out) {
  if (value.is_string()) {
    if (!out.empty()) out += '\n';
    out += value.get_ref<const std::string&>();
  } else if (value.is_structured()) {
    for (const auto& child : value) Collect(child, out);
  }
}

}  // namespace

std::string BodyText(std::string_view body_json) {
  nlohmann::json parsed = nlohmann::json::parse(body_json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::string(body_json);
  std::string out;
  Collect(parsed, out);
  return out;
}

}  // namespace strata::text
