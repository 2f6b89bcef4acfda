#include "tools/bench/simple_http.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/str_cat.h"
#include "tools/bench/http_response_parser.h"

namespace infera::bench {
namespace {

// Closes the descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Waits until `fd` is ready for `events` or the deadline passes.
bool WaitFor(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

}  // namespace

absl::StatusOr<HttpReply> SimpleHttpGet(const std::string& host, uint16_t port, const std::string& path,
                                        int timeout_ms) {
  return SimpleHttpRequest("GET", host, port, path, "", {}, timeout_ms);
}

absl::StatusOr<HttpReply> SimpleHttpRequest(const std::string& method, const std::string& host, uint16_t port,
                                            const std::string& path, const std::string& body,
                                            const std::vector<std::pair<std::string, std::string>>& headers,
                                            int timeout_ms) {
  const std::string where = StrCat(host, ":", port, path);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return absl::UnavailableError(StrCat(method, " ", where, ": ", gai_strerror(rc)));
  }
  Fd sock;
  sock.fd = socket(found->ai_family, found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int rc = sock.fd < 0 ? -1 : connect(sock.fd, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  if (rc < 0 && errno == EINPROGRESS) {
    int error = ETIMEDOUT;
    socklen_t len = sizeof(error);
    if (WaitFor(sock.fd, POLLOUT, deadline)) getsockopt(sock.fd, SOL_SOCKET, SO_ERROR, &error, &len);
    errno = error;
    rc = error == 0 ? 0 : -1;
  }
  if (rc < 0) return absl::UnavailableError(StrCat(method, " ", where, ": connect: ", std::strerror(errno)));

  std::string request = StrCat(method, " ", path, " HTTP/1.1\r\nHost: ", host, ":", port,
                               "\r\nConnection: close\r\nContent-Length: ", body.size(), "\r\n");
  for (const auto& [name, value] : headers) request += StrCat(name, ": ", value, "\r\n");
  request += "\r\n";
  request += body;
  size_t written = 0;
  while (written < request.size()) {
    const ssize_t n = send(sock.fd, request.data() + written, request.size() - written, MSG_NOSIGNAL);
    if (n > 0) {
      written += static_cast<size_t>(n);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return absl::UnavailableError(StrCat(method, " ", where, ": send: ", std::strerror(errno)));
    } else if (!WaitFor(sock.fd, POLLOUT, deadline)) {
      return absl::UnavailableError(StrCat(method, " ", where, ": timed out"));
    }
  }
  HttpResponseParser parser(/*keep_body=*/true);
  char buffer[16384];
  while (parser.state() == HttpResponseParser::State::kNeedMore) {
    const ssize_t n = recv(sock.fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      size_t used = 0;
      parser.Feed(buffer, static_cast<size_t>(n), &used);
    } else if (n == 0) {
      parser.FeedEof();
    } else if (errno != EAGAIN && errno != EINTR) {
      return absl::UnavailableError(StrCat(method, " ", where, ": recv: ", std::strerror(errno)));
    } else if (!WaitFor(sock.fd, POLLIN, deadline)) {
      return absl::UnavailableError(StrCat(method, " ", where, ": timed out"));
    }
  }
  if (parser.state() == HttpResponseParser::State::kError) {
    return absl::InvalidArgumentError(StrCat(method, " ", where, ": ", parser.error()));
  }
  return HttpReply{parser.head().status, parser.body()};
}

}  // namespace infera::bench
