#pragma once
// JSON-RPC 2.0 and the MCP lifecycle over one message per line.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "tools/registry.h"

namespace strata::mcp {

// Protocol revisions with a session opened by `initialize`, oldest first; the last is offered
// when the client asks for one strata does not speak.
inline constexpr const char* kProtocolVersions[] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                                    "2025-11-25"};
// Stateless revisions: no initialize; each request names its revision and the client's
// capabilities in params._meta (docs/protocol.md).
inline constexpr const char* kStatelessVersions[] = {"2026-07-28"};

// Whether `version` is one of kProtocolVersions (a session revision) or of kStatelessVersions.
bool IsSessionVersion(std::string_view version);
bool IsStatelessVersion(std::string_view version);

struct DispatcherOptions {
  int max_depth = 64;       // Deepest JSON nesting accepted in a message.
  size_t max_batch = 1000;  // Most messages in one JSON-RPC batch.
};

// Turns request lines into response lines. Requests are handled in order, each to completion
// unless the client cancels it (notifications/cancelled), in which case it gets no response.
// Thread safety: one thread calls HandleLine; Preview may be called from another.
class Dispatcher {
 public:
  Dispatcher(tools::ToolRegistry* registry, DispatcherOptions options);
  ~Dispatcher();

  // Handles one line (without its newline). Returns the response line, or nullopt when there
  // is nothing to answer (a notification, a blank line, a client's response).
  std::optional<std::string> HandleLine(std::string_view line);
  // The same for a line the transport has parsed already (a message or a batch).
  std::optional<std::string> HandleParsed(const nlohmann::json& message);

  // Shown each line as soon as the transport has read it, before the lines ahead of it are
  // handled, so that a notifications/cancelled takes effect at once: the request in flight
  // stops at its next check and a queued one is skipped. Thread-safe.
  void Preview(std::string_view line);
  // The same for a parsed line.
  void PreviewParsed(const nlohmann::json& message);

  // A JSON-RPC error response line with a null id, for faults found before parsing
  // (e.g. an oversized line).
  static std::string ErrorLine(int code, const std::string& message);
  // A tools/call response line with id `id` whose result is the tool error `text`.
  static std::string ToolErrorLine(const nlohmann::json& id, std::string_view text);

  // Where notifications sent in the middle of a request go (progress), one line each
  // without its newline. Unset: they are dropped.
  void set_notify(std::function<void(const std::string&)> notify) { notify_ = std::move(notify); }

  // The workspaces the next requests' tool calls may use (null: every one; not owned, outlives
  // their HandleLine). The HTTP transport sets each request's token's.
  void set_access(const tools::WorkspaceAccess* access) { access_ = access; }

  // The negotiated protocol version, empty before initialize.
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  class Parser;

  // Handles one parsed message; null when it gets no response.
  nlohmann::json HandleMessage(const nlohmann::json& message) ABSL_LOCKS_EXCLUDED(cancel_mu_);
  // A request with an id: checks its era, runs it, shapes its result for that era.
  nlohmann::json HandleIdentifiedRequest(const std::string& method, const nlohmann::json& params,
                                         const nlohmann::json& id);
  nlohmann::json HandleRequest(const std::string& method, const nlohmann::json& params,
                               const nlohmann::json& id, bool stateless);
  nlohmann::json Initialize(const nlohmann::json& params);
  nlohmann::json Discover() const;
  nlohmann::json CallTool(const nlohmann::json& params, const nlohmann::json& id);

  // Cancellation, shared with the thread that calls Preview.
  void Cancel(const nlohmann::json& request_id) ABSL_LOCKS_EXCLUDED(cancel_mu_);
  // False when the request was cancelled queued.
  bool BeginRequest(const nlohmann::json& id) ABSL_LOCKS_EXCLUDED(cancel_mu_);
  // True when it was cancelled in flight.
  bool EndRequest() ABSL_LOCKS_EXCLUDED(cancel_mu_);

  tools::ToolRegistry* registry_;  // Not owned; outlives this.
  DispatcherOptions options_;
  std::unique_ptr<Parser> parser_;
  std::unique_ptr<Parser> preview_parser_;  // Preview's own: it runs on another thread.
  std::string protocol_version_;
  nlohmann::json tools_list_;  // Built once: the tool list does not change.
  std::function<void(const std::string&)> notify_;
  const tools::WorkspaceAccess* access_ = nullptr;

  absl::Mutex cancel_mu_;
  // The id of the request being handled; null between requests.
  nlohmann::json in_flight_ ABSL_GUARDED_BY(cancel_mu_);
  // Ids cancelled by lines Preview saw and HandleLine has not reached yet: a request among
  // them still queued is skipped. Bounded by the transport's queue.
  std::vector<nlohmann::json> cancelled_ids_ ABSL_GUARDED_BY(cancel_mu_);
  std::atomic<bool> in_flight_cancelled_{false};
};

// JSON-RPC 2.0 error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
// MCP 2026-07-28: the request's _meta names a protocol revision strata does not speak.
inline constexpr int kUnsupportedProtocolVersion = -32022;

}  // namespace strata::mcp
