#include "http/server.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "http/address.h"
#include "http/jwt.h"
#include "http/token_file.h"
#include "mcp/dispatcher.h"
#include "strata/strata.h"
#include "util/json_text.h"
#include "util/log.h"

namespace strata::http {
namespace {

using nlohmann::json;

constexpr char kEndpoint[] = "/mcp";
constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kVersionHeader[] = "MCP-Protocol-Version";
// The first revision that defines the MCP-Protocol-Version header.
constexpr char kFirstVersionWithHeader[] = "2025-06-18";
constexpr char kMetaProtocolVersion[] = "io.modelcontextprotocol/protocolVersion";
// Sessions kept at once; a new one past this ends the least recently used.
constexpr size_t kMaxSessions = 1024;
// A session unused this long is gone: its requests get 404 and the client starts again.
constexpr absl::Duration kSessionIdle = absl::Hours(1);
// Connections served at once (cpp-httplib's thread pool). Tool calls still run one at a time.
constexpr size_t kWorkers = 8;
// Requests a connection is served before the server closes it, so that more busy connections
// than kWorkers take turns (a worker serves one connection at a time). cpp-httplib's default,
// 5, had a client of back-to-back calls connect again every fifth call: at 30,000 and 100,000
// memories on PostgreSQL (4 clients, 2 nodes) 100 took ~0.1 ms of CPU a write off the nodes and
// ~0.07 off the clients, and wrote 7-36% faster (PERF.md, "Session 31").
constexpr size_t kRequestsPerConnection = 100;
// Single writes one transaction holds at most (group commit) before it commits.
constexpr int kMaxGroupWrites = 16;
// The JSON-RPC code of a request naming an unknown session (the SDKs' choice).
constexpr int kSessionNotFound = -32001;

// Signals reach the watcher thread as one byte each through a pipe: 'H' SIGHUP, 'T' SIGTERM
// or SIGINT; 'Q' is written by ServeHttp when the server has stopped.
std::atomic<int> g_signal_fd{-1};

void OnSignal(int signo) {
  const int fd = g_signal_fd.load();
  if (fd < 0) return;
  const char byte = signo == SIGHUP ? 'H' : 'T';
  [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
}

// 128 bits from the kernel's CSPRNG, in hex (visible ASCII, as the specification asks).
absl::StatusOr<std::string> NewSessionId() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError("getrandom failed");
    }
    got += static_cast<size_t>(n);
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

// The Store's turns: tool calls reach it one at a time (strata.h), holding `mu`. A single
// write may leave its transaction open for the calls waiting their turn to join; the last of
// them commits it (group commit: docs/decisions.md, "Group commit").
struct StoreTurns {
  explicit StoreTurns(Store* s) : store(s) {}
  Store* const store;
  absl::Mutex mu;
  std::atomic<int> waiting{0};  // Calls waiting for `mu`.
};

// A dispatcher: a session's, or a stateless request's own. Every dispatcher runs in the
// Store's turns.
struct Lane {
  Lane(StoreTurns* store_turns, tools::ToolRegistry* registry, std::string lane_id,
       std::string digest)
      : turns(store_turns),
        dispatcher(std::make_unique<mcp::Dispatcher>(registry, mcp::DispatcherOptions{})),
        id(std::move(lane_id)),
        token_digest(std::move(digest)) {}

  StoreTurns* const turns;
  const std::unique_ptr<mcp::Dispatcher> dispatcher ABSL_PT_GUARDED_BY(turns->mu);
  const std::string id;            // The Mcp-Session-Id; empty for a stateless request.
  const std::string token_digest;  // The token that opened it; empty without authorization.
  std::string version;             // Negotiated by initialize; fixed once published.
  std::atomic<int64_t> last_used_ns{0};
  // Preview may run beside HandleLine but not beside itself (one reader thread on stdio);
  // here several workers may hold notifications for one session.
  absl::Mutex preview_mu;
};

// Where a request's answer went and what initialize negotiated.
struct Outcome {
  std::optional<std::string> response;  // Nothing for notifications and cancelled requests.
  std::string protocol_version;
};

// Runs one request body on `lane`: its parse when it parsed, else the body (whose fault the
// dispatcher words). `notify` gets the notifications sent while it runs (progress); may be
// null. Returns once what it wrote is committed: a write in a group that failed is answered
// with the failure.
Outcome Run(Lane& lane, const std::optional<json>& message, std::string_view body,
            const tools::WorkspaceAccess* access,
            std::function<void(const std::string&)> notify) {
  StoreTurns& turns = *lane.turns;
  // A single message's write may wait in a group; a batch's commit each alone, so that a
  // failed group need not be told apart among its answers.
  std::shared_ptr<CommitTicket> ticket;
  if (message && message->is_object()) ticket = std::make_shared<CommitTicket>();
  Outcome out;
  turns.waiting.fetch_add(1);
  {
    absl::MutexLock lock(&lane.turns->mu);
    turns.waiting.fetch_sub(1);
    turns.store->set_commit_ticket(ticket);
    mcp::Dispatcher& d = *lane.dispatcher;
    d.set_access(access);
    d.set_notify(std::move(notify));
    out = {.response = message ? d.HandleParsed(*message) : d.HandleLine(body),
           .protocol_version = d.protocol_version()};
    d.set_notify(nullptr);
    d.set_access(nullptr);
    turns.store->set_commit_ticket(nullptr);
    // The last call of those waiting commits the group, or the one that fills it.
    if (const int writes = turns.store->uncommitted_writes();
        writes > 0 && (turns.waiting.load() == 0 || writes >= kMaxGroupWrites)) {
      turns.store->CommitGroup().IgnoreError();  // The tickets tell the writers.
    }
  }
  if (ticket && ticket->joined()) {
    if (absl::Status s = ticket->Wait(); !s.ok() && out.response) {
      out.response = mcp::Dispatcher::ToolErrorLine(message->value("id", json()),
                                                    std::string(s.message()));
    }
  }
  return out;
}

// Dispatcher::Preview may run beside HandleLine: it runs outside the store mutex, so that a
// cancellation reaches the request it names while that request holds the mutex.
void Preview(Lane& lane, const json& message) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  absl::MutexLock lock(&lane.preview_mu);
  lane.dispatcher->PreviewParsed(message);
}

// What a POST body holds, for routing it.
struct Shape {
  std::optional<json> message;  // The body parsed; empty when it is not JSON.
  bool has_request = false;  // A message with a method and an id.
  bool initialize = false;   // An initialize request among them.
  bool stateless = true;     // Every message names a stateless revision in params._meta.
  bool progress = false;     // A request asks for progress (params._meta.progressToken).
};

bool NamesStatelessVersion(const json& meta) {
  auto it = meta.find(kMetaProtocolVersion);
  return it != meta.end() && it->is_string() &&
         mcp::IsStatelessVersion(it->get_ref<const std::string&>());
}

Shape Classify(std::string_view body) {
  Shape shape;
  JsonParser parser(mcp::DispatcherOptions{}.max_depth);
  absl::StatusOr<json> parsed = parser.Parse(body);
  if (!parsed.ok()) {
    shape.stateless = false;
    return shape;
  }
  auto look = [&shape](const json& m) {
    if (!m.is_object()) {
      shape.stateless = false;
      return;
    }
    const bool request = m.contains("method") && m.contains("id");
    shape.has_request |= request;
    if (request && m["method"] == "initialize") shape.initialize = true;
    const json* meta = nullptr;
    if (auto params = m.find("params"); params != m.end() && params->is_object()) {
      if (auto it = params->find("_meta"); it != params->end() && it->is_object()) meta = &*it;
    }
    if (meta == nullptr || !NamesStatelessVersion(*meta)) shape.stateless = false;
    if (request && meta != nullptr && meta->contains("progressToken")) shape.progress = true;
  };
  if (parsed->is_array()) {
    for (const json& m : *parsed) look(m);
    if (parsed->empty()) shape.stateless = false;
  } else {
    look(*parsed);
  }
  shape.message = *std::move(parsed);
  return shape;
}

// An HTTP-level refusal with a JSON-RPC error body (no id: the message was not read as one).
void Refuse(httplib::Response& res, int status, int code, const std::string& message) {
  res.status = status;
  res.set_content(mcp::Dispatcher::ErrorLine(code, message), "application/json");
}

int64_t NowNs() { return absl::GetCurrentTimeNanos(); }

// The HTTP side of the server: admission (Origin, token), sessions, routing to dispatchers.
// Thread safety: thread-safe; cpp-httplib's workers call Post and Delete concurrently.
class Service {
 public:
  Service(tools::ToolRegistry* registry, const HttpOptions& options,
          std::shared_ptr<const TokenTable> tokens, std::shared_ptr<const JwtVerifier> jwt)
      : registry_(registry),
        options_(options),
        turns_(&registry->store()),
        tokens_(std::move(tokens)),
        jwt_(std::move(jwt)) {}

  void Post(const httplib::Request& req, httplib::Response& res);
  void Delete(const httplib::Request& req, httplib::Response& res);
  // RFC 9728's protected resource metadata: where a client gets a JWT for this server.
  void ResourceMetadata(httplib::Response& res) const;
  // Re-reads the token file and the JWKS file (SIGHUP); a bad file keeps what is in use.
  void ReloadTokens();

 private:
  // Origin and token checks. False when `res` holds the refusal; else `grant` is the token's
  // (null without authorization).
  bool Admit(const httplib::Request& req, httplib::Response& res,
             std::shared_ptr<const TokenGrant>& grant);
  // The session named `id` opened with `grant`'s token; null when unknown, expired or another
  // token's (a 404 in each case: the answer does not tell which).
  std::shared_ptr<Lane> FindSession(const std::string& id, const TokenGrant* grant);
  void Publish(std::shared_ptr<Lane> lane);

  tools::ToolRegistry* const registry_;  // Not owned; outlives this.
  const HttpOptions options_;
  // Held while any dispatcher runs: the Store is used by one thread at a time (strata.h).
  StoreTurns turns_;
  absl::Mutex tokens_mu_;
  std::shared_ptr<const TokenTable> tokens_ ABSL_GUARDED_BY(tokens_mu_);  // Null: none.
  std::shared_ptr<const JwtVerifier> jwt_ ABSL_GUARDED_BY(tokens_mu_);    // Null: none.
  absl::Mutex sessions_mu_;
  std::map<std::string, std::shared_ptr<Lane>> sessions_ ABSL_GUARDED_BY(sessions_mu_);
};

bool Service::Admit(const httplib::Request& req, httplib::Response& res,
                    std::shared_ptr<const TokenGrant>& grant) {
  if (req.has_header("Origin") &&
      !OriginAllowed(req.get_header_value("Origin"), options_.allowed_origins)) {
    Refuse(res, 403, mcp::kInvalidRequest,
           "Forbidden: this Origin may not use the server (loopback origins and --allow-origin "
           "ones may)");
    return false;
  }
  std::shared_ptr<const TokenTable> tokens;
  std::shared_ptr<const JwtVerifier> jwt;
  {
    absl::MutexLock lock(&tokens_mu_);
    tokens = tokens_;
    jwt = jwt_;
  }
  if (tokens == nullptr && jwt == nullptr) return true;
  // RFC 6750's challenge; with JWTs it also names the metadata that says where to get one.
  auto challenge = [&](const std::string& error) {
    std::string value = "Bearer realm=\"strata\"";
    if (jwt != nullptr) {
      absl::StrAppend(&value, ", resource_metadata=\"",
                      ResourceMetadataUrl(jwt->settings().audience), "\"");
    }
    if (!error.empty()) absl::StrAppend(&value, ", error=\"", error, "\"");
    if (error == "insufficient_scope") absl::StrAppend(&value, ", scope=\"workspace:*\"");
    res.set_header("WWW-Authenticate", value);
  };
  const std::string authorization = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size() ||
      !absl::EqualsIgnoreCase(absl::string_view(authorization).substr(0, kBearer.size()),
                              absl::string_view(kBearer.data(), kBearer.size()))) {
    challenge("");
    Refuse(res, 401, mcp::kInvalidRequest, "Unauthorized: send Authorization: Bearer TOKEN");
    return false;
  }
  const absl::string_view stripped =
      absl::StripAsciiWhitespace(absl::string_view(authorization).substr(kBearer.size()));
  const std::string_view presented(stripped.data(), stripped.size());
  std::optional<TokenGrant> found;
  if (tokens != nullptr) found = tokens->Find(presented);
  if (!found && jwt != nullptr) {
    absl::StatusOr<TokenGrant> verified = jwt->Verify(presented, absl::ToUnixSeconds(absl::Now()));
    if (absl::IsPermissionDenied(verified.status())) {
      challenge("insufficient_scope");
      Refuse(res, 403, mcp::kInvalidRequest,
             absl::StrCat("Forbidden: ", verified.status().message()));
      return false;
    }
    if (verified.ok()) {
      found = *std::move(verified);
    } else if (tokens == nullptr) {
      challenge("invalid_token");
      Refuse(res, 401, mcp::kInvalidRequest,
             absl::StrCat("Unauthorized: ", verified.status().message()));
      return false;
    }
  }
  if (!found) {
    challenge("invalid_token");
    Refuse(res, 401, mcp::kInvalidRequest, "Unauthorized: the bearer token is not valid");
    return false;
  }
  grant = std::make_shared<const TokenGrant>(*std::move(found));
  return true;
}

void Service::ResourceMetadata(httplib::Response& res) const {
  const JwtSettings& jwt = options_.jwt;
  const json metadata = {{"resource", jwt.audience},
                         {"authorization_servers", json::array({jwt.issuer})},
                         {"bearer_methods_supported", json::array({"header"})},
                         {"scopes_supported", json::array({"workspace:*"})},
                         {"resource_name", "strata memory store"}};
  res.set_content(metadata.dump(), "application/json");
}

std::shared_ptr<Lane> Service::FindSession(const std::string& id, const TokenGrant* grant) {
  absl::MutexLock lock(&sessions_mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  const std::shared_ptr<Lane>& lane = it->second;
  if (lane->last_used_ns.load() + absl::ToInt64Nanoseconds(kSessionIdle) < NowNs()) {
    sessions_.erase(it);
    return nullptr;
  }
  if (lane->token_digest != (grant != nullptr ? grant->digest : std::string())) return nullptr;
  lane->last_used_ns.store(NowNs());
  return lane;
}

void Service::Publish(std::shared_ptr<Lane> lane) {
  lane->last_used_ns.store(NowNs());
  absl::MutexLock lock(&sessions_mu_);
  if (sessions_.size() >= kMaxSessions) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second->last_used_ns.load() < oldest->second->last_used_ns.load()) oldest = it;
    }
    sessions_.erase(oldest);
  }
  sessions_.emplace(lane->id, std::move(lane));
}

void Service::Post(const httplib::Request& req, httplib::Response& res) {
  std::shared_ptr<const TokenGrant> grant;
  if (!Admit(req, res, grant)) return;
  const std::string content_type = req.get_header_value("Content-Type");
  if (!content_type.empty() && !absl::StartsWithIgnoreCase(content_type, "application/json")) {
    Refuse(res, 415, mcp::kInvalidRequest, "Unsupported Media Type: POST application/json");
    return;
  }
  if (const std::string version = req.get_header_value(kVersionHeader);
      !version.empty() && !mcp::IsSessionVersion(version) &&
      !mcp::IsStatelessVersion(version)) {
    Refuse(res, 400, mcp::kInvalidRequest,
           absl::StrCat("Bad Request: unsupported MCP-Protocol-Version \"", version.substr(0, 32),
                        "\""));
    return;
  }
  Shape shape = Classify(req.body);
  const std::string session_id = req.get_header_value(kSessionHeader);
  std::shared_ptr<Lane> lane;
  bool opens_session = false;
  if (!session_id.empty()) {
    if (shape.initialize) {
      Refuse(res, 400, mcp::kInvalidRequest,
             "Bad Request: initialize opens a new session; send it without Mcp-Session-Id");
      return;
    }
    lane = FindSession(session_id, grant.get());
    if (lane == nullptr) {
      Refuse(res, 404, kSessionNotFound,
             "Session not found: it ended or expired; initialize a new one");
      return;
    }
    const std::string version = req.get_header_value(kVersionHeader);
    if (!version.empty() && lane->version >= kFirstVersionWithHeader && version != lane->version) {
      Refuse(res, 400, mcp::kInvalidRequest,
             absl::StrCat("Bad Request: MCP-Protocol-Version \"", version.substr(0, 32),
                          "\" is not this session's \"", lane->version, "\""));
      return;
    }
  } else if (shape.initialize) {
    absl::StatusOr<std::string> id = NewSessionId();
    if (!id.ok()) {
      Refuse(res, 500, mcp::kInternalError, std::string(id.status().message()));
      return;
    }
    lane = std::make_shared<Lane>(&turns_, registry_, *std::move(id),
                                  grant != nullptr ? grant->digest : std::string());
    opens_session = true;
  } else if (shape.stateless || !shape.message) {
    // A stateless request, or a fault the dispatcher words: no session.
    lane = std::make_shared<Lane>(&turns_, registry_, std::string(), std::string());
  } else {
    Refuse(res, 400, mcp::kInvalidRequest,
           "Bad Request: Mcp-Session-Id header is required (initialize first, or name a "
           "stateless revision in params._meta)");
    return;
  }
  const tools::WorkspaceAccess* access = grant != nullptr ? &grant->access : nullptr;

  if (shape.message && !shape.has_request) {
    // Notifications and responses: a cancellation takes effect now; 202 with no body.
    Preview(*lane, *shape.message);
    Run(*lane, shape.message, req.body, access, nullptr);
    res.status = 202;
    return;
  }
  const bool wants_stream = absl::StrContains(req.get_header_value("Accept"), "text/event-stream");
  if (shape.progress && wants_stream && !opens_session) {
    // Progress notifications, then the response, as server-sent events. The provider runs on
    // this worker after the handler returns: it keeps what it uses alive.
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [lane, grant, message = std::make_shared<const std::optional<json>>(
                          std::move(shape.message))](size_t, httplib::DataSink& sink) {
          bool open = true;
          auto event = [&sink, &open](const std::string& data) {
            const std::string text = absl::StrCat("event: message\ndata: ", data, "\n\n");
            if (open) open = sink.write(text.data(), text.size());
          };
          Outcome out =
              Run(*lane, *message, {}, grant != nullptr ? &grant->access : nullptr, event);
          if (out.response) event(*out.response);
          sink.done();
          return open;
        });
    return;
  }
  Outcome out = Run(*lane, shape.message, req.body, access, nullptr);
  if (opens_session && !out.protocol_version.empty()) {
    lane->version = out.protocol_version;
    res.set_header(kSessionHeader, lane->id);
    Publish(lane);
  }
  if (!out.response) {
    res.status = 202;  // The client cancelled it: it wants no answer.
    return;
  }
  res.status = shape.message ? 200 : 400;
  res.set_content(*out.response, "application/json");
}

void Service::Delete(const httplib::Request& req, httplib::Response& res) {
  std::shared_ptr<const TokenGrant> grant;
  if (!Admit(req, res, grant)) return;
  const std::string session_id = req.get_header_value(kSessionHeader);
  if (session_id.empty()) {
    Refuse(res, 400, mcp::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required");
    return;
  }
  if (FindSession(session_id, grant.get()) == nullptr) {
    Refuse(res, 404, kSessionNotFound, "Session not found");
    return;
  }
  absl::MutexLock lock(&sessions_mu_);
  sessions_.erase(session_id);
  res.status = 204;
}

void Service::ReloadTokens() {
  if (!options_.jwt.jwks_file.empty()) {
    absl::StatusOr<JwtVerifier> verifier = JwtVerifier::Load(options_.jwt);
    if (!verifier.ok()) {
      Log(LogLevel::kWarning,
          absl::StrCat("SIGHUP: keeping the JWKS keys in use: ", verifier.status().message()));
    } else {
      const size_t count = verifier->size();
      {
        absl::MutexLock lock(&tokens_mu_);
        jwt_ = std::make_shared<const JwtVerifier>(*std::move(verifier));
      }
      Log(LogLevel::kInfo, absl::StrCat("SIGHUP: re-read ", options_.jwt.jwks_file, ": ", count,
                                        count == 1 ? " key" : " keys"));
    }
  }
  if (options_.token_file.empty()) {
    if (options_.jwt.jwks_file.empty()) {
      Log(LogLevel::kInfo, "SIGHUP: no --auth-token-file or --auth-jwks to re-read");
    }
    return;
  }
  absl::StatusOr<TokenTable> table = TokenTable::Load(options_.token_file);
  if (!table.ok()) {
    Log(LogLevel::kWarning,
        absl::StrCat("SIGHUP: keeping the tokens in use: ", table.status().message()));
    return;
  }
  const size_t count = table->size();
  {
    absl::MutexLock lock(&tokens_mu_);
    tokens_ = std::make_shared<const TokenTable>(*std::move(table));
  }
  Log(LogLevel::kInfo, absl::StrCat("SIGHUP: re-read ", options_.token_file, ": ", count,
                                    count == 1 ? " token" : " tokens"));
}

// HOST as written in a URL: an IPv6 literal in brackets.
std::string UrlHost(const std::string& host) {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]") : host;
}

}  // namespace

int ServeHttp(tools::ToolRegistry& registry, const HttpOptions& options) {
  absl::StatusOr<ListenAddress> address = ParseListenAddress(options.address);
  if (!address.ok()) {
    std::cerr << "strata: " << address.status().message() << "\n";
    return 2;
  }
  std::shared_ptr<const TokenTable> tokens;
  if (!options.token_file.empty()) {
    absl::StatusOr<TokenTable> table = TokenTable::Load(options.token_file);
    if (!table.ok()) {
      std::cerr << "strata: --auth-token-file " << table.status().message() << "\n";
      return 2;
    }
    tokens = std::make_shared<const TokenTable>(*std::move(table));
  }
  std::shared_ptr<const JwtVerifier> jwt;
  if (!options.jwt.jwks_file.empty()) {
    absl::StatusOr<JwtVerifier> verifier = JwtVerifier::Load(options.jwt);
    if (!verifier.ok()) {
      std::cerr << "strata: --auth-jwks " << verifier.status().message() << "\n";
      return 2;
    }
    jwt = std::make_shared<const JwtVerifier>(*std::move(verifier));
  }
  if (tokens == nullptr && jwt == nullptr && !IsLoopbackHost(address->host)) {
    std::cerr << "strata: --http " << options.address
              << " is not a loopback address: serving other machines needs --auth-token-file "
                 "or --auth-jwks (README \"MCP over HTTP\")\n";
    return 2;
  }
  std::string authorization = "no authorization";
  if (tokens != nullptr || jwt != nullptr) {
    std::vector<std::string> kinds;
    if (tokens != nullptr) kinds.push_back(absl::StrCat(tokens->size(), " bearer token(s)"));
    if (jwt != nullptr) {
      kinds.push_back(absl::StrCat("JWTs from ", options.jwt.issuer, " (", jwt->size(),
                                   " key(s))"));
    }
    authorization = absl::StrJoin(kinds, " and ");
  }
  Service service(&registry, options, std::move(tokens), std::move(jwt));

  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  server.set_payload_max_length(options.max_body_bytes);
  server.set_keep_alive_max_count(kRequestsPerConnection);
  // A response goes out in two writes (headers, then body): without TCP_NODELAY the second
  // waits for the client's delayed ACK, ~40 ms a request on Linux.
  server.set_tcp_nodelay(true);
  server.Post(kEndpoint, [&service](const httplib::Request& req, httplib::Response& res) {
    service.Post(req, res);
  });
  server.Delete(kEndpoint, [&service](const httplib::Request& req, httplib::Response& res) {
    service.Delete(req, res);
  });
  // No server-initiated stream: strata sends nothing unasked (the specification allows 405).
  if (!options.jwt.jwks_file.empty()) {
    // The path-inserted form of RFC 9728 first, and the root form clients fall back to.
    for (const std::string& path : {ResourceMetadataPath(options.jwt.audience),
                                    std::string(ResourceMetadataPath(""))}) {
      server.Get(path, [&service](const httplib::Request&, httplib::Response& res) {
        service.ResourceMetadata(res);
      });
    }
  }
  server.Get(kEndpoint, [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Allow", "POST, DELETE");
    res.status = 405;
  });

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::cerr << "strata: cannot make the signal pipe\n";
    return 1;
  }
  g_signal_fd.store(fds[1]);
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signo : {SIGTERM, SIGINT, SIGHUP}) sigaction(signo, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  int port = address->port;
  if (port == 0) {
    port = server.bind_to_any_port(address->host);
  } else if (!server.bind_to_port(address->host, port)) {
    port = -1;
  }
  if (port < 0) {
    std::cerr << "strata: cannot listen on " << options.address << "\n";
    return 1;
  }
  std::cerr << "strata " << kVersion << ": serving MCP over HTTP at http://"
            << UrlHost(address->host) << ":" << port << kEndpoint << ", database "
            << RedactedStorePath(options.db_path) << ", "
            << authorization
            << std::endl;

  std::atomic<bool> stopped{false};
  std::atomic<bool> stop_requested{false};
  std::thread watcher([&] {
    for (;;) {
      char byte = 0;
      const ssize_t n = ::read(fds[0], &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || byte == 'Q') return;
      if (byte == 'H') {
        service.ReloadTokens();
        continue;
      }
      stop_requested.store(true);
      // stop() before the server runs is lost: repeat until listening has ended.
      while (!stopped.load()) {
        server.stop();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      return;
    }
  });
  const bool clean = server.listen_after_bind();  // Returns once in-flight requests are done.
  stopped.store(true);
  const char quit = 'Q';
  [[maybe_unused]] const ssize_t n = ::write(fds[1], &quit, 1);
  watcher.join();
  g_signal_fd.store(-1);
  ::close(fds[0]);
  ::close(fds[1]);
  std::cerr << "strata: HTTP server stopped\n";
  return clean || stop_requested.load() ? 0 : 1;
}

}  // namespace strata::http
