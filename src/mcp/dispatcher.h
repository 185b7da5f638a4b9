#pragma once
// JSON-RPC 2.0 and the MCP lifecycle over one message per line.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tools/registry.h"

namespace strata::mcp {

// Protocol revisions strata speaks, oldest first; the last is offered by default.
inline constexpr const char* kProtocolVersions[] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                                    "2025-11-25"};

struct DispatcherOptions {
  int max_depth = 64;       // Deepest JSON nesting accepted in a message.
  size_t max_batch = 1000;  // Most messages in one JSON-RPC batch.
};

// Turns request lines into response lines. Requests are handled in order, each to completion.
// Thread safety: none; one thread feeds it lines.
class Dispatcher {
 public:
  Dispatcher(tools::ToolRegistry* registry, DispatcherOptions options);
  ~Dispatcher();

  // Handles one line (without its newline). Returns the response line, or nullopt when there
  // is nothing to answer (a notification, a blank line, a client's response).
  std::optional<std::string> HandleLine(std::string_view line);

  // A JSON-RPC error response line with a null id, for faults found before parsing
  // (e.g. an oversized line).
  static std::string ErrorLine(int code, const std::string& message);

  // Where notifications sent in the middle of a request go (progress), one line each
  // without its newline. Unset: they are dropped.
  void set_notify(std::function<void(const std::string&)> notify) { notify_ = std::move(notify); }

  // The negotiated protocol version, empty before initialize.
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  class Parser;

  // Handles one parsed message; null when it gets no response.
  nlohmann::json HandleMessage(const nlohmann::json& message);
  nlohmann::json HandleRequest(const std::string& method, const nlohmann::json& params,
                               const nlohmann::json& id);
  nlohmann::json Initialize(const nlohmann::json& params);
  nlohmann::json CallTool(const nlohmann::json& params, const nlohmann::json& id);

  tools::ToolRegistry* registry_;  // Not owned; outlives this.
  DispatcherOptions options_;
  std::unique_ptr<Parser> parser_;
  std::string protocol_version_;
  nlohmann::json tools_list_;  // Built once: the tool list does not change.
  std::function<void(const std::string&)> notify_;
};

// JSON-RPC 2.0 error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

}  // namespace strata::mcp
