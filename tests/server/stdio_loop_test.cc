// server::ServeStdio over pipes with a real Dispatcher: one response line per request in order,
// line endings, the last line before EOF, oversized lines (one error each, however they are
// split across reads) and the exit code.

#include "server/stdio_loop.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "mcp/dispatcher.h"
#include "strata/strata.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "tools/registry.h"

namespace strata::server {
namespace {

using ::nlohmann::json;
using ::strata::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr size_t kSmallLimit = 1024;

// A ping request line (without its newline) with `id`.
std::string Ping(int id) {
  return json({{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}).dump();
}

// A ping request line padded with a string parameter to exactly `size` bytes.
std::string PingOfSize(int id, size_t size) {
  std::string line = R"({"jsonrpc":"2.0","id":)";
  line.append(std::to_string(id)).append(R"(,"method":"ping","params":{"pad":")");
  const size_t tail = 3;  // "}}
  if (line.size() + tail < size) line.append(size - line.size() - tail, 'x');
  line.append("\"}}");
  return line;
}

// Writes all of `data` to `fd`; false on an error.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Returns once the reading end of the pipe written by `fd` has taken every byte.
void WaitUntilDrained(int fd) {
  int pending = 0;
  while (::ioctl(fd, FIONREAD, &pending) == 0 && pending > 0) std::this_thread::yield();
}

// Reads `fd` to EOF.
std::string ReadAll(int fd) {
  std::string out;
  char chunk[4096];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(chunk, static_cast<size_t>(n));
  }
  return out;
}

// The lines of `text`, each without its '\n'; a last line without '\n' is kept too.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The output of ServeStdio run on `input`.
struct Served {
  int exit_code = -1;
  std::string output;
};

class StdioLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({.path = dir_.File("memory.db")});
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    registry_ = std::make_unique<tools::ToolRegistry>(store_.get(), tools::RegistryOptions{});
    dispatcher_ = std::make_unique<mcp::Dispatcher>(registry_.get(), mcp::DispatcherOptions{});
  }

  // Runs ServeStdio on this thread, reading from a pipe that a writer thread fills with
  // `parts`, each once the loop has read the one before, then closes (so input of any size
  // works); a reader thread drains the output pipe.
  Served Serve(const std::vector<std::string>& parts, StdioOptions options = {}) {
    Served served;
    int in[2];
    int out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) {
      ADD_FAILURE() << "pipe: " << errno;
      return served;
    }
    bool written = true;
    std::thread writer([&] {
      for (const std::string& part : parts) {
        WaitUntilDrained(in[1]);
        written = written && WriteAll(in[1], part);
      }
      ::close(in[1]);
    });
    std::thread reader([&] {
      served.output = ReadAll(out[0]);
      ::close(out[0]);
    });
    served.exit_code = ServeStdio(*dispatcher_, in[0], out[1], options);
    ::close(out[1]);
    writer.join();
    reader.join();
    ::close(in[0]);
    EXPECT_TRUE(written);
    return served;
  }
  Served Serve(const std::string& input, StdioOptions options = {}) {
    return Serve(std::vector<std::string>{input}, options);
  }

  // The responses ServeStdio wrote for `input`, parsed, one per output line.
  std::vector<json> Responses(const std::vector<std::string>& parts, StdioOptions options = {}) {
    const Served served = Serve(parts, options);
    EXPECT_EQ(served.exit_code, 0);
    EXPECT_TRUE(served.output.empty() || served.output.back() == '\n') << served.output;
    std::vector<json> responses;
    for (const std::string& line : Lines(served.output)) {
      json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
      EXPECT_FALSE(parsed.is_discarded()) << line;
      responses.push_back(std::move(parsed));
    }
    return responses;
  }
  std::vector<json> Responses(const std::string& input, StdioOptions options = {}) {
    return Responses(std::vector<std::string>{input}, options);
  }

  ::strata::testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<mcp::Dispatcher> dispatcher_;
};

// The ids of `responses`, in order.
std::vector<json> Ids(const std::vector<json>& responses) {
  std::vector<json> ids;
  for (const json& r : responses) ids.push_back(r.value("id", json("<no id>")));
  return ids;
}

// Whether `response` is the oversized-line error: -32600 with a null id.
bool IsTooLongError(const json& response) {
  return response.is_object() && response.contains("id") && response["id"].is_null() &&
         response.contains("error") && response["error"].value("code", 0) == -32600 &&
         response["error"].value("message", "").find("longer than") != std::string::npos;
}

std::string Joined(const std::vector<std::string>& lines, std::string_view ending) {
  std::string text;
  for (const std::string& line : lines) text.append(line).append(ending);
  return text;
}

TEST_F(StdioLoopTest, AnswersEachLineInOrder) {
  const std::string input =
      Joined({Ping(1), Ping(2),
              json({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}}).dump(), Ping(4)},
             "\n");
  const std::vector<json> responses = Responses(input);
  EXPECT_THAT(Ids(responses), ElementsAre(1, 2, 3, 4));
  ASSERT_THAT(responses, SizeIs(4));
  EXPECT_EQ(responses[0]["result"], json::object());
  EXPECT_TRUE(responses[2]["result"].contains("tools"));
}

TEST_F(StdioLoopTest, NotificationsAndBlankLinesGetNoOutput) {
  const std::string input = Joined(
      {"", Ping(1), R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "   ", Ping(2)},
      "\n");
  EXPECT_THAT(Ids(Responses(input)), ElementsAre(1, 2));
}

TEST_F(StdioLoopTest, AcceptsCrlfLineEndings) {
  const std::string input = Joined({Ping(1), "", Ping(2)}, "\r\n");
  const std::vector<json> responses = Responses(input);
  EXPECT_THAT(Ids(responses), ElementsAre(1, 2));
}

TEST_F(StdioLoopTest, TheCrOfACrlfEndingDoesNotCountTowardsTheLimit) {
  StdioOptions options{.max_line_bytes = kSmallLimit};
  const std::string line = PingOfSize(1, kSmallLimit);
  ASSERT_EQ(line.size(), kSmallLimit);
  const std::vector<json> responses = Responses(Joined({line}, "\r\n"), options);
  ASSERT_THAT(responses, SizeIs(1));
  EXPECT_EQ(responses[0]["id"], 1);
}

TEST_F(StdioLoopTest, ACrlfLineAtTheLimitSplitBetweenCrAndLfIsAnswered) {
  // The same bytes as above, but the loop reads the '\r' before the '\n' arrives.
  StdioOptions options{.max_line_bytes = kSmallLimit};
  std::string first = PingOfSize(1, kSmallLimit);
  ASSERT_EQ(first.size(), kSmallLimit);
  first.push_back('\r');
  const std::vector<json> responses = Responses({first, Joined({"", Ping(2)}, "\n")}, options);
  EXPECT_THAT(Ids(responses), ElementsAre(1, 2));
}

TEST_F(StdioLoopTest, ALineSplitAcrossReadsIsAnsweredOnce) {
  const std::string line = Ping(1);
  const std::vector<json> responses =
      Responses({line.substr(0, 10), line.substr(10), Joined({"", Ping(2)}, "\n")});
  EXPECT_THAT(Ids(responses), ElementsAre(1, 2));
}

TEST_F(StdioLoopTest, ALastLineWithoutANewlineIsAnswered) {
  std::string input = Ping(1);
  input.push_back('\n');
  input.append(Ping(2));
  EXPECT_THAT(Ids(Responses(input)), ElementsAre(1, 2));
}

TEST_F(StdioLoopTest, AnEmptyInputEndsCleanlyWithNoOutput) {
  const Served served = Serve("");
  EXPECT_EQ(served.exit_code, 0);
  EXPECT_EQ(served.output, "");
}

TEST_F(StdioLoopTest, EofReturnsZero) {
  const Served served = Serve(Joined({Ping(1)}, "\n"));
  EXPECT_EQ(served.exit_code, 0);
  EXPECT_THAT(Lines(served.output), SizeIs(1));
}

TEST_F(StdioLoopTest, ABadLineIsAnsweredAndServingGoesOn) {
  const std::vector<json> responses = Responses(Joined({"not json", Ping(2)}, "\n"));
  ASSERT_THAT(responses, SizeIs(2));
  EXPECT_EQ(responses[0]["error"]["code"], -32700);
  EXPECT_TRUE(responses[0]["id"].is_null());
  EXPECT_EQ(responses[1]["id"], 2);
}

TEST_F(StdioLoopTest, ALineAtTheLimitIsAnswered) {
  StdioOptions options{.max_line_bytes = kSmallLimit};
  const std::string line = PingOfSize(1, kSmallLimit);
  ASSERT_EQ(line.size(), kSmallLimit);
  const std::vector<json> responses = Responses(Joined({line}, "\n"), options);
  ASSERT_THAT(responses, SizeIs(1));
  EXPECT_EQ(responses[0]["id"], 1);
}

TEST_F(StdioLoopTest, ALineOverTheLimitGetsOneErrorAndTheNextLineIsAnswered) {
  StdioOptions options{.max_line_bytes = kSmallLimit};
  const std::string input = Joined({Ping(1), PingOfSize(2, 2 * kSmallLimit), Ping(3)}, "\n");
  const std::vector<json> responses = Responses(input, options);
  ASSERT_THAT(responses, SizeIs(3));
  EXPECT_EQ(responses[0]["id"], 1);
  EXPECT_TRUE(IsTooLongError(responses[1])) << responses[1].dump();
  EXPECT_THAT(responses[1]["error"]["message"].get<std::string>(), HasSubstr("1024"));
  EXPECT_EQ(responses[2]["id"], 3);
}

TEST_F(StdioLoopTest, ALineOverflowingAcrossManyReadsGetsExactlyOneError) {
  StdioOptions options{.max_line_bytes = kSmallLimit};
  const std::string input = Joined({PingOfSize(1, 300 * 1024), Ping(2)}, "\n");
  const std::vector<json> responses = Responses(input, options);
  ASSERT_THAT(responses, SizeIs(2));
  EXPECT_TRUE(IsTooLongError(responses[0])) << responses[0].dump();
  EXPECT_EQ(responses[1]["id"], 2);
}

TEST_F(StdioLoopTest, SeveralOversizedLinesGetOneErrorEach) {
  StdioOptions options{.max_line_bytes = kSmallLimit};
  const std::string input = Joined(
      {PingOfSize(1, 100 * 1024), Ping(2), PingOfSize(3, 5000), PingOfSize(4, 200 * 1024), Ping(5)},
      "\n");
  const std::vector<json> responses = Responses(input, options);
  ASSERT_THAT(responses, SizeIs(5));
  EXPECT_TRUE(IsTooLongError(responses[0]));
  EXPECT_EQ(responses[1]["id"], 2);
  EXPECT_TRUE(IsTooLongError(responses[2]));
  EXPECT_TRUE(IsTooLongError(responses[3]));
  EXPECT_EQ(responses[4]["id"], 5);
}

TEST_F(StdioLoopTest, AnOversizedLastLineWithoutANewlineGetsOneError) {
  StdioOptions options{.max_line_bytes = kSmallLimit};
  std::string input = Ping(1);
  input.push_back('\n');
  input.append(PingOfSize(2, 200 * 1024));
  const std::vector<json> responses = Responses(input, options);
  ASSERT_THAT(responses, SizeIs(2));
  EXPECT_EQ(responses[0]["id"], 1);
  EXPECT_TRUE(IsTooLongError(responses[1])) << responses[1].dump();
}

TEST_F(StdioLoopTest, ManyRequestsLargerThanThePipeBufferAreAllAnswered) {
  std::vector<std::string> lines;
  for (int i = 0; i < 3000; ++i) lines.push_back(Ping(i));
  const std::vector<json> responses = Responses(Joined(lines, "\n"));
  ASSERT_THAT(responses, SizeIs(3000));
  for (int i = 0; i < 3000; ++i) EXPECT_EQ(responses[static_cast<size_t>(i)]["id"], i);
}

TEST_F(StdioLoopTest, AnUnwritableOutputReturnsOne) {
  int in[2];
  int out[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  std::string input = Ping(1);
  input.push_back('\n');
  ASSERT_TRUE(WriteAll(in[1], input));  // Fits the pipe buffer.
  ::close(in[1]);
  // The read end of a pipe cannot be written: write(2) fails with EBADF.
  EXPECT_EQ(ServeStdio(*dispatcher_, in[0], out[0], StdioOptions{}), 1);
  ::close(in[0]);
  ::close(out[0]);
  ::close(out[1]);
}

TEST_F(StdioLoopTest, NoOutputForInputThatNeedsNoAnswer) {
  const std::string input =
      Joined({R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "", "\t"}, "\n");
  EXPECT_THAT(Responses(input), IsEmpty());
}

}  // namespace
}  // namespace strata::server
