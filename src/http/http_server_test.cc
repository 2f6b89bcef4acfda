#include "http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

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
  // Joined before the server goes (a producer must not outlive the server's io_context).
  absl::Mutex mu;
  std::thread producer;
  auto server = HttpServer::Start({"127.0.0.1", 0, 2}, [&](HttpRequest request, HttpResponder responder) {
    if (request.path() != "/stream") {
      return std::move(responder).Send(HttpResponse{200, "text/plain", "plain", {}});
    }
    HttpStream stream = std::move(responder).StartStream(HttpResponse{200, "text/event-stream", "first;", {}});
    // Produce from another thread, as an engine would.
    absl::MutexLock lock(&mu);
    producer = std::thread([stream = std::move(stream)]() mutable {
      for (int i = 0; i < 3; ++i) stream.Write("data: " + std::to_string(i) + "\n\n");
      std::move(stream).Finish();
    });
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient client((*server)->port());
  client.Send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string reply = client.ReadUntil("0\r\n\r\n");
  EXPECT_THAT(reply, HasSubstr("Transfer-Encoding: chunked"));
  EXPECT_THAT(reply, HasSubstr("text/event-stream"));
  const size_t first = reply.find("first;"), zero = reply.find("data: 0"), two = reply.find("data: 2");
  EXPECT_NE(first, std::string::npos);
  EXPECT_NE(two, std::string::npos);
  EXPECT_LT(first, zero);
  EXPECT_LT(zero, two);
  // Keep-alive survives a streamed response.
  client.Send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(client.ReadUntil("plain"), HasSubstr("HTTP/1.1 200 OK"));
  {
    absl::MutexLock lock(&mu);
    if (producer.joinable()) producer.join();
  }
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
  std::vector<std::shared_ptr<const CancellationToken>> tokens;
  absl::Mutex mu;
  // Joined before the server goes: a responder thread must not drop the last reference
  // to a session after the server's io_context is gone (TSan: heap-use-after-free).
  std::vector<std::thread> responders;
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest, HttpResponder responder) {
    absl::MutexLock lock(&mu);
    tokens.push_back(responder.cancellation());
    responders.emplace_back([responder = std::move(responder)]() mutable {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the pipelined bytes arrive
      std::move(responder).Send(HttpResponse{200, "text/plain", "ok", {}});
    });
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string reply = client.ReadUntil("<never>");  // reads until the server closes
  size_t responses = 0;
  for (size_t at = reply.find("HTTP/1.1 200 OK"); at != std::string::npos;
       at = reply.find("HTTP/1.1 200 OK", at + 1)) {
    ++responses;
  }
  EXPECT_EQ(responses, 2u) << reply;
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(tokens.size(), 2u);
    if (!tokens.empty()) EXPECT_FALSE(tokens[0]->IsCancelled());
  }
  // Both requests were answered, so the handler has run for the last time.
  for (std::thread& t : responders) t.join();
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace infera
