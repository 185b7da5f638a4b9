#include "embed/http_embedder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"
#include "util/sv.h"

namespace strata::embed {
namespace {

using ::nlohmann::json;
using ::strata::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pointwise;
using ::testing::SizeIs;

using Options = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------------------------------------
// A scripted HTTP server on 127.0.0.1: one thread, one connection at a time, and a handler that
// decides each answer from the request and how many came before it.
// Thread safety: requests() may be called while the server thread runs; the thread stops and is
// joined in the destructor.

struct Request {
  std::string head;  // Request line and headers.
  std::string body;
};

struct Reply {
  std::string raw;  // Sent as is, then the connection is closed.
  // When set, `raw` goes out in pieces of this many bytes with a pause between them, so that
  // the client reads partial answers.
  size_t piece_bytes = 0;
  // Instead of answering: say nothing and keep the connection open until the client gives up.
  bool hang = false;
};

class FakeServer {
 public:
  // `handler(i, request)` answers the i-th request (from 0).
  using Handler = std::function<Reply(int, const Request&)>;

  explicit FakeServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t size = sizeof address;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        listen(listen_fd_, 16) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::jthread([this](std::stop_token stop) { Serve(stop); });
  }
  ~FakeServer() {
    thread_.request_stop();
    thread_.join();
    close(listen_fd_);
  }

  std::string Url(std::string_view path) const {
    return absl::StrCat("http://127.0.0.1:", port_, ToAbsl(path));
  }
  std::vector<Request> requests() const {
    absl::MutexLock lock(&mutex_);
    return requests_;
  }

 private:
  // Waits until `fd` is readable; false once the server is stopping.
  static bool WaitReadable(int fd, const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      pollfd entry{.fd = fd, .events = POLLIN, .revents = 0};
      if (poll(&entry, 1, /*timeout_ms=*/20) > 0) return true;
    }
    return false;
  }

  // Reads the head and a Content-Length body; nullopt if the client went away or we stop.
  static std::optional<Request> ReadRequest(int fd, const std::stop_token& stop) {
    std::string received;
    size_t head_end;
    while ((head_end = received.find("\r\n\r\n")) == std::string::npos) {
      if (!ReadSome(fd, received, stop)) return std::nullopt;
    }
    Request request{.head = received.substr(0, head_end)};
    const std::string lower_head = absl::AsciiStrToLower(request.head);
    const size_t length_at = lower_head.find("content-length:");
    const size_t length =
        length_at == std::string::npos ? 0 : std::stoul(lower_head.substr(length_at + 15));
    while (received.size() < head_end + 4 + length) {
      if (!ReadSome(fd, received, stop)) return std::nullopt;
    }
    request.body = received.substr(head_end + 4, length);
    return request;
  }

  static bool ReadSome(int fd, std::string& received, const std::stop_token& stop) {
    if (!WaitReadable(fd, stop)) return false;
    char buffer[4096];
    const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) return false;
    received.append(buffer, static_cast<size_t>(got));
    return true;
  }

  static void SendInPieces(int fd, const Reply& reply) {
    const size_t piece_bytes = reply.piece_bytes == 0 ? reply.raw.size() : reply.piece_bytes;
    for (size_t start = 0; start < reply.raw.size(); start += piece_bytes) {
      if (start > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const size_t size = std::min(piece_bytes, reply.raw.size() - start);
      if (send(fd, reply.raw.data() + start, size, MSG_NOSIGNAL) != static_cast<ssize_t>(size)) {
        return;
      }
    }
  }

  void Serve(const std::stop_token& stop) {
    while (WaitReadable(listen_fd_, stop)) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      if (std::optional<Request> request = ReadRequest(fd, stop)) {
        int index;
        {
          absl::MutexLock lock(&mutex_);
          requests_.push_back(*request);
          index = static_cast<int>(requests_.size()) - 1;
        }
        const Reply reply = handler_(index, *request);
        if (reply.hang) {
          std::string ignored;
          while (ReadSome(fd, ignored, stop)) {
          }
        } else {
          SendInPieces(fd, reply);
        }
      }
      close(fd);
    }
  }

  const Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  mutable absl::Mutex mutex_;
  std::vector<Request> requests_ ABSL_GUARDED_BY(mutex_);
  std::jthread thread_;
};

std::string HttpReply(int status, std::string_view body) {
  return absl::StrCat("HTTP/1.1 ", status, " Status\r\nContent-Type: application/json\r\n",
                      "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n",
                      ToAbsl(body));
}

std::string ChunkedReply(std::string_view body, size_t chunk_size) {
  std::string raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (size_t start = 0; start < body.size(); start += chunk_size) {
    const std::string_view chunk = body.substr(start, chunk_size);
    absl::StrAppend(&raw, absl::Hex(chunk.size()), ";ext=1\r\n", ToAbsl(chunk), "\r\n");
  }
  return raw + "0\r\nX-Trailer: yes\r\n\r\n";
}

// The server's vector for a text: {length, 1, 0}, distinct per length and not unit length.
json RawVector(const std::string& text) { return {static_cast<double>(text.size()), 1.0, 0.0}; }

std::vector<float> ExpectedUnitVector(const std::string& text) {
  const float length = static_cast<float>(text.size());
  const float norm = std::sqrt(length * length + 1);
  return {length / norm, 1 / norm, 0};
}

std::vector<std::string> Inputs(const Request& request) {
  return json::parse(request.body).at("input").get<std::vector<std::string>>();
}

// An OpenAI answer to `request`, listing the data items last to first when `reversed`.
std::string OpenAiAnswer(const Request& request, bool reversed = false) {
  json data = json::array();
  const std::vector<std::string> inputs = Inputs(request);
  for (size_t i = 0; i < inputs.size(); ++i) {
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", RawVector(inputs[i])}});
  }
  if (reversed) std::reverse(data.begin(), data.end());
  return json{{"object", "list"}, {"data", data}, {"model", "m"}}.dump();
}

std::string OllamaAnswer(const Request& request) {
  json embeddings = json::array();
  for (const std::string& input : Inputs(request)) embeddings.push_back(RawVector(input));
  return json{{"model", "m"}, {"embeddings", embeddings}}.dump();
}

Reply OpenAiOk(int, const Request& request) { return {HttpReply(200, OpenAiAnswer(request))}; }

std::unique_ptr<Embedder> MakeOrDie(HttpApi api, const Options& options) {
  absl::StatusOr<std::unique_ptr<Embedder>> embedder = MakeHttpEmbedder(api, options);
  EXPECT_TRUE(embedder.ok()) << embedder.status();
  return embedder.ok() ? std::move(embedder).value() : nullptr;
}

std::unique_ptr<Embedder> OpenAi(const FakeServer& server, Options extra = {}) {
  Options options = {{"url", server.Url("/v1/embeddings")}, {"model", "m"}, {"dim", "3"}};
  options.insert(options.end(), extra.begin(), extra.end());
  return MakeOrDie(HttpApi::kOpenAi, options);
}

// Checks that `vectors` holds ExpectedUnitVector(text) for each of `texts`, in order.
void ExpectVectorsFor(const std::vector<float>& vectors, const std::vector<std::string>& texts) {
  ASSERT_THAT(vectors, SizeIs(texts.size() * 3));
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<float> vector(vectors.begin() + i * 3, vectors.begin() + i * 3 + 3);
    EXPECT_THAT(vector, Pointwise(FloatNear(1e-6), ExpectedUnitVector(texts[i])))
        << "text " << i << ": " << texts[i];
  }
}

// ---------------------------------------------------------------------------------------------
// Options

TEST(HttpEmbedderOptions, InfoNamesApiModelAndDimension) {
  ASSERT_OK_AND_ASSIGN(const auto openai,
                       MakeHttpEmbedder(HttpApi::kOpenAi, {{"url", "http://h/v1/embeddings"},
                                                           {"model", "nomic"},
                                                           {"dim", "768"},
                                                           {"batch", "8"},
                                                           {"timeout_ms", "500"},
                                                           {"retries", "0"}}));
  EXPECT_EQ(openai->info().Fingerprint(), "openai/1/768/dim=768,model=nomic");
  EXPECT_EQ(openai->batch_size(), 8);

  ASSERT_OK_AND_ASSIGN(const auto ollama,
                       MakeHttpEmbedder(HttpApi::kOllama, {{"url", "http://[::1]:11434/api/embed"},
                                                           {"model", "all-minilm"},
                                                           {"dim", "384"}}));
  EXPECT_EQ(ollama->info().Fingerprint(), "ollama/1/384/dim=384,model=all-minilm");
  EXPECT_EQ(ollama->batch_size(), 32);
}

TEST(HttpEmbedderOptions, RequiresUrlModelAndDim) {
  EXPECT_THAT(MakeHttpEmbedder(HttpApi::kOpenAi, {{"model", "m"}, {"dim", "3"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"url\": required")));
  EXPECT_THAT(MakeHttpEmbedder(HttpApi::kOpenAi, {{"url", "http://h/"}, {"dim", "3"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"model\": required")));
  EXPECT_THAT(MakeHttpEmbedder(HttpApi::kOpenAi, {{"url", "http://h/"}, {"model", "m"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"dim\": required")));
}

TEST(HttpEmbedderOptions, RejectsUnknownKeyNamingIt) {
  EXPECT_THAT(
      MakeHttpEmbedder(HttpApi::kOpenAi,
                       {{"url", "http://h/"}, {"model", "m"}, {"dim", "3"}, {"colour", "red"}}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"colour\": unknown")));
}

TEST(HttpEmbedderOptions, RejectsNumbersOutOfRange) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"dim", "0"},      {"dim", "abc"},    {"dim", "3x"},
      {"batch", "0"},    {"batch", "2049"}, {"timeout_ms", "0"},
      {"retries", "-1"}, {"retries", "11"}, {"timeout_ms", ""}};
  for (const auto& [key, value] : bad) {
    Options options = {{"url", "http://h/"}, {"model", "m"}, {"dim", "3"}};
    options.emplace_back(key, value);
    EXPECT_THAT(MakeHttpEmbedder(HttpApi::kOpenAi, options),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("\"", key, "\": must be an integer"))))
        << key << "=" << value;
  }
}

TEST(HttpEmbedderOptions, RefusesHttpsExplainingThereIsNoTls) {
  EXPECT_THAT(MakeHttpEmbedder(
                  HttpApi::kOpenAi,
                  {{"url", "https://api.openai.com/v1/embeddings"}, {"model", "m"}, {"dim", "3"}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("\"url\""), HasSubstr("no TLS"))));
}

TEST(HttpEmbedderOptions, RejectsMalformedUrls) {
  for (const std::string url :
       {"ftp://h/x", "h:80/x", "http:///x", "http://h:0/x", "http://h:99999/x", "http://h:port/x",
        "http://[::1/x", "http://u:p@h/x"}) {
    EXPECT_THAT(MakeHttpEmbedder(HttpApi::kOpenAi, {{"url", url}, {"model", "m"}, {"dim", "3"}}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"url\"")))
        << url;
  }
}

// ---------------------------------------------------------------------------------------------
// Answers

TEST(HttpEmbedder, OpenAiVectorsAreUnitLengthInTextOrder) {
  FakeServer server([](int, const Request& request) {
    return Reply{HttpReply(200, OpenAiAnswer(request, /*reversed=*/true))};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  const std::vector<std::string> texts = {"a", "bbb", "cc"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors, embedder->Embed(texts, Role::kDocument));
  ExpectVectorsFor(vectors, texts);
}

TEST(HttpEmbedder, OpenAiRequestIsJsonWithModelAndInput) {
  FakeServer server(OpenAiOk);
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  ASSERT_OK(embedder->Embed(std::vector<std::string>{"x", "y\"z"}, Role::kDocument));

  const std::vector<Request> requests = server.requests();
  ASSERT_THAT(requests, SizeIs(1));
  EXPECT_THAT(requests[0].head, AllOf(HasSubstr("POST /v1/embeddings HTTP/1.1\r\n"),
                                      HasSubstr("Content-Type: application/json\r\n"),
                                      HasSubstr("Connection: close")));
  const json body = json::parse(requests[0].body);
  EXPECT_EQ(body.at("model"), "m");
  EXPECT_THAT(Inputs(requests[0]), ElementsAre("x", "y\"z"));
}

TEST(HttpEmbedder, SplitsTextsIntoRequestsOfBatchSize) {
  FakeServer server(OpenAiOk);
  const std::unique_ptr<Embedder> embedder = OpenAi(server, {{"batch", "2"}});
  const std::vector<std::string> texts = {"a", "bb", "ccc", "dddd", "eeeee"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors, embedder->Embed(texts, Role::kDocument));
  ExpectVectorsFor(vectors, texts);

  const std::vector<Request> requests = server.requests();
  ASSERT_THAT(requests, SizeIs(3));
  EXPECT_THAT(Inputs(requests[0]), ElementsAre("a", "bb"));
  EXPECT_THAT(Inputs(requests[1]), ElementsAre("ccc", "dddd"));
  EXPECT_THAT(Inputs(requests[2]), ElementsAre("eeeee"));
}

TEST(HttpEmbedder, OllamaVectorsAreUnitLengthInTextOrder) {
  FakeServer server(
      [](int, const Request& request) { return Reply{HttpReply(200, OllamaAnswer(request))}; });
  const std::unique_ptr<Embedder> embedder = MakeOrDie(
      HttpApi::kOllama, {{"url", server.Url("/api/embed")}, {"model", "minilm"}, {"dim", "3"}});
  const std::vector<std::string> texts = {"one", "three"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors, embedder->Embed(texts, Role::kDocument));
  ExpectVectorsFor(vectors, texts);

  const std::vector<Request> requests = server.requests();
  ASSERT_THAT(requests, SizeIs(1));
  EXPECT_THAT(requests[0].head, HasSubstr("POST /api/embed HTTP/1.1\r\n"));
  EXPECT_EQ(json::parse(requests[0].body).at("model"), "minilm");
  EXPECT_THAT(Inputs(requests[0]), ElementsAre("one", "three"));
}

TEST(HttpEmbedder, ReadsChunkedAnswer) {
  FakeServer server([](int, const Request& request) {
    return Reply{ChunkedReply(OpenAiAnswer(request), /*chunk_size=*/7)};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  const std::vector<std::string> texts = {"chunk", "ed"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors, embedder->Embed(texts, Role::kDocument));
  ExpectVectorsFor(vectors, texts);
}

TEST(HttpEmbedder, ReadsAnswersArrivingInPieces) {
  FakeServer server([](int index, const Request& request) {
    const std::string answer = OpenAiAnswer(request);
    return Reply{
        .raw = index == 0 ? ChunkedReply(answer, /*chunk_size=*/7) : HttpReply(200, answer),
        .piece_bytes = 5};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  for (const std::vector<std::string>& texts :
       {std::vector<std::string>{"chunked", "in", "pieces"}, std::vector<std::string>{"sized"}}) {
    ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors, embedder->Embed(texts, Role::kDocument));
    ExpectVectorsFor(vectors, texts);
  }
}

TEST(HttpEmbedder, ReadsUnframedAnswerUntilTheServerCloses) {
  FakeServer server([](int, const Request& request) {
    return Reply{"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" +
                 OpenAiAnswer(request)};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  const std::vector<std::string> texts = {"until", "close"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors, embedder->Embed(texts, Role::kDocument));
  ExpectVectorsFor(vectors, texts);
}

TEST(HttpEmbedder, ZeroVectorStaysZero) {
  FakeServer server([](int, const Request&) {
    return Reply{HttpReply(200, R"({"data": [{"index": 0, "embedding": [0, 0, 0]}]})")};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors,
                       embedder->Embed(std::vector<std::string>{"zero"}, Role::kDocument));
  EXPECT_THAT(vectors, ElementsAre(0.0f, 0.0f, 0.0f));
}

TEST(HttpEmbedder, BlankTextsGetZeroVectorsWithoutBeingSent) {
  FakeServer server(OpenAiOk);
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors,
                       embedder->Embed(std::vector<std::string>{"", "ab", " \n"}, Role::kDocument));
  ASSERT_THAT(vectors, SizeIs(9));
  EXPECT_THAT(std::vector<float>(vectors.begin(), vectors.begin() + 3), Each(0.0f));
  EXPECT_THAT(std::vector<float>(vectors.begin() + 3, vectors.begin() + 6),
              Pointwise(FloatNear(1e-6), ExpectedUnitVector("ab")));
  EXPECT_THAT(std::vector<float>(vectors.begin() + 6, vectors.end()), Each(0.0f));

  const std::vector<Request> requests = server.requests();
  ASSERT_THAT(requests, SizeIs(1));
  EXPECT_THAT(Inputs(requests[0]), ElementsAre("ab"));
}

TEST(HttpEmbedder, NoTextsMeansNoRequest) {
  FakeServer server(OpenAiOk);
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors,
                       embedder->Embed(std::vector<std::string>{}, Role::kDocument));
  EXPECT_TRUE(vectors.empty());
  EXPECT_THAT(server.requests(), SizeIs(0));
}

TEST(HttpEmbedder, SeveralThreadsEmbedAtOnce) {
  FakeServer server(OpenAiOk);
  const std::unique_ptr<Embedder> embedder = OpenAi(server, {{"batch", "2"}});
  std::vector<absl::StatusOr<std::vector<float>>> results(4);
  std::vector<std::vector<std::string>> texts(4);
  {
    std::vector<std::jthread> threads;
    for (size_t t = 0; t < results.size(); ++t) {
      texts[t] = {std::string(t + 1, 'x'), std::string(t + 5, 'y'), std::string(t + 9, 'z')};
      threads.emplace_back([&, t] { results[t] = embedder->Embed(texts[t], Role::kDocument); });
    }
  }
  for (size_t t = 0; t < results.size(); ++t) {
    ASSERT_OK(results[t]);
    ExpectVectorsFor(*results[t], texts[t]);
  }
  EXPECT_THAT(server.requests(), SizeIs(8));
}

// ---------------------------------------------------------------------------------------------
// Failures

TEST(HttpEmbedder, ServerThatNeverAnswersIsUnavailable) {
  FakeServer server([](int, const Request&) { return Reply{.hang = true}; });
  const std::unique_ptr<Embedder> embedder =
      OpenAi(server, {{"timeout_ms", "200"}, {"retries", "0"}});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr(server.Url("/v1/embeddings")), HasSubstr("timed out"))));
  // A sanity cap only: without timeout_ms the default would wait 10 s.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(HttpEmbedder, ConnectionRefusedIsUnavailableAfterEveryAttempt) {
  // A bound socket that does not listen: connecting to its port is refused, and no other
  // program can take the port while the socket holds it.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), size), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size), 0);
  const std::string url = absl::StrCat("http://127.0.0.1:", ntohs(address.sin_port), "/v1/e");

  const std::unique_ptr<Embedder> embedder =
      MakeOrDie(HttpApi::kOpenAi, {{"url", url}, {"model", "m"}, {"dim", "3"}, {"retries", "1"}});
  EXPECT_THAT(embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr(absl::StrCat("openai embedder at ", url)),
                             HasSubstr("after 2 attempts"), HasSubstr("refused"))));
  close(fd);
}

TEST(HttpEmbedder, RetriesAfterServerErrorThenSucceeds) {
  FakeServer server([](int index, const Request& request) {
    return Reply{index == 0 ? HttpReply(500, "model loading")
                            : HttpReply(200, OpenAiAnswer(request))};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server, {{"retries", "2"}});
  const std::vector<std::string> texts = {"again"};
  ASSERT_OK_AND_ASSIGN(const std::vector<float> vectors, embedder->Embed(texts, Role::kDocument));
  ExpectVectorsFor(vectors, texts);
  EXPECT_THAT(server.requests(), SizeIs(2));
}

TEST(HttpEmbedder, PersistentServerErrorIsUnavailableAfterAllAttempts) {
  FakeServer server([](int, const Request&) { return Reply{HttpReply(503, "overloaded")}; });
  const std::unique_ptr<Embedder> embedder = OpenAi(server, {{"retries", "2"}});
  EXPECT_THAT(embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr(server.Url("/v1/embeddings")), HasSubstr("after 3 attempts"),
                             HasSubstr("HTTP 503: overloaded"))));
  EXPECT_THAT(server.requests(), SizeIs(3));
}

TEST(HttpEmbedder, ClientErrorIsFailedPreconditionWithoutRetry) {
  FakeServer server([](int, const Request&) {
    return Reply{HttpReply(400, R"({"error": {"message": "model \"m\" not found"}})")};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server, {{"retries", "2"}});
  EXPECT_THAT(embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(server.Url("/v1/embeddings")), HasSubstr("HTTP 400"),
                             HasSubstr("not found"))));
  EXPECT_THAT(server.requests(), SizeIs(1));
}

TEST(HttpEmbedder, LongErrorBodyIsCut) {
  FakeServer server(
      [](int, const Request&) { return Reply{HttpReply(404, std::string(5000, 'e'))}; });
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  const absl::StatusOr<std::vector<float>> vectors =
      embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument);
  EXPECT_THAT(vectors, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("HTTP 404")));
  EXPECT_THAT(vectors, StatusIs(absl::StatusCode::kFailedPrecondition,
                                Not(HasSubstr(std::string(201, 'e')))));
}

TEST(HttpEmbedder, WrongDimensionIsFailedPreconditionNamingBoth) {
  FakeServer server([](int, const Request&) {
    return Reply{HttpReply(200, R"({"data": [{"index": 0, "embedding": [1, 2, 3, 4]}]})")};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  EXPECT_THAT(embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("model \"m\""), HasSubstr("dimension 4"),
                             HasSubstr("expected dim=3"))));
  EXPECT_THAT(server.requests(), SizeIs(1));
}

TEST(HttpEmbedder, MalformedOrMisshapenAnswersAreFailedPrecondition) {
  const std::vector<std::string> answers = {
      "not json",
      R"({"data": 3})",
      R"({"embeddings": [[1, 0, 0]]})",                         // Ollama's shape.
      R"({"data": []})",                                        // Too few.
      R"({"data": [{"index": 1, "embedding": [1, 0, 0]}]})",    // Index out of range.
      R"({"data": [{"index": 0, "embedding": [1, "x", 0]}]})",  // Not a number.
      R"({"data": [{"index": 0, "embedding": {"a": 1}}]})",     // Not an array.
  };
  for (const std::string& answer : answers) {
    FakeServer server([&](int, const Request&) { return Reply{HttpReply(200, answer)}; });
    const std::unique_ptr<Embedder> embedder = OpenAi(server);
    EXPECT_THAT(
        embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument),
        StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr(server.Url("/v1/embeddings"))))
        << answer;
  }
}

TEST(HttpEmbedder, NonHttpAnswerIsFailedPrecondition) {
  FakeServer server([](int, const Request&) { return Reply{"SSH-2.0-OpenSSH_9.2\r\n\r\n"}; });
  const std::unique_ptr<Embedder> embedder = OpenAi(server);
  EXPECT_THAT(embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("not answer in HTTP")));
}

TEST(HttpEmbedder, TruncatedAnswerIsUnavailable) {
  FakeServer server([](int, const Request&) {
    return Reply{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"data\": ["};
  });
  const std::unique_ptr<Embedder> embedder = OpenAi(server, {{"retries", "0"}});
  EXPECT_THAT(embedder->Embed(std::vector<std::string>{"a"}, Role::kDocument),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("10 of 100 body bytes")));
}

}  // namespace
}  // namespace strata::embed
