#include "mcp/dispatcher.h"

#include <algorithm>
#include <exception>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "strata/strata.h"
#include "util/json_text.h"
#include "util/sv.h"

namespace strata::mcp {
namespace {

using nlohmann::json;

std::string Dump(const json& value) { return JsonText(value); }

// The line of `response`, as Dump writes it. A tool's result (the common response) holds
// its structuredContent twice, once serialized as content[0].text: that text is reused for
// structuredContent rather than serialized again (keys in Dump's sorted order).
std::string DumpResponse(const json& response) {
  const auto result = response.find("result");
  if (response.size() != 3 || !response.contains("id") || !response.contains("jsonrpc") ||
      result == response.end() || !result->is_object() || result->size() != 3 ||
      !result->contains("structuredContent") || result->value("isError", true)) {
    return Dump(response);
  }
  const json& content = (*result)["content"];
  if (!content.is_array() || content.size() != 1 || content[0].size() != 2 ||
      !content[0].contains("text") || !content[0]["text"].is_string()) {
    return Dump(response);
  }
  const std::string& text = content[0]["text"].get_ref<const std::string&>();
  std::string line = absl::StrCat(R"({"id":)", Dump(response["id"]),
                                  R"(,"jsonrpc":"2.0","result":{"content":[{"text":)");
  line.reserve(2 * text.size() + 96);
  AppendJsonString(text, line);
  absl::StrAppend(&line, R"(,"type":"text"}],"isError":false,"structuredContent":)", text, "}}");
  return line;
}

json ErrorResponse(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json Response(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

// A tool call's failure: a result the model reads, not a protocol error.
json ToolErrorResponse(const json& id, std::string_view text) {
  return Response(id, {{"content", {{{"type", "text"}, {"text", std::string(text)}}}},
                       {"isError", true}});
}

// The _meta keys of the stateless revision.
constexpr char kMetaProtocolVersion[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kMetaClientCapabilities[] = "io.modelcontextprotocol/clientCapabilities";
constexpr char kMetaServerInfo[] = "io.modelcontextprotocol/serverInfo";
// How long a stateless client may keep the tool list: it never changes while a process runs,
// but another process may be started with other flags (--compat, --tool-prefix).
constexpr int64_t kListTtlMs = 3'600'000;
// Most cancelled ids remembered while their notification waits in the queue.
constexpr size_t kMaxCancelledIds = 4096;

json ServerInfo() {
  return {{"name", "strata"}, {"title", "strata memory store"}, {"version", kVersion}};
}

// Every revision strata speaks, newest first.
json SupportedVersions() {
  json out = json::array();
  for (const char* v : kStatelessVersions) out.push_back(v);
  for (auto v = std::rbegin(kProtocolVersions); v != std::rend(kProtocolVersions); ++v) {
    out.push_back(*v);
  }
  return out;
}

const json* FindMeta(const json& params) {
  if (!params.is_object()) return nullptr;
  auto meta = params.find("_meta");
  return meta != params.end() && meta->is_object() ? &*meta : nullptr;
}

const char* kInstructions =
    "strata is a long-term memory. Use remember to store facts, decisions, preferences and "
    "conventions under a category and key; recall to find them again by topic; history, "
    "as_of and valid_at to see how a memory changed over time; forget when something stops "
    "being true.";

}  // namespace

bool IsStatelessVersion(std::string_view version) {
  for (const char* v : kStatelessVersions) {
    if (version == v) return true;
  }
  return false;
}

bool IsSessionVersion(std::string_view version) {
  for (const char* v : kProtocolVersions) {
    if (version == v) return true;
  }
  return false;
}

class Dispatcher::Parser {
 public:
  explicit Parser(int max_depth) : parser_(max_depth) {}
  // Parses one line into `out`; on failure returns the error message.
  std::optional<std::string> Parse(std::string_view line, json& out) {
    absl::StatusOr<json> parsed = parser_.Parse(line);
    if (!parsed.ok()) return absl::StrCat("Parse error: ", parsed.status().message());
    out = *std::move(parsed);
    return std::nullopt;
  }

 private:
  JsonParser parser_;
};

Dispatcher::Dispatcher(tools::ToolRegistry* registry, DispatcherOptions options)
    : registry_(registry),
      options_(options),
      parser_(std::make_unique<Parser>(options.max_depth)),
      preview_parser_(std::make_unique<Parser>(options.max_depth)),
      tools_list_(registry->List()) {}

Dispatcher::~Dispatcher() = default;

std::string Dispatcher::ErrorLine(int code, const std::string& message) {
  return Dump(ErrorResponse(nullptr, code, message));
}

std::string Dispatcher::ToolErrorLine(const json& id, std::string_view text) {
  return Dump(ToolErrorResponse(id, text));
}

std::optional<std::string> Dispatcher::HandleLine(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
  json message;
  if (auto error = parser_->Parse(line, message)) return ErrorLine(kParseError, *error);
  return HandleParsed(message);
}

std::optional<std::string> Dispatcher::HandleParsed(const json& message) {
  if (message.is_array()) {
    if (message.empty()) return ErrorLine(kInvalidRequest, "Invalid Request: empty batch");
    if (message.size() > options_.max_batch) {
      return ErrorLine(kInvalidRequest,
                       absl::StrCat("Invalid Request: a batch may hold at most ",
                                    options_.max_batch, " messages, got ", message.size()));
    }
    json responses = json::array();
    for (const json& m : message) {
      json r = HandleMessage(m);
      if (!r.is_null()) responses.push_back(std::move(r));
    }
    if (responses.empty()) return std::nullopt;
    return Dump(responses);
  }
  json response = HandleMessage(message);
  if (response.is_null()) return std::nullopt;
  return DumpResponse(response);
}

void Dispatcher::Preview(std::string_view line) {
  if (line.find("notifications/cancelled") == std::string_view::npos) return;
  json message;
  if (preview_parser_->Parse(line, message)) return;  // HandleLine will answer the fault.
  PreviewParsed(message);
}

void Dispatcher::PreviewParsed(const json& message) {
  auto look = [this](const json& m) {
    if (!m.is_object() || m.contains("id") ||
        m.value("method", json()) != "notifications/cancelled") {
      return;
    }
    const json params = m.value("params", json::object());
    if (!params.is_object()) return;
    const json id = params.value("requestId", json());
    if (id.is_string() || id.is_number_integer()) Cancel(id);
  };
  if (message.is_array()) {
    for (const json& m : message) look(m);
  } else {
    look(message);
  }
}

void Dispatcher::Cancel(const json& request_id) {
  absl::MutexLock lock(&cancel_mu_);
  if (in_flight_ == request_id) in_flight_cancelled_.store(true, std::memory_order_relaxed);
  if (cancelled_ids_.size() >= kMaxCancelledIds) cancelled_ids_.erase(cancelled_ids_.begin());
  cancelled_ids_.push_back(request_id);
}

bool Dispatcher::BeginRequest(const json& id) {
  absl::MutexLock lock(&cancel_mu_);
  if (std::find(cancelled_ids_.begin(), cancelled_ids_.end(), id) != cancelled_ids_.end()) {
    return false;
  }
  in_flight_ = id;
  in_flight_cancelled_.store(false, std::memory_order_relaxed);
  return true;
}

bool Dispatcher::EndRequest() {
  absl::MutexLock lock(&cancel_mu_);
  in_flight_ = nullptr;
  return in_flight_cancelled_.exchange(false, std::memory_order_relaxed);
}

json Dispatcher::HandleMessage(const json& message) {
  if (!message.is_object()) {
    return ErrorResponse(nullptr, kInvalidRequest, "Invalid Request: a message must be an object");
  }
  json id = nullptr;
  const bool has_id = message.contains("id");
  if (has_id) {
    const json& raw = message["id"];
    if (!raw.is_string() && !raw.is_number() && !raw.is_null()) {
      return ErrorResponse(nullptr, kInvalidRequest,
                           "Invalid Request: id must be a string, a number or null");
    }
    id = raw;
  }
  auto method = message.find("method");
  if (method == message.end()) {
    // A response to a request of ours (we send none) is not answered.
    if (message.contains("result") || message.contains("error")) return nullptr;
    return ErrorResponse(id, kInvalidRequest, "Invalid Request: method is missing");
  }
  if (message.value("jsonrpc", json()) != "2.0") {
    return has_id ? ErrorResponse(id, kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"")
                  : json(nullptr);
  }
  if (!method->is_string()) {
    return ErrorResponse(id, kInvalidRequest, "Invalid Request: method must be a string");
  }
  const std::string& name = method->get_ref<const std::string&>();
  const json params = message.value("params", json::object());
  if (!has_id) {
    // Notifications are never answered. A cancellation reaching its turn here has done its
    // work (Preview saw it first); it no longer applies to a later request reusing the id.
    if (name == "notifications/cancelled" && params.is_object()) {
      const json request_id = params.value("requestId", json());
      absl::MutexLock lock(&cancel_mu_);
      auto it = std::find(cancelled_ids_.begin(), cancelled_ids_.end(), request_id);
      if (it != cancelled_ids_.end()) cancelled_ids_.erase(it);
    }
    return nullptr;
  }
  if (!params.is_object() && !params.is_array()) {
    return ErrorResponse(id, kInvalidParams, "Invalid params: params must be an object");
  }
  // The initialize request is never cancelled (the specification forbids clients to).
  const bool cancellable = name != "initialize";
  if (cancellable && !BeginRequest(id)) return nullptr;
  json response;
  try {
    response = HandleIdentifiedRequest(name, params, id);
  } catch (const std::exception& e) {
    response = ErrorResponse(id, kInternalError, absl::StrCat("Internal error: ", e.what()));
  }
  if (cancellable && EndRequest()) return nullptr;  // The client no longer wants it.
  return response;
}

json Dispatcher::HandleIdentifiedRequest(const std::string& method, const json& params,
                                         const json& id) {
  // A request naming its revision in _meta is stateless (2026-07-28); any other belongs to
  // the session eras, answered whether or not initialize came first.
  const json* meta = FindMeta(params);
  const json* version = nullptr;
  if (meta != nullptr) {
    auto it = meta->find(kMetaProtocolVersion);
    if (it != meta->end()) version = &*it;
  }
  if (version == nullptr) {
    if (method == "server/discover") {
      return ErrorResponse(
          id, kInvalidParams,
          absl::StrCat("Invalid params: server/discover needs _meta \"", kMetaProtocolVersion,
                       "\" (and \"", kMetaClientCapabilities, "\")"));
    }
    return HandleRequest(method, params, id, /*stateless=*/false);
  }
  if (!version->is_string()) {
    return ErrorResponse(
        id, kInvalidParams,
        absl::StrCat("Invalid params: _meta \"", kMetaProtocolVersion, "\" must be a string"));
  }
  const std::string& requested = version->get_ref<const std::string&>();
  if (IsSessionVersion(requested) && method != "server/discover") {
    return HandleRequest(method, params, id, /*stateless=*/false);
  }
  if (!IsStatelessVersion(requested) && !IsSessionVersion(requested)) {
    json error = ErrorResponse(
        id, kUnsupportedProtocolVersion,
        absl::StrCat("Unsupported protocol version \"", requested.substr(0, 64), "\""));
    error["error"]["data"] = {{"supported", SupportedVersions()}, {"requested", requested}};
    return error;
  }
  auto capabilities = meta->find(kMetaClientCapabilities);
  if (capabilities == meta->end() || !capabilities->is_object()) {
    return ErrorResponse(id, kInvalidParams,
                         absl::StrCat("Invalid params: _meta \"", kMetaClientCapabilities,
                                      "\" is required and must be an object"));
  }
  json response = HandleRequest(method, params, id, /*stateless=*/true);
  if (json* result = response.contains("result") ? &response["result"] : nullptr) {
    (*result)["resultType"] = "complete";
    (*result)["_meta"][kMetaServerInfo] = ServerInfo();
  }
  return response;
}

json Dispatcher::HandleRequest(const std::string& method, const json& params, const json& id,
                               bool stateless) {
  if (method == "initialize") return Response(id, Initialize(params));
  if (method == "ping") return Response(id, json::object());
  if (method == "server/discover") return Response(id, Discover());
  if (method == "tools/list") {
    json result = {{"tools", tools_list_}};
    if (stateless) {
      result["ttlMs"] = kListTtlMs;
      result["cacheScope"] = "private";
    }
    return Response(id, std::move(result));
  }
  if (method == "tools/call") return CallTool(params, id);
  return ErrorResponse(id, kMethodNotFound, absl::StrCat("Method not found: ", method));
}

json Dispatcher::Discover() const {
  return {{"supportedVersions", SupportedVersions()},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", ServerInfo()},
          {"instructions", kInstructions},
          {"tools", tools_list_},
          {"ttlMs", kListTtlMs},
          {"cacheScope", "private"}};
}

json Dispatcher::Initialize(const json& params) {
  std::string requested;
  if (params.is_object()) {
    auto it = params.find("protocolVersion");
    if (it != params.end() && it->is_string()) requested = it->get<std::string>();
  }
  protocol_version_ = std::end(kProtocolVersions)[-1];
  for (const char* v : kProtocolVersions) {
    if (requested == v) protocol_version_ = v;
  }
  return {{"protocolVersion", protocol_version_},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", ServerInfo()},
          {"instructions", kInstructions}};
}

json Dispatcher::CallTool(const json& params, const json& id) {
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return ErrorResponse(id, kInvalidParams, "Invalid params: name must be a tool name string");
  }
  const std::string& name = params["name"].get_ref<const std::string&>();
  std::optional<tools::ToolRegistry::Resolved> tool = registry_->Find(name);
  if (!tool) {
    return ErrorResponse(id, kInvalidParams,
                         absl::StrCat("Unknown tool: \"", name.substr(0, 80),
                                      "\"; available: ", registry_->ListedNames()));
  }
  const json arguments = params.value("arguments", json::object());
  WorkControl work{
      .cancelled = [this] { return in_flight_cancelled_.load(std::memory_order_relaxed); }};
  // notifications/progress for long work, when the client asked with a progressToken.
  if (const json* meta = FindMeta(params);
      notify_ && meta && meta->contains("progressToken") &&
      ((*meta)["progressToken"].is_string() || (*meta)["progressToken"].is_number_integer())) {
    work.progress = [this, token = (*meta)["progressToken"]](int64_t done, int64_t total) {
      // A client that cancelled has forgotten the token; it would only log an unknown one.
      if (in_flight_cancelled_.load(std::memory_order_relaxed)) return;
      notify_(
          Dump(json{{"jsonrpc", "2.0"},
                    {"method", "notifications/progress"},
                    {"params", {{"progressToken", token}, {"progress", done}, {"total", total}}}}));
    };
  }
  absl::StatusOr<json> result = registry_->Call(*tool, arguments, std::move(work), access_);
  if (!result.ok()) return ToolErrorResponse(id, std::string(result.status().message()));
  json content = {{{"type", "text"}, {"text", Dump(*result)}}};
  return Response(id, {{"content", std::move(content)},
                       {"structuredContent", *std::move(result)},
                       {"isError", false}});
}

}  // namespace strata::mcp
