// A loading client of benchmark/nodes/run.py (--client native): one MCP session on a node over
// HTTP/1.1 keep-alive connections, posting the messages of a file one at a time, as run.py's
// RawClient does, at a fraction of a Python process's CPU (on this 2-vCPU machine the load
// generator takes from the nodes and the server it measures).
//
//   load_client PORT PROTOCOL FILE
//
// FILE holds one JSON-RPC message a line: `initialize`, `notifications/initialized`, then the
// tool calls. The session's id comes from the first answer, and every later request carries
// it and MCP-Protocol-Version: PROTOCOL. A tool call must be answered 200 with a result that
// is not a tool error. Prints the calls answered so far on stdout every kReportEvery and at
// the end; on the first failure, says why on stderr and exits 1.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace {

constexpr int kReportEvery = 100;

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "load_client: %s\n", why.c_str());
  std::exit(1);
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct Answer {
  int status = 0;
  std::string session_id;  // Mcp-Session-Id, when the answer has one.
  std::string body;
};

// HTTP/1.1 to 127.0.0.1:port: a request is `head`, its Content-Length and the body; an
// answer is read by its Content-Length. A connection the server closes (Connection: close,
// after its keep-alive count) is opened again for the next request.
class Connection {
 public:
  explicit Connection(int port) : port_(port) {}
  ~Connection() { Close(); }

  Answer Post(const std::string& head, std::string_view body) {
    if (fd_ < 0) Open();
    std::string request = head;
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    request += body;
    for (size_t sent = 0; sent < request.size();) {
      const ssize_t n = send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n < 0) Fail(std::string("send: ") + std::strerror(errno));
      sent += static_cast<size_t>(n);
    }
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) Receive();
    Answer answer;
    std::optional<size_t> length;
    bool close = false;
    std::string_view head_text(buffer_.data(), end);
    const size_t first_line = head_text.find("\r\n");
    const std::string_view status_line = head_text.substr(0, first_line);
    if (status_line.size() < 12) Fail("bad status line: " + std::string(status_line));
    answer.status = std::atoi(std::string(status_line.substr(9, 3)).c_str());
    head_text.remove_prefix(std::min(first_line + 2, head_text.size()));
    while (!head_text.empty()) {
      const size_t eol = std::min(head_text.find("\r\n"), head_text.size());
      const std::string_view line = head_text.substr(0, eol);
      head_text.remove_prefix(std::min(eol + 2, head_text.size()));
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string name = Lower(line.substr(0, colon));
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (name == "content-length") length = std::strtoull(std::string(value).c_str(), nullptr, 10);
      if (name == "mcp-session-id") answer.session_id = std::string(value);
      if (name == "connection" && Lower(value) == "close") close = true;
    }
    if (!length) Fail("HTTP " + std::to_string(answer.status) + " without Content-Length");
    buffer_.erase(0, end + 4);
    while (buffer_.size() < *length) Receive();
    answer.body = buffer_.substr(0, *length);
    buffer_.erase(0, *length);
    if (close) Close();
    return answer;
  }

 private:
  void Open() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) Fail(std::string("socket: ") + std::strerror(errno));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      Fail("connect to port " + std::to_string(port_) + ": " + std::strerror(errno));
    }
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    buffer_.clear();
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  void Receive() {
    char chunk[65536];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n < 0) Fail(std::string("recv: ") + std::strerror(errno));
    if (n == 0) Fail("the node closed the connection mid-answer");
    buffer_.append(chunk, static_cast<size_t>(n));
  }

  int port_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) Fail("usage: load_client PORT PROTOCOL FILE");
  const int port = std::atoi(argv[1]);
  const std::string protocol = argv[2];
  std::ifstream file(argv[3]);
  if (!file) Fail(std::string("cannot read ") + argv[3]);
  Connection connection(port);
  std::string head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                     "\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\n";
  std::string line;
  if (!std::getline(file, line)) Fail("no initialize message");
  const Answer initialized = connection.Post(head, line);
  if (initialized.status != 200 || initialized.session_id.empty()) {
    Fail("initialize: HTTP " + std::to_string(initialized.status) + ": " + initialized.body);
  }
  head += "Mcp-Session-Id: " + initialized.session_id + "\r\nMCP-Protocol-Version: " + protocol +
          "\r\n";
  if (!std::getline(file, line)) Fail("no initialized notification");
  if (const Answer a = connection.Post(head, line); a.status != 200 && a.status != 202) {
    Fail("notifications/initialized: HTTP " + std::to_string(a.status) + ": " + a.body);
  }
  long calls = 0;
  while (std::getline(file, line)) {
    const Answer a = connection.Post(head, line);
    // A result that is not a tool error (the node writes JSON without spaces).
    if (a.status != 200 || a.body.find("\"result\"") == std::string::npos ||
        a.body.find("\"isError\":false") == std::string::npos) {
      Fail("call " + std::to_string(calls + 1) + ": HTTP " + std::to_string(a.status) + ": " +
           a.body.substr(0, 300));
    }
    if (++calls % kReportEvery == 0) {
      std::printf("%ld\n", calls);
      std::fflush(stdout);
    }
  }
  std::printf("%ld\n", calls);
  return 0;
}
