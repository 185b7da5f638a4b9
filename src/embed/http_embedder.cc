#include "embed/http_embedder.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "util/json_text.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::embed {
namespace {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr int kMaxDim = 65536;
constexpr int kMaxBatch = 2048;
constexpr int kMaxTimeoutMs = 600000;
constexpr int kMaxRetries = 10;
constexpr size_t kMaxHeadBytes = 64 << 10;
// 2048 texts of 4096 numbers printed as JSON stay well below this.
constexpr size_t kMaxAnswerBytes = size_t{512} << 20;
constexpr size_t kReadChunkBytes = 64 << 10;
constexpr size_t kExcerptBytes = 200;

// Parses an integer in [min, max], written in `base`, with nothing around it.
template <typename Int>
std::optional<Int> ParseInt(std::string_view text, Int min, Int max, int base = 10) {
  Int value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value, base);
  if (text.empty() || error != std::errc() || stop != end || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

// At most kExcerptBytes of `text` on one line, cut on a UTF-8 boundary: enough of a server's
// error body to explain it without flooding a status message.
std::string Excerpt(std::string_view text) {
  size_t size = std::min(text.size(), kExcerptBytes);
  while (size > 0 && size < text.size() &&
         (static_cast<unsigned char>(text[size]) & 0xC0) == 0x80) {
    --size;
  }
  std::string excerpt(text.substr(0, size));
  for (char& c : excerpt) {
    if (c == '\r' || c == '\n' || c == '\t') c = ' ';
  }
  if (size < text.size()) excerpt += "...";
  return excerpt;
}

// strerror is not thread-safe; std::error_code's message is.
std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// ---------------------------------------------------------------------------------------------
// URLs

struct Url {
  std::string text;       // As given, for messages.
  std::string host;       // Without the brackets of an IPv6 literal, for getaddrinfo.
  std::string port;       // "80" when the url has none.
  std::string authority;  // host[:port] as written, for the Host header.
  std::string path;       // Starts with '/'.
};

absl::Status BadUrl(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("embedder option \"url\": ", ToAbsl(why), ", got \"", ToAbsl(text), "\""));
}

absl::StatusOr<Url> ParseUrl(std::string_view text) {
  constexpr std::string_view kScheme = "http://";
  if (absl::StartsWithIgnoreCase(ToAbsl(text), "https://")) {
    return BadUrl(text,
                  "https is not supported (no TLS: strata talks to model servers on this machine "
                  "or the local network); use http://, or a local TLS-terminating proxy");
  }
  if (!absl::StartsWithIgnoreCase(ToAbsl(text), ToAbsl(kScheme))) {
    return BadUrl(text, "expected http://host[:port]/path");
  }
  const std::string_view rest = text.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {  // An IPv6 literal: [::1]:8080.
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return BadUrl(text, "unclosed '[' in the host");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) return BadUrl(text, "junk after ']'");
    port = after.substr(std::min<size_t>(1, after.size()));
  } else if (const size_t colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (authority.find('@') != std::string_view::npos) {
    return BadUrl(text, "user info (user@host) is not supported");
  }
  if (host.empty()) return BadUrl(text, "no host");
  if (!port.empty() && !ParseInt<int>(port, 1, 65535)) {
    return BadUrl(text, "the port must be between 1 and 65535");
  }
  return Url{.text = std::string(text),
             .host = std::string(host),
             .port = port.empty() ? "80" : std::string(port),
             .authority = std::string(authority),
             .path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash))};
}

// ---------------------------------------------------------------------------------------------
// A minimal HTTP/1.1 client: one connection per request, non-blocking sockets, and one deadline
// for the whole exchange. Failures to reach or hear from the server are Unavailable; an answer
// that is not HTTP at all is FailedPrecondition (the url points at something else).

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

struct Deadline {
  SteadyClock::time_point at;
  int timeout_ms;  // What `at` was computed from, for messages.

  static Deadline In(int timeout_ms) {
    return {.at = SteadyClock::now() + std::chrono::milliseconds(timeout_ms),
            .timeout_ms = timeout_ms};
  }
  // Rounded up, so that a poll for the remaining time never wakes before the deadline.
  int RemainingMs() const {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(at - SteadyClock::now());
    return static_cast<int>(std::max<int64_t>(left.count(), 0));
  }
};

// Waits until `fd` is ready for `events` (or has an error, which the next call reports).
absl::Status WaitFor(int fd, short events, const Deadline& deadline, std::string_view doing) {
  for (;;) {
    const int remaining_ms = deadline.RemainingMs();
    if (remaining_ms == 0) {
      return absl::UnavailableError(absl::StrCat("timed out after ", deadline.timeout_ms,
                                                 " ms (timeout_ms) ", ToAbsl(doing)));
    }
    pollfd entry{.fd = fd, .events = events, .revents = 0};
    const int ready = poll(&entry, 1, remaining_ms);
    if (ready > 0) return absl::OkStatus();
    if (ready < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("poll: ", ErrnoText(errno)));
    }
  }
}

absl::StatusOr<Fd> ConnectTo(const addrinfo& address, const Url& url, const Deadline& deadline) {
  Fd fd(socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
               address.ai_protocol));
  if (fd.get() < 0) return absl::UnavailableError(absl::StrCat("socket: ", ErrnoText(errno)));
  if (connect(fd.get(), address.ai_addr, address.ai_addrlen) == 0) return fd;
  int error = errno;
  if (error == EINPROGRESS) {
    RETURN_IF_ERROR(WaitFor(fd.get(), POLLOUT, deadline, "connecting"));
    socklen_t size = sizeof error;
    if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
    if (error == 0) return fd;
  }
  return absl::UnavailableError(
      absl::StrCat("cannot connect to ", url.authority, ": ", ErrnoText(error)));
}

// Tries each address the host resolves to, as a browser would, until one accepts.
absl::StatusOr<Fd> Connect(const Url& url, const Deadline& deadline) {
  // No AI_ADDRCONFIG: it hides "localhost" on a machine whose only interface is loopback.
  const addrinfo hints{.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  addrinfo* found = nullptr;
  // getaddrinfo has no timeout; a numeric or /etc/hosts name answers at once.
  if (const int error = getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found);
      error != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve host \"", url.host, "\": ", gai_strerror(error)));
  }
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  absl::Status last = absl::UnavailableError(absl::StrCat("no address for ", url.host));
  for (const addrinfo* address = found; address != nullptr; address = address->ai_next) {
    absl::StatusOr<Fd> fd = ConnectTo(*address, url, deadline);
    if (fd.ok()) return fd;
    last = fd.status();
    if (deadline.RemainingMs() == 0) break;
  }
  return last;
}

absl::Status SendAll(int fd, std::string_view data, const Deadline& deadline) {
  while (!data.empty()) {
    RETURN_IF_ERROR(WaitFor(fd, POLLOUT, deadline, "sending the request"));
    // MSG_NOSIGNAL: a server that hangs up must give an error, not kill strata with SIGPIPE.
    const ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent >= 0) {
      data.remove_prefix(static_cast<size_t>(sent));
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      return absl::UnavailableError(absl::StrCat("sending the request: ", ErrnoText(errno)));
    }
  }
  return absl::OkStatus();
}

// Appends what the server sends next to `received`. Returns false once the server has closed.
absl::StatusOr<bool> ReadMore(int fd, std::string& received, const Deadline& deadline) {
  if (received.size() > kMaxAnswerBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("the answer is larger than ", kMaxAnswerBytes >> 20, " MiB"));
  }
  for (;;) {
    RETURN_IF_ERROR(WaitFor(fd, POLLIN, deadline, "waiting for the answer"));
    const size_t old_size = received.size();
    received.resize(old_size + kReadChunkBytes);
    const ssize_t got = recv(fd, received.data() + old_size, kReadChunkBytes, 0);
    const int error = errno;
    received.resize(old_size + static_cast<size_t>(std::max<ssize_t>(got, 0)));
    if (got > 0) return true;
    if (got == 0) return false;
    if (error != EINTR && error != EAGAIN && error != EWOULDBLOCK) {
      return absl::UnavailableError(absl::StrCat("receiving the answer: ", ErrnoText(error)));
    }
  }
}

absl::Status NotHttp(std::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat("the server did not answer in HTTP (is the url right?): ", ToAbsl(what)));
}

struct ResponseHead {
  int status = 0;
  std::optional<size_t> content_length;
  bool chunked = false;
};

// "HTTP/1.1 200 OK" -> 200.
absl::StatusOr<int> ParseStatusLine(absl::string_view line) {
  const std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(' ', 2));
  const std::optional<int> status =
      parts.size() >= 2 ? ParseInt<int>(ToStd(parts[1]), 100, 599) : std::nullopt;
  if (!absl::StartsWith(parts[0], "HTTP/") || !status) return NotHttp(Excerpt(ToStd(line)));
  return *status;
}

// Parses the status line and the headers that frame the body; `head` ends before the blank line.
absl::StatusOr<ResponseHead> ParseHead(std::string_view head) {
  const std::vector<absl::string_view> lines = absl::StrSplit(ToAbsl(head), "\r\n");
  ResponseHead parsed;
  ASSIGN_OR_RETURN(parsed.status, ParseStatusLine(lines[0]));
  for (const absl::string_view line : std::span(lines).subspan(1)) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) return NotHttp(Excerpt(ToStd(line)));
    const absl::string_view name = line.substr(0, colon);
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "Content-Length")) {
      parsed.content_length = ParseInt<size_t>(ToStd(value), 0, kMaxAnswerBytes);
      if (!parsed.content_length) return NotHttp(Excerpt(ToStd(line)));
    } else if (absl::EqualsIgnoreCase(name, "Transfer-Encoding")) {
      // "chunked" is always the last coding when present.
      parsed.chunked = absl::EndsWithIgnoreCase(value, "chunked");
    }
  }
  return parsed;
}

// Decodes a chunked body as it arrives. Each call resumes after the last whole chunk, so the
// work stays linear in the body size however the bytes are split across reads.
class ChunkedDecoder {
 public:
  // `body` is everything received after the headers so far. Returns true once the last chunk
  // and the trailers are in.
  absl::StatusOr<bool> Resume(std::string_view body) {
    for (;;) {
      const size_t line_end = body.find("\r\n", position_);
      if (line_end == std::string_view::npos) return false;
      const std::string_view line = body.substr(position_, line_end - position_);
      if (in_trailers_) {  // Trailer lines, ended by an empty one.
        position_ = line_end + 2;
        if (line.empty()) return true;
        continue;
      }
      // "1a;extension=value": the size is hexadecimal, extensions are ignored.
      const std::string_view size_text =
          ToStd(absl::StripAsciiWhitespace(ToAbsl(line.substr(0, line.find(';')))));
      const std::optional<size_t> size = ParseInt<size_t>(size_text, 0, kMaxAnswerBytes, 16);
      if (!size) return NotHttp(absl::StrCat("bad chunk size \"", Excerpt(line), "\""));
      const size_t data_start = line_end + 2;
      if (*size == 0) {
        position_ = data_start;
        in_trailers_ = true;
        continue;
      }
      if (body.size() < data_start + *size + 2) return false;
      if (body.substr(data_start + *size, 2) != "\r\n") return NotHttp("chunk without its CRLF");
      decoded_.append(body.substr(data_start, *size));
      position_ = data_start + *size + 2;
    }
  }
  std::string TakeDecoded() { return std::move(decoded_); }

 private:
  size_t position_ = 0;  // In `body`: the start of the next chunk's size line.
  bool in_trailers_ = false;
  std::string decoded_;
};

struct HttpResponse {
  int status = 0;
  std::string body;
};

// The body readers below take everything received so far (`received`, whose body starts at
// `body_start`) and read on until the body is complete.

absl::StatusOr<std::string> ReadChunkedBody(int fd, const Deadline& deadline, std::string& received,
                                            size_t body_start) {
  ChunkedDecoder decoder;
  for (;;) {
    ASSIGN_OR_RETURN(const bool done,
                     decoder.Resume(std::string_view(received).substr(body_start)));
    if (done) return decoder.TakeDecoded();
    ASSIGN_OR_RETURN(const bool more, ReadMore(fd, received, deadline));
    if (!more) return absl::UnavailableError("the server closed the connection mid-chunk");
  }
}

absl::StatusOr<std::string> ReadSizedBody(int fd, const Deadline& deadline, std::string& received,
                                          size_t body_start, size_t length) {
  while (received.size() - body_start < length) {
    ASSIGN_OR_RETURN(const bool more, ReadMore(fd, received, deadline));
    if (!more) {
      return absl::UnavailableError(absl::StrCat("the server closed the connection after ",
                                                 received.size() - body_start, " of ", length,
                                                 " body bytes"));
    }
  }
  return received.substr(body_start, length);
}

absl::StatusOr<std::string> ReadBodyUntilClose(int fd, const Deadline& deadline,
                                               std::string& received, size_t body_start) {
  for (;;) {
    ASSIGN_OR_RETURN(const bool more, ReadMore(fd, received, deadline));
    if (!more) return received.substr(body_start);
  }
}

absl::StatusOr<HttpResponse> ReadResponse(int fd, const Deadline& deadline) {
  std::string received;
  size_t head_end;
  while ((head_end = received.find("\r\n\r\n")) == std::string::npos) {
    if (received.size() > kMaxHeadBytes) return NotHttp("no end of headers in the first 64 KiB");
    ASSIGN_OR_RETURN(const bool more, ReadMore(fd, received, deadline));
    if (!more) {
      return absl::UnavailableError(received.empty()
                                        ? "the server closed the connection without answering"
                                        : "the server closed the connection inside the headers");
    }
  }
  ASSIGN_OR_RETURN(const ResponseHead head,
                   ParseHead(std::string_view(received).substr(0, head_end)));
  const size_t body_start = head_end + 4;
  HttpResponse response{.status = head.status};
  if (head.chunked) {
    ASSIGN_OR_RETURN(response.body, ReadChunkedBody(fd, deadline, received, body_start));
  } else if (head.content_length) {
    ASSIGN_OR_RETURN(response.body,
                     ReadSizedBody(fd, deadline, received, body_start, *head.content_length));
  } else {  // No framing: the body ends when the server closes the connection.
    ASSIGN_OR_RETURN(response.body, ReadBodyUntilClose(fd, deadline, received, body_start));
  }
  return response;
}

absl::StatusOr<HttpResponse> PostJson(const Url& url, std::string_view json_body, int timeout_ms) {
  const Deadline deadline = Deadline::In(timeout_ms);
  ASSIGN_OR_RETURN(const Fd fd, Connect(url, deadline));
  // Connection: close lets a server without Content-Length or chunking end the body by closing.
  const std::string request = absl::StrCat(
      "POST ", url.path, " HTTP/1.1\r\nHost: ", url.authority,
      "\r\nUser-Agent: strata\r\nContent-Type: application/json\r\nAccept: application/json"
      "\r\nContent-Length: ",
      json_body.size(), "\r\nConnection: close\r\n\r\n", ToAbsl(json_body));
  RETURN_IF_ERROR(SendAll(fd.get(), request, deadline));
  return ReadResponse(fd.get(), deadline);
}

// ---------------------------------------------------------------------------------------------
// The embedder

struct HttpConfig {
  HttpApi api = HttpApi::kOpenAi;
  Url url;
  std::string model;
  int dim = 0;
  int batch = 32;
  int timeout_ms = 10000;
  int retries = 2;
};

absl::StatusOr<int> ParseIntOption(std::string_view key, std::string_view value, int min, int max) {
  const std::optional<int> parsed = ParseInt<int>(value, min, max);
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat("embedder option \"", ToAbsl(key),
                                                   "\": must be an integer between ", min, " and ",
                                                   max, ", got \"", ToAbsl(value), "\""));
  }
  return *parsed;
}

absl::Status MissingOption(std::string_view key, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("embedder option \"", ToAbsl(key), "\": required (", ToAbsl(what), ")"));
}

absl::StatusOr<HttpConfig> ParseConfig(
    HttpApi api, const std::vector<std::pair<std::string, std::string>>& options) {
  HttpConfig config{.api = api};
  for (const auto& [key, value] : options) {
    if (key == "url") {
      ASSIGN_OR_RETURN(config.url, ParseUrl(value));
    } else if (key == "model") {
      config.model = value;
    } else if (key == "dim") {
      ASSIGN_OR_RETURN(config.dim, ParseIntOption(key, value, 1, kMaxDim));
    } else if (key == "batch") {
      ASSIGN_OR_RETURN(config.batch, ParseIntOption(key, value, 1, kMaxBatch));
    } else if (key == "timeout_ms") {
      ASSIGN_OR_RETURN(config.timeout_ms, ParseIntOption(key, value, 1, kMaxTimeoutMs));
    } else if (key == "retries") {
      ASSIGN_OR_RETURN(config.retries, ParseIntOption(key, value, 0, kMaxRetries));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("embedder option \"", key,
                       "\": unknown; expected url, model, dim, batch, timeout_ms or retries"));
    }
  }
  if (config.url.text.empty()) return MissingOption("url", "http://host[:port]/path");
  if (config.model.empty()) return MissingOption("model", "the model name the server knows");
  if (config.dim == 0) return MissingOption("dim", "the vector size the model returns");
  return config;
}

absl::Status WrongShape(std::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat("unexpected answer: ", ToAbsl(what)));
}

// OpenAI: {"data": [{"index": i, "embedding": [...]}, ...]}, in any order.
absl::StatusOr<std::vector<const json*>> OpenAiEmbeddings(const json& answer, size_t count) {
  const auto data = answer.find("data");
  if (data == answer.end() || !data->is_array()) return WrongShape("no \"data\" array");
  if (data->size() != count) {
    return WrongShape(absl::StrCat("asked for ", count, " embeddings, got ", data->size()));
  }
  std::vector<const json*> ordered(count, nullptr);
  for (const json& item : *data) {
    const auto index = item.find("index");
    const auto embedding = item.find("embedding");
    if (index == item.end() || !index->is_number_unsigned() || embedding == item.end()) {
      return WrongShape("a \"data\" item without \"index\" or \"embedding\"");
    }
    const uint64_t i = index->get<uint64_t>();
    if (i >= count || ordered[i] != nullptr) {
      return WrongShape(absl::StrCat("\"index\" ", i, " is out of range or repeated"));
    }
    ordered[i] = &*embedding;
  }
  return ordered;
}

// Ollama: {"embeddings": [[...], ...]}, in input order.
absl::StatusOr<std::vector<const json*>> OllamaEmbeddings(const json& answer, size_t count) {
  const auto embeddings = answer.find("embeddings");
  if (embeddings == answer.end() || !embeddings->is_array()) {
    return WrongShape("no \"embeddings\" array");
  }
  if (embeddings->size() != count) {
    return WrongShape(absl::StrCat("asked for ", count, " embeddings, got ", embeddings->size()));
  }
  std::vector<const json*> ordered;
  for (const json& embedding : *embeddings) ordered.push_back(&embedding);
  return ordered;
}

// Appends `embedding` scaled to unit length (the zero vector stays zero).
absl::Status AppendUnitVector(const json& embedding, const HttpConfig& config,
                              std::vector<float>& out) {
  if (!embedding.is_array()) return WrongShape("an embedding that is not an array");
  if (embedding.size() != static_cast<size_t>(config.dim)) {
    return absl::FailedPreconditionError(
        absl::StrCat("model \"", config.model, "\" returned vectors of dimension ",
                     embedding.size(), ", expected dim=", config.dim));
  }
  double sum_of_squares = 0;
  for (const json& x : embedding) {
    if (!x.is_number()) return WrongShape("an embedding holding a non-number");
    sum_of_squares += x.get<double>() * x.get<double>();
  }
  if (!std::isfinite(sum_of_squares)) return WrongShape("an embedding with a huge value");
  const double scale = sum_of_squares > 0 ? 1 / std::sqrt(sum_of_squares) : 0;
  for (const json& x : embedding) out.push_back(static_cast<float>(x.get<double>() * scale));
  return absl::OkStatus();
}

// The concatenated unit vectors in an answer to a request for `count` texts.
absl::StatusOr<std::vector<float>> ParseAnswer(std::string_view body, size_t count,
                                               const HttpConfig& config) {
  const json answer = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded()) {
    return absl::FailedPreconditionError(absl::StrCat("the answer is not JSON: ", Excerpt(body)));
  }
  ASSIGN_OR_RETURN(const std::vector<const json*> embeddings,
                   config.api == HttpApi::kOpenAi ? OpenAiEmbeddings(answer, count)
                                                  : OllamaEmbeddings(answer, count));
  std::vector<float> vectors;
  vectors.reserve(count * static_cast<size_t>(config.dim));
  for (const json* embedding : embeddings) {
    RETURN_IF_ERROR(AppendUnitVector(*embedding, config, vectors));
  }
  return vectors;
}

// 5xx may pass (a model still loading, an overloaded server); 4xx needs a configuration change.
absl::Status CheckHttpStatus(const HttpResponse& response) {
  if (response.status >= 200 && response.status < 300) return absl::OkStatus();
  const std::string what = absl::StrCat("HTTP ", response.status, ": ", Excerpt(response.body));
  if (response.status >= 500) return absl::UnavailableError(what);
  return absl::FailedPreconditionError(what);
}

// Both APIs take the same request: {"model": m, "input": [texts...]}.
std::string RequestBody(const std::string& model, std::span<const std::string> texts,
                        std::span<const size_t> indices) {
  json input = json::array();
  for (const size_t i : indices) input.push_back(texts[i]);
  const json request = {{"model", model}, {"input", std::move(input)}};
  // Invalid UTF-8 becomes U+FFFD instead of an exception: a stray byte is no reason to fail.
  return JsonText(request);
}

bool IsBlank(const std::string& text) { return absl::StripAsciiWhitespace(text).empty(); }

// 100 ms, 200 ms, 400 ms, 800 ms, then 1.6 s for every later retry.
std::chrono::milliseconds Backoff(int failed_attempts) {
  return std::chrono::milliseconds(100 << std::min(failed_attempts - 1, 4));
}

class HttpEmbedder final : public Embedder {
 public:
  explicit HttpEmbedder(HttpConfig config)
      : config_(std::move(config)),
        info_{.name = config_.api == HttpApi::kOpenAi ? "openai" : "ollama",
              .version = "1",
              .dimension = config_.dim,
              .options = absl::StrCat("dim=", config_.dim, ",model=", config_.model)} {}

  const EmbedderInfo& info() const override { return info_; }
  int batch_size() const override { return config_.batch; }

  // Both roles alike: a model's prefixes are put on by WithRolePrefixes (registry.cc).
  absl::StatusOr<std::vector<float>> Embed(std::span<const std::string> texts, Role) override {
    const size_t dim = static_cast<size_t>(config_.dim);
    std::vector<float> vectors(texts.size() * dim, 0.0f);
    // Blank texts keep the zero vector: OpenAI answers 400 to an empty input.
    std::vector<size_t> to_embed;
    for (size_t i = 0; i < texts.size(); ++i) {
      if (!IsBlank(texts[i])) to_embed.push_back(i);
    }
    const size_t batch = static_cast<size_t>(config_.batch);
    for (size_t start = 0; start < to_embed.size(); start += batch) {
      const std::span<const size_t> indices =
          std::span(to_embed).subspan(start, std::min(batch, to_embed.size() - start));
      ASSIGN_OR_RETURN(const std::vector<float> batch_vectors, EmbedBatch(texts, indices));
      for (size_t j = 0; j < indices.size(); ++j) {
        std::copy_n(batch_vectors.begin() + j * dim, dim, vectors.begin() + indices[j] * dim);
      }
    }
    return vectors;
  }

 private:
  // The unit vectors of texts[indices...], retrying Unavailable failures with backoff.
  absl::StatusOr<std::vector<float>> EmbedBatch(std::span<const std::string> texts,
                                                std::span<const size_t> indices) const {
    const std::string request = RequestBody(config_.model, texts, indices);
    const int attempts = 1 + config_.retries;
    for (int attempt = 1;; ++attempt) {
      absl::StatusOr<std::vector<float>> vectors = Attempt(request, indices.size());
      if (vectors.ok()) return vectors;
      if (!absl::IsUnavailable(vectors.status())) return WithContext(vectors.status());
      if (attempt == attempts) {
        return WithContext(absl::UnavailableError(
            absl::StrCat("unavailable after ", attempts, attempts == 1 ? " attempt" : " attempts",
                         "; last: ", vectors.status().message())));
      }
      std::this_thread::sleep_for(Backoff(attempt));
    }
  }

  absl::StatusOr<std::vector<float>> Attempt(std::string_view request, size_t count) const {
    ASSIGN_OR_RETURN(const HttpResponse response,
                     PostJson(config_.url, request, config_.timeout_ms));
    RETURN_IF_ERROR(CheckHttpStatus(response));
    return ParseAnswer(response.body, count, config_);
  }

  // Names the embedder and its url, so that a message read in `stats` says which server failed.
  absl::Status WithContext(const absl::Status& status) const {
    return absl::Status(status.code(), absl::StrCat(info_.name, " embedder at ", config_.url.text,
                                                    ": ", status.message()));
  }

  const HttpConfig config_;
  const EmbedderInfo info_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Embedder>> MakeHttpEmbedder(
    HttpApi api, const std::vector<std::pair<std::string, std::string>>& options) {
  ASSIGN_OR_RETURN(HttpConfig config, ParseConfig(api, options));
  return std::make_unique<HttpEmbedder>(std::move(config));
}

}  // namespace strata::embed
