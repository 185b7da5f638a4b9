// libFuzzer target: an MCP session against the real tool registry over a real Store.
//
// The input is split on '\n' and every line goes to one Dispatcher, as the stdio loop would
// feed it, so sequences (initialize, then tool calls) are explored. The Store lives in a
// temporary directory made once per process and removed at exit; it keeps what earlier inputs
// wrote, as a long-running server does. A fresh Dispatcher per input starts each session
// before initialize.
//
// Besides the sanitizers, every answer is checked: it is one JSON-RPC message (or a batch of
// them) that a client can parse, and a notification line is one too.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "mcp/dispatcher.h"
#include "strata/strata.h"
#include "tools/registry.h"

namespace {

using nlohmann::json;

[[noreturn]] void Fail(const char* what, std::string_view line) {
  std::fprintf(stderr, "dispatcher_fuzzer: %s: %.*s\n", what,
               static_cast<int>(std::min<size_t>(line.size(), 2000)), line.data());
  std::abort();
}

// A response: {"jsonrpc":"2.0","id":...,"result"|"error":...}.
bool IsResponse(const json& m) {
  if (!m.is_object() || m.value("jsonrpc", json()) != "2.0" || !m.contains("id")) return false;
  const json& id = m["id"];
  if (!id.is_null() && !id.is_string() && !id.is_number()) return false;
  const bool result = m.contains("result");
  const bool error = m.contains("error");
  if (result == error) return false;
  if (error) {
    const json& e = m["error"];
    return e.is_object() && e.contains("code") && e["code"].is_number_integer() &&
           e.contains("message") && e["message"].is_string();
  }
  return true;
}

void CheckResponseLine(const std::string& line) {
  if (line.find('\n') != std::string::npos) Fail("a response holds a newline", line);
  json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) Fail("a response is not JSON", line);
  if (parsed.is_array()) {
    if (parsed.empty()) Fail("an empty batch response", line);
    for (const json& m : parsed) {
      if (!IsResponse(m)) Fail("a batch member is not a JSON-RPC response", line);
    }
  } else if (!IsResponse(parsed)) {
    Fail("not a JSON-RPC response", line);
  }
}

void CheckNotificationLine(const std::string& line) {
  if (line.find('\n') != std::string::npos) Fail("a notification holds a newline", line);
  json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object() || parsed.value("jsonrpc", json()) != "2.0" ||
      !parsed.contains("method") || parsed.contains("id")) {
    Fail("not a JSON-RPC notification", line);
  }
}

// The store and registry every input shares; made on first use, removed at exit.
class Server {
 public:
  static Server& Get() {
    static Server* server = new Server();
    return *server;
  }

  strata::tools::ToolRegistry& registry() { return *registry_; }

 private:
  Server() {
    std::string pattern = (std::filesystem::temp_directory_path() / "strata-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("dispatcher_fuzzer: mkdtemp");
      std::abort();
    }
    dir_ = pattern;
    // STRATA_FUZZ_EMBEDDER=none leaves out the embedding worker (faster, keyword recall only).
    const char* embedder = std::getenv("STRATA_FUZZ_EMBEDDER");
    absl::StatusOr<std::unique_ptr<strata::Store>> store = strata::Store::Open(
        {.path = (dir_ / "memory.db").string(), .embedder = embedder ? embedder : "builtin"});
    if (!store.ok()) {
      std::fprintf(stderr, "dispatcher_fuzzer: %s\n",
                   std::string(store.status().message()).c_str());
      std::abort();
    }
    store_ = *std::move(store);
    registry_ = std::make_unique<strata::tools::ToolRegistry>(store_.get(),
                                                              strata::tools::RegistryOptions{});
    std::atexit([] { Get().Stop(); });
  }

  // Closes the store (joining its threads) and removes the directory.
  void Stop() {
    registry_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path dir_;
  std::unique_ptr<strata::Store> store_;
  std::unique_ptr<strata::tools::ToolRegistry> registry_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::tools::ToolRegistry& registry = Server::Get().registry();
  strata::mcp::Dispatcher dispatcher(&registry, strata::mcp::DispatcherOptions{});
  dispatcher.set_notify([](const std::string& line) { CheckNotificationLine(line); });
  std::string_view input(reinterpret_cast<const char*>(data), size);
  while (!input.empty()) {
    const size_t newline = input.find('\n');
    std::string_view line = input.substr(0, newline);
    input.remove_prefix(newline == std::string_view::npos ? input.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (std::optional<std::string> response = dispatcher.HandleLine(line)) {
      CheckResponseLine(*response);
    }
  }
  return 0;
}
