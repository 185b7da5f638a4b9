// mcp::Dispatcher over a ToolRegistry over a real Store: the MCP lifecycle and version
// negotiation, tools/list and tools/call, and the JSON-RPC 2.0 rules for bad lines, ids,
// notifications, client responses and batches.

#include "mcp/dispatcher.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "strata/strata.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "tools/registry.h"

namespace strata::mcp {
namespace {

using ::nlohmann::json;
using ::strata::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

constexpr char kNewest[] = "2025-11-25";

// A request line: {"jsonrpc": "2.0", "id": id, "method": method, "params": params}.
std::string Request(const json& id, const std::string& method, const json& params = nullptr) {
  json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = params;
  return message.dump();
}

// A notification line: a request without an id.
std::string Notification(const std::string& method) {
  return json({{"jsonrpc", "2.0"}, {"method", method}}).dump();
}

// A tools/call request line.
std::string ToolCall(const json& id, const std::string& name, const json& arguments) {
  return Request(id, "tools/call", {{"name", name}, {"arguments", arguments}});
}

// A batch line: the messages as one JSON array.
std::string Batch(const std::vector<std::string>& messages) {
  std::string line(1, '[');
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) line.push_back(',');
    line.append(messages[i]);
  }
  line.push_back(']');
  return line;
}

// `depth` nested arrays around 0, e.g. [[0]] for 2.
std::string Nested(int depth) {
  std::string text(static_cast<size_t>(depth), '[');
  text.push_back('0');
  text.append(static_cast<size_t>(depth), ']');
  return text;
}

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open({.path = dir_.File("memory.db"), .background_work = background_work_});
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    registry_ = std::make_unique<tools::ToolRegistry>(store_.get(), tools::RegistryOptions{});
    dispatcher_ = std::make_unique<Dispatcher>(registry_.get(), DispatcherOptions{});
  }

  // The response to `line`, parsed; null when there is none. A response that is not JSON, or
  // that spans more than one line, fails the test.
  json Respond(std::string_view line) {
    std::optional<std::string> response = dispatcher_->HandleLine(line);
    if (!response) return nullptr;
    EXPECT_EQ(response->find('\n'), std::string::npos) << *response;
    json parsed = json::parse(*response, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(parsed.is_discarded()) << *response;
    EXPECT_FALSE(parsed.is_null());
    return parsed;
  }

  // Whether `line` gets no response at all.
  bool Unanswered(std::string_view line) { return !dispatcher_->HandleLine(line).has_value(); }

  bool background_work_ = true;
  ::strata::testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<Dispatcher> dispatcher_;
};

// Checks that `response` is a JSON-RPC error with `code` and `id`.
void ExpectError(const json& response, int code, const json& id) {
  ASSERT_TRUE(response.is_object()) << response.dump();
  EXPECT_EQ(response.value("jsonrpc", ""), "2.0") << response.dump();
  ASSERT_TRUE(response.contains("id")) << response.dump();
  EXPECT_EQ(response["id"], id) << response.dump();
  EXPECT_FALSE(response.contains("result")) << response.dump();
  ASSERT_TRUE(response.contains("error")) << response.dump();
  EXPECT_EQ(response["error"].value("code", 0), code) << response.dump();
  EXPECT_TRUE(response["error"].value("message", json()).is_string()) << response.dump();
}

// Lifecycle.

TEST_F(DispatcherTest, InitializeEchoesEachSupportedProtocolVersion) {
  for (const char* version : kProtocolVersions) {
    json r = Respond(Request(1, "initialize",
                             {{"protocolVersion", version},
                              {"capabilities", json::object()},
                              {"clientInfo", {{"name", "test"}}}}));
    EXPECT_EQ(r["result"]["protocolVersion"], version);
    EXPECT_EQ(dispatcher_->protocol_version(), version);
  }
}

TEST_F(DispatcherTest, InitializeOffersTheNewestVersionForAnUnknownOne) {
  json r = Respond(Request(1, "initialize", {{"protocolVersion", "1999-01-01"}}));
  EXPECT_EQ(r["result"]["protocolVersion"], kNewest);
  EXPECT_EQ(dispatcher_->protocol_version(), kNewest);
}

TEST_F(DispatcherTest, InitializeOffersTheNewestVersionWhenNoneIsGiven) {
  json r = Respond(Request(1, "initialize", json::object()));
  EXPECT_EQ(r["result"]["protocolVersion"], kNewest);
}

TEST_F(DispatcherTest, InitializeWithANonStringVersionIsNotAnInternalError) {
  // A client's mistake is not a server bug: the answer is the newest version or -32602.
  json r = Respond(Request(1, "initialize", {{"protocolVersion", 20250618}}));
  if (r.contains("error")) {
    EXPECT_EQ(r["error"]["code"], kInvalidParams) << r.dump();
  } else {
    EXPECT_EQ(r["result"]["protocolVersion"], kNewest) << r.dump();
  }
}

TEST_F(DispatcherTest, InitializeDescribesTheServer) {
  EXPECT_EQ(dispatcher_->protocol_version(), "");
  json r = Respond(Request("init", "initialize", {{"protocolVersion", "2025-06-18"}}));
  EXPECT_EQ(r["jsonrpc"], "2.0");
  EXPECT_EQ(r["id"], "init");
  EXPECT_FALSE(r.contains("error"));
  const json& result = r["result"];
  EXPECT_TRUE(result["capabilities"].contains("tools"));
  EXPECT_EQ(result["serverInfo"]["name"], "strata");
  EXPECT_EQ(result["serverInfo"]["version"], kVersion);
  EXPECT_TRUE(result["instructions"].is_string());
}

TEST_F(DispatcherTest, PingAnswersAnEmptyResult) {
  json r = Respond(Request(7, "ping"));
  EXPECT_EQ(r["jsonrpc"], "2.0");
  EXPECT_EQ(r["id"], 7);
  EXPECT_EQ(r["result"], json::object());
}

TEST_F(DispatcherTest, PingWorksBeforeInitialize) {
  EXPECT_EQ(Respond(Request(1, "ping"))["result"], json::object());
  EXPECT_EQ(dispatcher_->protocol_version(), "");
}

TEST_F(DispatcherTest, UnknownMethodIsMethodNotFound) {
  json r = Respond(Request(3, "resources/list"));
  ExpectError(r, kMethodNotFound, 3);
  EXPECT_THAT(r["error"]["message"].get<std::string>(), HasSubstr("resources/list"));
}

// Notifications and lines without an answer.

TEST_F(DispatcherTest, NotificationsAreNeverAnswered) {
  EXPECT_TRUE(Unanswered(Notification("notifications/initialized")));
  EXPECT_TRUE(Unanswered(Notification("notifications/cancelled")));
  EXPECT_TRUE(Unanswered(Notification("notifications/unknown")));
  EXPECT_TRUE(Unanswered(Notification("ping")));
  EXPECT_TRUE(Unanswered(Notification("no/such/method")));
}

TEST_F(DispatcherTest, BlankLinesAreIgnored) {
  EXPECT_TRUE(Unanswered(""));
  EXPECT_TRUE(Unanswered("   "));
  EXPECT_TRUE(Unanswered("\t \r"));
}

TEST_F(DispatcherTest, ClientResponsesAreNotAnswered) {
  EXPECT_TRUE(Unanswered(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
  EXPECT_TRUE(Unanswered(R"({"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"no"}})"));
}

// tools/list and tools/call.

TEST_F(DispatcherTest, ToolsListReturnsEveryTool) {
  json r = Respond(Request(2, "tools/list"));
  ASSERT_TRUE(r["result"]["tools"].is_array());
  EXPECT_THAT(r["result"]["tools"], SizeIs(12));
  EXPECT_EQ(r["result"]["tools"], registry_->List());
  std::vector<std::string> names;
  for (const json& tool : r["result"]["tools"]) {
    names.push_back(tool.value("name", "?"));
    EXPECT_TRUE(tool.contains("inputSchema")) << tool.value("name", "?");
    EXPECT_TRUE(tool.contains("outputSchema")) << tool.value("name", "?");
  }
  EXPECT_THAT(
      names, UnorderedElementsAre("remember", "remember_batch", "recall", "get", "history", "as_of",
                                  "valid_at", "bitemporal", "forget", "purge", "embed", "stats"));
}

TEST_F(DispatcherTest, ToolsCallPutsTheResultTextAndObjectInTheResult) {
  json r = Respond(ToolCall(
      5, "remember", {{"category", "preference"}, {"key", "editor"}, {"body", "vim\nand more"}}));
  EXPECT_EQ(r["id"], 5);
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& result = r["result"];
  EXPECT_EQ(result["isError"], false);
  ASSERT_THAT(result["content"], SizeIs(1));
  EXPECT_EQ(result["content"][0]["type"], "text");
  ASSERT_TRUE(result["content"][0]["text"].is_string());
  const json text = json::parse(result["content"][0]["text"].get<std::string>(), nullptr, false);
  ASSERT_FALSE(text.is_discarded());
  EXPECT_EQ(text, result["structuredContent"]);
  EXPECT_EQ(result["structuredContent"]["ok"], true);
  EXPECT_EQ(result["structuredContent"]["key"], "editor");
}

TEST_F(DispatcherTest, ToolResultLinesAreWhatTheJsonSerializerWrites) {
  // The result's text is reused for structuredContent instead of serializing it twice; the
  // line must still be byte for byte what nlohmann writes for the same response.
  const std::string lines[] = {
      ToolCall(7, "remember",
               {{"category", "c"}, {"key", "k"}, {"body", {{"text", "quote \" and \u00e9 \n"}}}}),
      ToolCall("seven", "recall", {{"query", "quote"}, {"mode", "fts5"}}),
      ToolCall(8, "stats", json::object()),
      ToolCall(9, "get", {{"category", "c"}, {"key", "missing"}}),
      ToolCall(10, "remember", {{"category", "c"}}),  // isError
  };
  for (const std::string& line : lines) {
    SCOPED_TRACE(line);
    const std::optional<std::string> response = dispatcher_->HandleLine(line);
    ASSERT_TRUE(response.has_value());
    const json parsed = json::parse(*response, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded());
    EXPECT_EQ(*response, parsed.dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

TEST_F(DispatcherTest, ToolsCallAnswersUnderPerseusNames) {
  ASSERT_EQ(
      Respond(ToolCall(1, "remember",
                       {{"category", "c"}, {"key", "k"}, {"body", "x"}}))["result"]["isError"],
      false);
  json r = Respond(ToolCall(2, "perseus_vault_as_of",
                            {{"category", "c"}, {"key", "k"}, {"as_of_unix_ms", 4e12}}));
  EXPECT_EQ(r["result"]["isError"], false) << r.dump();
  EXPECT_EQ(r["result"]["structuredContent"]["found"], true);
  EXPECT_TRUE(r["result"]["structuredContent"].contains("is_live_version"));
}

TEST_F(DispatcherTest, ToolsCallWithoutArgumentsCallsWithNone) {
  json r = Respond(Request(1, "tools/call", {{"name", "stats"}}));
  EXPECT_EQ(r["result"]["isError"], false) << r.dump();
  EXPECT_EQ(r["result"]["structuredContent"]["total_memories"], 0);
}

TEST_F(DispatcherTest, AToolErrorIsAResultWithIsErrorTrue) {
  json r = Respond(ToolCall(9, "recall", {{"query", "x"}, {"limit", 5000}}));
  EXPECT_EQ(r["id"], 9);
  EXPECT_FALSE(r.contains("error")) << r.dump();
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_FALSE(r["result"].contains("structuredContent"));
  ASSERT_THAT(r["result"]["content"], SizeIs(1));
  EXPECT_EQ(r["result"]["content"][0]["type"], "text");
  EXPECT_EQ(r["result"]["content"][0]["text"], "limit: must be between 1 and 1000, got 5000");
}

TEST_F(DispatcherTest, ArgumentsThatAreNotAnObjectAreAToolError) {
  json r = Respond(ToolCall(1, "remember", json::array({"c", "k"})));
  EXPECT_EQ(r["result"]["isError"], true) << r.dump();
  EXPECT_EQ(r["result"]["content"][0]["text"], "arguments: must be an object");
}

TEST_F(DispatcherTest, UnknownToolIsInvalidParamsListingTheTools) {
  json r = Respond(ToolCall(4, "rememberr", json::object()));
  ExpectError(r, kInvalidParams, 4);
  const std::string message = r["error"]["message"].get<std::string>();
  EXPECT_THAT(message, HasSubstr("rememberr"));
  EXPECT_THAT(message, HasSubstr("remember_batch"));
}

TEST_F(DispatcherTest, ToolsCallWithoutANameIsInvalidParams) {
  ExpectError(Respond(Request(1, "tools/call", json::object())), kInvalidParams, 1);
  ExpectError(Respond(Request(2, "tools/call", {{"name", 5}})), kInvalidParams, 2);
}

TEST_F(DispatcherTest, ParamsThatAreNotAStructureAreInvalidParams) {
  ExpectError(Respond(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":"stats"})"),
              kInvalidParams, 1);
  ExpectError(Respond(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":["stats"]})"),
              kInvalidParams, 2);
}

// Progress: notifications sent while a tools/call runs, before its response.

class ProgressTest : public DispatcherTest {
 protected:
  // Only the embed calls under test embed: with a background thread racing them, the versions
  // they find pending would depend on timing.
  ProgressTest() { background_work_ = false; }

  void SetUp() override {
    DispatcherTest::SetUp();
    dispatcher_->set_notify([this](const std::string& line) { notified_.push_back(line); });
  }

  // Stores `filler` new memories, then `n` new ones in category "target" (an embed call of
  // that category leaves the filler alone).
  void WriteMemories(int filler, int n) {
    json items = json::array();
    for (int i = 0; i < filler + n; ++i) {
      const bool target = i >= filler;
      items.push_back({{"category", target ? "target" : "filler"},
                       {"key", absl::StrCat("k", written_++)},
                       {"body", absl::StrCat("progress note number ", written_)},
                       {"dedup", false}});
    }
    json r = Respond(ToolCall(1, "remember_batch", {{"items", items}}));
    ASSERT_EQ(r["result"]["structuredContent"]["created"], filler + n) << r.dump().substr(0, 500);
    notified_.clear();
  }

  // An embed call over the target memories with `meta` as params._meta (none when null).
  json Embed(const json& id, const json& meta) {
    json params = {{"name", "embed"}, {"arguments", {{"category", "target"}, {"limit", 100000}}}};
    if (!meta.is_null()) params["_meta"] = meta;
    return Respond(Request(id, "tools/call", params));
  }

  std::vector<std::string> notified_;
  int written_ = 0;
};

TEST_F(ProgressTest, AProgressTokenGetsIncreasingProgressUpToTheTotal) {
  ASSERT_NO_FATAL_FAILURE(WriteMemories(200, 600));
  json r = Embed(7, {{"progressToken", "embed-1"}});
  ASSERT_EQ(r["result"]["isError"], false) << r.dump();
  const json& result = r["result"]["structuredContent"];
  EXPECT_EQ(result["remaining"], 0);
  const int64_t embedded = result["embedded"].get<int64_t>();
  EXPECT_GT(embedded, 256);  // More than one batch of the builtin embedder.
  EXPECT_GE(notified_.size(), 2u);
  int64_t last = 0;
  for (const std::string& line : notified_) {
    EXPECT_EQ(line.find('\n'), std::string::npos);
    const json n = json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(n.is_object()) << line;
    EXPECT_EQ(n["jsonrpc"], "2.0");
    EXPECT_EQ(n["method"], "notifications/progress");
    EXPECT_FALSE(n.contains("id")) << line;
    EXPECT_EQ(n["params"]["progressToken"], "embed-1");
    const int64_t progress = n["params"]["progress"].get<int64_t>();
    EXPECT_GT(progress, last) << line;
    EXPECT_LE(progress, n["params"]["total"].get<int64_t>()) << line;
    EXPECT_LE(n["params"]["total"].get<int64_t>(), 600) << line;
    last = progress;
  }
  EXPECT_EQ(last, embedded);
}

TEST_F(ProgressTest, AnIntegerTokenIsEchoedAsAnInteger) {
  ASSERT_NO_FATAL_FAILURE(WriteMemories(200, 300));
  json r = Embed(8, {{"progressToken", 42}});
  ASSERT_EQ(r["result"]["isError"], false) << r.dump();
  EXPECT_GT(r["result"]["structuredContent"]["embedded"].get<int64_t>(), 0);
  EXPECT_FALSE(notified_.empty());
  for (const std::string& line : notified_) {
    EXPECT_EQ(json::parse(line)["params"]["progressToken"], 42) << line;
  }
}

TEST_F(ProgressTest, NoTokenOrATokenOfAnotherTypeGetsNoNotifications) {
  for (const json& meta : {json(nullptr), json::object(), json({{"progressToken", true}}),
                           json({{"progressToken", {{"a", 1}}}}), json("token")}) {
    SCOPED_TRACE(meta.dump());
    ASSERT_NO_FATAL_FAILURE(WriteMemories(200, 300));
    json r = Embed(9, meta);
    EXPECT_EQ(r["result"]["isError"], false) << r.dump();
    EXPECT_GT(r["result"]["structuredContent"]["embedded"].get<int64_t>(), 0);
    EXPECT_THAT(notified_, IsEmpty());
  }
}

TEST_F(ProgressTest, WithoutANotifySinkProgressIsDropped) {
  ASSERT_NO_FATAL_FAILURE(WriteMemories(200, 300));
  dispatcher_->set_notify(nullptr);
  json r = Embed(10, {{"progressToken", "nobody-listens"}});
  EXPECT_EQ(r["id"], 10);
  EXPECT_EQ(r["result"]["isError"], false) << r.dump();
  EXPECT_GT(r["result"]["structuredContent"]["embedded"].get<int64_t>(), 0);
  EXPECT_EQ(r["result"]["structuredContent"]["remaining"], 0);
  EXPECT_THAT(notified_, IsEmpty());
}

// Lines that are not JSON-RPC.

TEST_F(DispatcherTest, NonJsonIsAParseErrorWithANullId) {
  for (const char* line : {"hello", "{", R"({"jsonrpc":"2.0","id":1,"method":"ping"} extra)",
                           R"({"jsonrpc":"2.0","id":1,"method":"ping",})", "[1,2"}) {
    SCOPED_TRACE(line);
    ExpectError(Respond(line), kParseError, nullptr);
  }
}

TEST_F(DispatcherTest, InvalidUtf8IsAParseError) {
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"a)";
  line.push_back(static_cast<char>(0xff));
  line.append(R"("}})");
  json r = Respond(line);
  ExpectError(r, kParseError, nullptr);
  EXPECT_THAT(r["error"]["message"].get<std::string>(), HasSubstr("UTF-8"));
}

TEST_F(DispatcherTest, NestingDeeperThanMaxDepthIsAParseError) {
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)";
  line.append(Nested(200));
  line.append("}}");
  json r = Respond(line);
  ExpectError(r, kParseError, nullptr);
  EXPECT_THAT(r["error"]["message"].get<std::string>(), HasSubstr("nested deeper than 64"));
}

TEST_F(DispatcherTest, MaxDepthIsConfigurable) {
  dispatcher_ = std::make_unique<Dispatcher>(registry_.get(), DispatcherOptions{.max_depth = 8});
  std::string shallow = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)";
  shallow.append(Nested(3)).append("}}");
  EXPECT_EQ(Respond(shallow)["result"], json::object());
  std::string deep = R"({"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":)";
  deep.append(Nested(20)).append("}}");
  ExpectError(Respond(deep), kParseError, nullptr);
}

TEST_F(DispatcherTest, TheDispatcherKeepsServingAfterAParseError) {
  ExpectError(Respond("not json"), kParseError, nullptr);
  EXPECT_EQ(Respond(Request(2, "ping"))["id"], 2);
}

TEST_F(DispatcherTest, AScalarMessageIsAnInvalidRequest) {
  ExpectError(Respond("5"), kInvalidRequest, nullptr);
  ExpectError(Respond(R"("ping")"), kInvalidRequest, nullptr);
  ExpectError(Respond("null"), kInvalidRequest, nullptr);
}

TEST_F(DispatcherTest, MissingOrWrongJsonrpcIsAnInvalidRequest) {
  ExpectError(Respond(R"({"id":1,"method":"ping"})"), kInvalidRequest, 1);
  ExpectError(Respond(R"({"jsonrpc":"1.0","id":"x","method":"ping"})"), kInvalidRequest, "x");
  ExpectError(Respond(R"({"jsonrpc":2.0,"id":2,"method":"ping"})"), kInvalidRequest, 2);
}

TEST_F(DispatcherTest, AMethodThatIsMissingOrNotAStringIsAnInvalidRequest) {
  ExpectError(Respond(R"({"jsonrpc":"2.0","id":1})"), kInvalidRequest, 1);
  ExpectError(Respond(R"({"jsonrpc":"2.0","id":2,"method":5})"), kInvalidRequest, 2);
}

// Ids.

TEST_F(DispatcherTest, StringAndNumberIdsAreEchoedUnchanged) {
  EXPECT_EQ(Respond(Request("abc-1", "ping"))["id"], "abc-1");
  EXPECT_EQ(Respond(Request("", "ping"))["id"], "");
  EXPECT_EQ(Respond(Request(0, "ping"))["id"], 0);
  EXPECT_EQ(Respond(Request(-12, "ping"))["id"], -12);
  EXPECT_EQ(Respond(Request(int64_t{9007199254740993}, "ping"))["id"], int64_t{9007199254740993});
  json r = Respond(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})");
  EXPECT_EQ(r["id"], uint64_t{18446744073709551615u});
}

TEST_F(DispatcherTest, AnIdThatIsNotAStringOrNumberIsAnInvalidRequest) {
  ExpectError(Respond(R"({"jsonrpc":"2.0","id":{"n":1},"method":"ping"})"), kInvalidRequest,
              nullptr);
  ExpectError(Respond(R"({"jsonrpc":"2.0","id":[1],"method":"ping"})"), kInvalidRequest, nullptr);
  ExpectError(Respond(R"({"jsonrpc":"2.0","id":true,"method":"ping"})"), kInvalidRequest, nullptr);
}

TEST_F(DispatcherTest, ErrorsCarryTheRequestsId) {
  ExpectError(Respond(Request("q", "nope")), kMethodNotFound, "q");
  ExpectError(Respond(ToolCall(11, "nope", json::object())), kInvalidParams, 11);
}

// Batches.

TEST_F(DispatcherTest, ABatchAnswersItsRequestsInOrderAndSkipsNotifications) {
  const std::string line = Batch({Request(1, "ping"), Notification("notifications/initialized"),
                                  Request("two", "tools/list"), Request(3, "nope")});
  json r = Respond(line);
  ASSERT_TRUE(r.is_array()) << r.dump();
  ASSERT_THAT(r, SizeIs(3));
  EXPECT_EQ(r[0]["id"], 1);
  EXPECT_EQ(r[0]["result"], json::object());
  EXPECT_EQ(r[1]["id"], "two");
  EXPECT_TRUE(r[1]["result"].contains("tools"));
  ExpectError(r[2], kMethodNotFound, 3);
}

TEST_F(DispatcherTest, ABatchOfOnlyNotificationsIsNotAnswered) {
  const std::string line =
      Batch({Notification("notifications/initialized"), Notification("notifications/cancelled")});
  EXPECT_TRUE(Unanswered(line));
}

TEST_F(DispatcherTest, ABatchOfOnlyClientResponsesIsNotAnswered) {
  EXPECT_TRUE(Unanswered(R"([{"jsonrpc":"2.0","id":1,"result":{}}])"));
}

TEST_F(DispatcherTest, AnEmptyBatchIsOneInvalidRequest) {
  json r = Respond("[]");
  ASSERT_TRUE(r.is_object()) << r.dump();
  ExpectError(r, kInvalidRequest, nullptr);
}

TEST_F(DispatcherTest, ABatchOfNonObjectsGetsAnInvalidRequestForEach) {
  json r = Respond("[1, 2, 3]");
  ASSERT_TRUE(r.is_array()) << r.dump();
  ASSERT_THAT(r, SizeIs(3));
  for (const json& response : r) ExpectError(response, kInvalidRequest, nullptr);
}

TEST_F(DispatcherTest, ABatchOverMaxBatchIsOneInvalidRequest) {
  dispatcher_ = std::make_unique<Dispatcher>(registry_.get(), DispatcherOptions{.max_batch = 3});
  std::vector<std::string> pings;
  for (int i = 0; i < 4; ++i) pings.push_back(Request(i, "ping"));
  const std::string over_limit = Batch(pings);
  pings.pop_back();
  const std::string at_limit = Batch(pings);
  EXPECT_THAT(Respond(at_limit), SizeIs(3));
  json r = Respond(over_limit);
  ASSERT_TRUE(r.is_object()) << r.dump();
  ExpectError(r, kInvalidRequest, nullptr);
  EXPECT_THAT(r["error"]["message"].get<std::string>(), HasSubstr("at most 3"));
}

TEST_F(DispatcherTest, ABatchCallsToolsInOrder) {
  const std::string line =
      Batch({ToolCall(1, "remember", {{"category", "c"}, {"key", "k"}, {"body", "first"}}),
             ToolCall(2, "get", {{"category", "c"}, {"key", "k"}})});
  json r = Respond(line);
  ASSERT_THAT(r, SizeIs(2));
  EXPECT_EQ(r[1]["result"]["structuredContent"]["body"], "first") << r.dump();
}

// The stateless revision (2026-07-28): the version and capabilities in each request's _meta.

json StatelessMeta(const json& version = "2026-07-28") {
  return {{"io.modelcontextprotocol/protocolVersion", version},
          {"io.modelcontextprotocol/clientCapabilities", json::object()}};
}

TEST_F(DispatcherTest, AStatelessRequestNeedsNoInitializeAndIsMarkedComplete) {
  json r = Respond(Request(1, "tools/list", {{"_meta", StatelessMeta()}}));
  EXPECT_EQ(r["result"]["resultType"], "complete") << r.dump();
  EXPECT_EQ(r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "strata");
  EXPECT_GT(r["result"]["ttlMs"].get<int64_t>(), 0);
  EXPECT_EQ(dispatcher_->protocol_version(), "");  // No session was opened.
  json legacy = Respond(Request(2, "tools/list"));
  EXPECT_FALSE(legacy["result"].contains("resultType"));
  EXPECT_EQ(legacy["result"]["tools"], r["result"]["tools"]);
}

TEST_F(DispatcherTest, DiscoverListsEveryRevisionNewestFirst) {
  json r = Respond(Request("d", "server/discover", {{"_meta", StatelessMeta()}}));
  const json& versions = r["result"]["supportedVersions"];
  ASSERT_EQ(versions.size(), std::size(kStatelessVersions) + std::size(kProtocolVersions));
  EXPECT_EQ(versions.front(), "2026-07-28");
  EXPECT_EQ(versions.back(), "2024-11-05");
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "strata");
  EXPECT_FALSE(r["result"]["tools"].empty());
}

TEST_F(DispatcherTest, AnUnknownRevisionInMetaIsRefusedWithTheSupportedOnes) {
  json r = Respond(
      Request(3, "tools/call", {{"name", "stats"}, {"_meta", StatelessMeta("2099-01-01")}}));
  ExpectError(r, kUnsupportedProtocolVersion, 3);
  EXPECT_EQ(r["error"]["data"]["requested"], "2099-01-01");
  EXPECT_EQ(r["error"]["data"]["supported"].front(), "2026-07-28");
}

TEST_F(DispatcherTest, AStatelessRequestWithoutCapabilitiesIsInvalidParams) {
  json meta = StatelessMeta();
  meta.erase("io.modelcontextprotocol/clientCapabilities");
  ExpectError(Respond(Request(4, "tools/list", {{"_meta", meta}})), kInvalidParams, 4);
  ExpectError(Respond(Request(5, "server/discover")), kInvalidParams, 5);
}

// Cancellation: Preview sees lines as they arrive, before HandleLine reaches them.

TEST_F(DispatcherTest, ARequestCancelledWhileQueuedGetsNoResponse) {
  const std::string call =
      ToolCall(7, "remember", {{"category", "c"}, {"key", "k"}, {"body", "x"}});
  const std::string cancel = json({{"jsonrpc", "2.0"},
                                   {"method", "notifications/cancelled"},
                                   {"params", {{"requestId", 7}}}})
                                 .dump();
  dispatcher_->Preview(call);
  dispatcher_->Preview(cancel);
  EXPECT_TRUE(Unanswered(call));
  EXPECT_TRUE(Unanswered(cancel));
  // Nothing was written, and the id may be used again once its cancellation has passed.
  json got = Respond(ToolCall(8, "get", {{"category", "c"}, {"key", "k"}}));
  EXPECT_EQ(got["result"]["structuredContent"]["found"], false) << got.dump();
  EXPECT_FALSE(Unanswered(Request(7, "ping")));
}

TEST_F(DispatcherTest, ACancellationOfAnotherIdOrInABatchIsHonoredOnlyForItsId) {
  const std::string cancel_batch = Batch({json({{"jsonrpc", "2.0"},
                                                {"method", "notifications/cancelled"},
                                                {"params", {{"requestId", "a"}}}})
                                              .dump()});
  dispatcher_->Preview(cancel_batch);
  EXPECT_FALSE(Unanswered(Request("b", "ping")));
  EXPECT_TRUE(Unanswered(Request("a", "ping")));
  EXPECT_TRUE(Unanswered(cancel_batch));
  EXPECT_FALSE(Unanswered(Request("a", "ping")));
}

// ErrorLine.

TEST(DispatcherErrorLine, IsAJsonRpcErrorWithANullId) {
  const std::string line = Dispatcher::ErrorLine(kInvalidRequest, "Invalid Request: too long");
  EXPECT_EQ(line.find('\n'), std::string::npos);
  json r = json::parse(line);
  ExpectError(r, kInvalidRequest, nullptr);
  EXPECT_EQ(r["error"]["message"], "Invalid Request: too long");
}

}  // namespace
}  // namespace strata::mcp
