// HttpInferClient against a scripted loopback server: keep-alive reuse, the retry of a
// request on a keep-alive connection the server had closed, timeouts, and status
// errors. Real sockets, one io_context run on the test's thread.
#include "tools/bench/http_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace infera::bench {
namespace {

constexpr char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// Accepts connections one after another; `serve(fd, request_index)` answers one request
// (returning false closes the connection). Requests are recognised by their blank line.
class ScriptedServer {
 public:
  using Serve = std::function<bool(int fd, int request_index)>;

  explicit ScriptedServer(Serve serve) : serve_(std::move(serve)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(listen_fd_, 16);
    thread_ = std::thread([this] { Run(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    thread_.join();
  }
  uint16_t port() const { return port_; }
  int connections() const { return connections_.load(); }

 private:
  void Run() {
    int index = 0;
    while (!stop_) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      ++connections_;
      std::string pending;
      char buffer[4096];
      bool open = true;
      while (open) {
        const ssize_t n = read(fd, buffer, sizeof(buffer));
        if (n <= 0) break;
        pending.append(buffer, static_cast<size_t>(n));
        size_t end;
        while (open && (end = pending.find("\r\n\r\n")) != std::string::npos) {
          pending.erase(0, end + 4);  // the test requests have no body
          open = serve_(fd, index++);
        }
      }
      close(fd);
    }
  }

  Serve serve_;
  int listen_fd_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

void Write(int fd, const std::string& s) { ASSERT_EQ(write(fd, s.data(), s.size()), static_cast<ssize_t>(s.size())); }

// Sends `n` requests one after another; returns their results.
std::vector<RequestResult> SendSequentially(uint16_t port, int n, int64_t timeout_ns = 5 * kNsPerSecond) {
  boost::asio::io_context io;
  SteadyClock clock;
  HttpClientOptions options;
  options.port = port;
  options.request_timeout_ns = timeout_ns;
  auto client = HttpInferClient::Create(io, clock, options, {{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", {}}});
  EXPECT_TRUE(client.ok());
  std::vector<RequestResult> results;
  std::function<void()> next = [&] {
    (*client)->Send(0, [&](RequestResult r) {
      results.push_back(std::move(r));
      if (static_cast<int>(results.size()) < n) next();
    });
  };
  next();
  io.run_for(std::chrono::seconds(10));
  return results;
}

TEST(HttpInferClientTest, ReusesTheKeepAliveConnection) {
  ScriptedServer server([](int fd, int) {
    Write(fd, kOk);
    return true;
  });
  const auto results = SendSequentially(server.port(), 5);
  ASSERT_EQ(results.size(), 5u);
  for (const auto& r : results) EXPECT_TRUE(r.ok) << r.error_kind << " " << r.error_detail;
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpInferClientTest, RetriesOnceWhenAnIdleConnectionWasClosed) {
  // The server answers each connection's first request and then closes it silently, as
  // an idle keep-alive timeout does: the next request must go out again, on a new one.
  ScriptedServer server([](int fd, int) {
    Write(fd, kOk);
    return false;
  });
  const auto results = SendSequentially(server.port(), 3);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) EXPECT_TRUE(r.ok) << r.error_kind << " " << r.error_detail;
  EXPECT_EQ(server.connections(), 3);
}

TEST(HttpInferClientTest, StatusAndConnectionCloseAreHonoured) {
  ScriptedServer server([](int fd, int index) {
    if (index == 0) {
      Write(fd, "HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 13\r\n\r\nqueue\nis full");
      return false;
    }
    Write(fd, kOk);
    return true;
  });
  const auto results = SendSequentially(server.port(), 2);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error_kind, "http 429");
  EXPECT_EQ(results[0].error_detail, "queue is full");  // newlines flattened
  EXPECT_TRUE(results[1].ok);
  EXPECT_EQ(server.connections(), 2);
}

TEST(HttpInferClientTest, TimesOutAndRecovers) {
  ScriptedServer server([](int fd, int index) {
    if (index == 0) return true;  // never answers the first request
    Write(fd, kOk);
    return true;
  });
  const auto results = SendSequentially(server.port(), 2, 200 * kNsPerMs);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error_kind, "timeout");
  EXPECT_TRUE(results[1].ok) << results[1].error_kind << " " << results[1].error_detail;
}

TEST(HttpInferClientTest, ConnectFailureIsReported) {
  uint16_t port;
  {
    ScriptedServer server([](int, int) { return false; });
    port = server.port();
  }  // closed: nothing listens there now
  const auto results = SendSequentially(port, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error_kind, "connect");
  EXPECT_EQ(results[0].sent_ns, 0);
}

TEST(HttpInferClientTest, MalformedResponseIsInvalid) {
  ScriptedServer server([](int fd, int) {
    Write(fd, "HTTP/1.1 abc\r\n\r\n");
    return false;
  });
  const auto results = SendSequentially(server.port(), 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error_kind, "invalid response");
}

}  // namespace
}  // namespace infera::bench
