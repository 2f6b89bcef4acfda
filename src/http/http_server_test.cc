#include "http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

// A blocking loopback client: connect, send, read until the server closes or `until`
// appears.
class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawClient() { Close(); }
  void Send(const std::string& data) { ASSERT_EQ(send(fd_, data.data(), data.size(), 0), static_cast<ssize_t>(data.size())); }
  std::string ReadUntil(const std::string& until) {
    std::string out;
    char buf[4096];
    while (out.find(until) == std::string::npos) {
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, n);
    }
    return out;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

TEST(HttpServerTest, StreamsChunksInOrderThenServesTheNextRequest) {
  auto server = HttpServer::Start({"127.0.0.1", 0, 2}, [](HttpRequest request, HttpResponder responder) {
    if (request.path() != "/stream") {
      return std::move(responder).Send(HttpResponse{200, "text/plain", "plain", {}});
    }
    HttpStream stream = std::move(responder).StartStream(HttpResponse{200, "text/event-stream", "first;", {}});
    // Produce from another thread, as an engine would.
    std::thread([stream = std::move(stream)]() mutable {
      for (int i = 0; i < 3; ++i) stream.Write("data: " + std::to_string(i) + "\n\n");
      std::move(stream).Finish();
    }).detach();
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient client((*server)->port());
  client.Send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string reply = client.ReadUntil("0\r\n\r\n");
  EXPECT_THAT(reply, HasSubstr("Transfer-Encoding: chunked"));
  EXPECT_THAT(reply, HasSubstr("text/event-stream"));
  const size_t first = reply.find("first;"), zero = reply.find("data: 0"), two = reply.find("data: 2");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(two, std::string::npos);
  EXPECT_LT(first, zero);
  EXPECT_LT(zero, two);
  // Keep-alive survives a streamed response.
  client.Send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(client.ReadUntil("plain"), HasSubstr("HTTP/1.1 200 OK"));
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

TEST(HttpServerTest, ClientDisconnectCancelsTheRequestToken) {
  absl::Notification got_request, cancelled;
  std::shared_ptr<const CancellationToken> token;
  std::thread waiter;
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest, HttpResponder responder) {
    token = responder.cancellation();
    got_request.Notify();
    // Hold the request (as a queued model request would) until the client is gone.
    waiter = std::thread([&, responder = std::move(responder)]() mutable {
      while (!token->IsCancelled()) std::this_thread::yield();
      cancelled.Notify();
      std::move(responder).Send(HttpResponse{499, "text/plain", "", {}});
    });
  });
  ASSERT_TRUE(server.ok());
  {
    RawClient client((*server)->port());
    client.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    got_request.WaitForNotification();
    EXPECT_FALSE(token->IsCancelled());
  }  // client closes its socket
  EXPECT_TRUE(cancelled.WaitForNotificationWithTimeout(absl::Seconds(10)));
  waiter.join();
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

TEST(HttpServerTest, PipelinedRequestDoesNotCancelTheCurrentOne) {
  // One I/O thread serves both connections, so it handles their readiness events in
  // the order the bytes arrived. Request /a is held (its disconnect watch armed, which
  // happens on that thread before it reads anything else); then the pipelined /b
  // arrives on the same connection, then /d on another. Once /d's handler runs, the
  // I/O thread has seen /b's bytes on /a's connection: an event to wait on instead of
  // a sleep. A watch that took pipelined bytes for a disconnect would have cancelled
  // /a's token by then.
  absl::Mutex mu;
  std::shared_ptr<const CancellationToken> a_token;
  std::optional<HttpResponder> a_responder;
  absl::Notification got_a, got_c, got_d;
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest request,
                                                          HttpResponder responder) {
    const std::string path(request.path());
    if (path == "/a") {
      absl::MutexLock lock(&mu);
      a_token = responder.cancellation();
      a_responder.emplace(std::move(responder));
      got_a.Notify();
      return;
    }
    std::move(responder).Send(HttpResponse{200, "text/plain", "ok", {}});
    if (path == "/c") got_c.Notify();
    if (path == "/d") got_d.Notify();
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  RawClient other((*server)->port());
  client.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(got_a.WaitForNotificationWithTimeout(absl::Seconds(10)));
  other.Send("GET /c HTTP/1.1\r\nHost: x\r\n\r\n");  // /a's Dispatch has returned
  ASSERT_TRUE(got_c.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_THAT(other.ReadUntil("ok"), HasSubstr("200 OK"));
  client.Send("GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  other.Send("GET /d HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(got_d.WaitForNotificationWithTimeout(absl::Seconds(10)));
  {
    absl::MutexLock lock(&mu);
    EXPECT_FALSE(a_token->IsCancelled());
    std::move(*a_responder).Send(HttpResponse{200, "text/plain", "ok", {}});
    a_responder.reset();
  }
  std::string reply = client.ReadUntil("<never>");  // reads until the server closes
  size_t responses = 0;
  for (size_t at = reply.find("HTTP/1.1 200 OK"); at != std::string::npos;
       at = reply.find("HTTP/1.1 200 OK", at + 1)) {
    ++responses;
  }
  EXPECT_EQ(responses, 2u) << reply;  // /a's answer, then /b's
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace infera
