#include "util/json_text.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace strata {
namespace {

using nlohmann::json;

std::string NlohmannText(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Length of the well-formed UTF-8 sequence starting at `p` (a byte >= 0x80), or 0 when it is
// not one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(const unsigned char* p, const unsigned char* end) {
  const auto continuation = [&](size_t i) { return p + i < end && (p[i] & 0xC0) == 0x80; };
  const unsigned char b = p[0];
  if (b >= 0xC2 && b <= 0xDF) return continuation(1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b == 0xE0 && p[1] < 0xA0) return 0;  // Overlong.
    if (b == 0xED && p[1] > 0x9F) return 0;  // A surrogate.
    return 3;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b == 0xF0 && p[1] < 0x90) return 0;  // Overlong.
    if (b == 0xF4 && p[1] > 0x8F) return 0;  // Above U+10FFFF.
    return 4;
  }
  return 0;
}

// Appends the escaped body of `text` (no quotes); false, with `out` partly written, when
// `text` is not valid UTF-8.
bool AppendEscaped(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  const auto* run = p;  // Start of the bytes not yet copied.
  while (p < end) {
    // Eight plain bytes at a time. Each term is non-zero exactly when some byte of `w` is
    // below 0x20, is '"', is '\\', or is 0x80 or above (the classic "has a byte less than"
    // and "has a zero byte" word tests).
    constexpr uint64_t kOnes = 0x0101010101010101;
    constexpr uint64_t kHigh = 0x8080808080808080;
    while (end - p >= 8) {
      uint64_t w;
      std::memcpy(&w, p, sizeof w);
      const uint64_t quote = w ^ (kOnes * '"');
      const uint64_t backslash = w ^ (kOnes * '\\');
      const uint64_t special = ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) |
                               ((backslash - kOnes) & ~backslash) | w;
      if ((special & kHigh) != 0) break;
      p += 8;
    }
    if (p == end) break;
    const unsigned char c = *p;
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++p;
      continue;
    }
    if (c >= 0x80) {
      const size_t n = Utf8SequenceLength(p, end);
      if (n == 0) return false;
      p += n;
      continue;
    }
    out.append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        const char escape[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out.append(escape, sizeof escape);
      }
    }
    run = ++p;
  }
  out.append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
  return true;
}

template <typename Int>
void AppendInteger(Int value, std::string& out) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, static_cast<size_t>(end - digits));
}

// The value of `e`; `negative_zero` is set when a number in it is -0.0 (which simdjson also
// gives for the text "-0", an integer zero to nlohmann).
json ToNlohmann(simdjson::dom::element e, bool& negative_zero) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      json out = json::object();
      const simdjson::dom::object object = e.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair field : object) {
        out[std::string(field.key)] = ToNlohmann(field.value, negative_zero);
      }
      return out;
    }
    case simdjson::dom::element_type::ARRAY: {
      json out = json::array();
      const simdjson::dom::array array = e.get_array().value_unsafe();
      for (simdjson::dom::element child : array) {
        out.push_back(ToNlohmann(child, negative_zero));
      }
      return out;
    }
    case simdjson::dom::element_type::STRING:
      return std::string(e.get_string().value_unsafe());
    case simdjson::dom::element_type::INT64:
      return e.get_int64().value_unsafe();
    case simdjson::dom::element_type::UINT64:
      return e.get_uint64().value_unsafe();
    case simdjson::dom::element_type::DOUBLE: {
      const double d = e.get_double().value_unsafe();
      if (d == 0 && std::signbit(d)) negative_zero = true;
      return d;
    }
    case simdjson::dom::element_type::BOOL:
      return e.get_bool().value_unsafe();
    case simdjson::dom::element_type::NULL_VALUE:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

struct JsonParser::Impl {
  int max_depth;
  simdjson::dom::parser parser;
  bool negative_zero = false;  // Set by the last Parse.
};

JsonParser::JsonParser(int max_depth) : impl_(std::make_unique<Impl>()) {
  impl_->max_depth = max_depth;
}

JsonParser::~JsonParser() = default;

absl::StatusOr<json> JsonParser::Parse(std::string_view text) {
  simdjson::padded_string padded(text.data(), text.size());
  // Buffers are reused while they fit: allocating per message (simdjson frees and reallocates
  // whenever the size differs) cost more than parsing a small one. One huge message does not
  // pin its buffers: they shrink back when four times what a message needs.
  constexpr size_t kKeep = 64 * 1024;
  const size_t capacity = impl_->parser.capacity();
  const bool fits = padded.size() <= capacity && capacity <= 4 * std::max(padded.size(), kKeep);
  if (!fits && impl_->parser.allocate(std::max(padded.size(), kKeep),
                                      impl_->max_depth) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("the message is too large");
  }
  simdjson::dom::element root;
  switch (const simdjson::error_code error = impl_->parser.parse(padded).get(root)) {
    case simdjson::SUCCESS:
      break;
    case simdjson::UTF8_ERROR:
      return absl::InvalidArgumentError("the message is not valid UTF-8");
    case simdjson::DEPTH_ERROR:
      return absl::InvalidArgumentError(
          absl::StrCat("JSON nested deeper than ", impl_->max_depth, " levels"));
    case simdjson::NUMBER_ERROR:
      return absl::InvalidArgumentError("a number is out of range");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("not valid JSON (", simdjson::error_message(error), ")"));
  }
  impl_->negative_zero = false;
  return ToNlohmann(root, impl_->negative_zero);
}

namespace {
JsonParser& ThreadParser() {
  thread_local JsonParser parser;
  return parser;
}
}  // namespace

bool IsJsonText(std::string_view text) {
  simdjson::padded_string padded(text.data(), text.size());
  simdjson::dom::element root;
  if (ThreadParser().impl_->parser.parse(padded).get(root) == simdjson::SUCCESS) return true;
  return json::accept(text);
}

json ParseJsonText(std::string_view text) {
  JsonParser& parser = ThreadParser();
  absl::StatusOr<json> parsed = parser.Parse(text);
  if (parsed.ok() && !parser.impl_->negative_zero) return *std::move(parsed);
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

bool IsUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    if (*p < 0x80) {
      ++p;
      continue;
    }
    const size_t n = Utf8SequenceLength(p, end);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

void AppendJsonString(std::string_view text, std::string& out) {
  if (!AppendJsonStringIfUtf8(text, out)) out += NlohmannText(json(std::string(text)));
}

bool AppendJsonStringIfUtf8(std::string_view text, std::string& out) {
  const size_t start = out.size();
  out.reserve(start + text.size() + 2);
  out += '"';
  if (!AppendEscaped(text, out)) {
    out.resize(start);
    return false;
  }
  out += '"';
  return true;
}

void AppendJsonText(const json& value, std::string& out) {
  switch (value.type()) {
    case json::value_t::null:
      out += "null";
      return;
    case json::value_t::boolean:
      out += value.get_ref<const json::boolean_t&>() ? "true" : "false";
      return;
    case json::value_t::number_integer:
      AppendInteger(value.get_ref<const json::number_integer_t&>(), out);
      return;
    case json::value_t::number_unsigned:
      AppendInteger(value.get_ref<const json::number_unsigned_t&>(), out);
      return;
    case json::value_t::string:
      AppendJsonString(value.get_ref<const json::string_t&>(), out);
      return;
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const json& element : value) {
        if (!first) out += ',';
        first = false;
        AppendJsonText(element, out);
      }
      out += ']';
      return;
    }
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, element] : value.items()) {
        if (!first) out += ',';
        first = false;
        AppendJsonString(key, out);
        out += ':';
        AppendJsonText(element, out);
      }
      out += '}';
      return;
    }
    default:  // Floating point (shortest round-trip form), binary, discarded.
      out += NlohmannText(value);
      return;
  }
}

std::string JsonText(const json& value) {
  std::string out;
  AppendJsonText(value, out);
  return out;
}

}  // namespace strata
