// Session behaviour over real sockets that http_server_test does not cover: the drain
// (issue 26, item 8) and obs-fold refusal (item 9).
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/http_server.h"
#include "http/raw_test_client.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Waits (bounded, 5 s) until `condition` holds; the server's counters move on its I/O thread.
template <typename F>
bool WaitFor(F condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A request whose body has not fully arrived, and an idle keep-alive connection, are not
// in flight: a drain closes them at once (without an answer) instead of waiting its whole
// grace for them. A request handed to the handler is still answered (and its connection
// then closed), and the drain ends as soon as it is.
TEST(SessionTest, DrainClosesConnectionsReadingARequestAndFinishesTheOneInFlight) {
  absl::Mutex mu;
  std::optional<HttpResponder> held;
  absl::Notification dispatched;
  std::atomic<int> uploads{0};
  HttpServer::Options options{"127.0.0.1", 0, 2};
  options.read_timeout = std::chrono::seconds(60);
  auto server = HttpServer::Start(options, [&](HttpRequest&& request, HttpResponder responder) {
    if (request.path() == "/held") {
      absl::MutexLock lock(&mu);
      held.emplace(std::move(responder));
      dispatched.Notify();
      return;
    }
    if (request.path() == "/upload") uploads.fetch_add(1);
    std::move(responder).Send(HttpResponse{200, "text/plain", "ok", {}});
  });
  ASSERT_TRUE(server.ok()) << server.status();
  const uint16_t port = (*server)->port();

  RawClient in_flight(port);
  in_flight.Send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n");
  dispatched.WaitForNotification();
  // The server has read this header once it says "100 Continue"; 10 of 100 body bytes follow.
  RawClient slow_body(port);
  slow_body.Send("POST /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n");
  ASSERT_THAT(slow_body.ReadUntil("\r\n\r\n"), StartsWith("HTTP/1.1 100 Continue"));
  slow_body.Send("0123456789");
  RawClient idle(port);
  idle.Send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_THAT(idle.ReadUntil("ok"), HasSubstr("\r\n\r\nok"));
  // Only the request handed to the handler is in flight (the idle one's answer is
  // uncounted once its write completes, on the server's thread).
  EXPECT_TRUE(WaitFor([&] { return (*server)->InFlight() == 1; }));

  const auto grace = std::chrono::seconds(20);
  std::chrono::steady_clock::duration drain_took{};
  std::thread drain([&] {
    const auto started = std::chrono::steady_clock::now();
    (*server)->Shutdown(grace);
    drain_took = std::chrono::steady_clock::now() - started;
  });
  EXPECT_TRUE(slow_body.ClosedByServer());
  EXPECT_TRUE(idle.ClosedByServer());
  {
    absl::MutexLock lock(&mu);
    std::move(*held).Send(HttpResponse{200, "text/plain", "late", {}});
    held.reset();
  }
  const std::string answer = in_flight.ReadUntil("late");
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(answer, HasSubstr("\r\n\r\nlate"));
  EXPECT_TRUE(in_flight.ClosedByServer());
  drain.join();
  EXPECT_LT(drain_took, grace / 4);
  EXPECT_EQ(uploads.load(), 0);
}

// Once the drain has begun no further request is read: a request pipelined behind the
// one in flight gets no answer; the answer in flight closes the connection.
TEST(SessionTest, NoRequestIsReadOnceTheDrainHasBegun) {
  absl::Mutex mu;
  std::optional<HttpResponder> held;
  absl::Notification dispatched;
  std::atomic<int> handled{0};
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest&& request, HttpResponder responder) {
    handled.fetch_add(1);
    if (request.path() == "/held") {
      absl::MutexLock lock(&mu);
      held.emplace(std::move(responder));
      dispatched.Notify();
      return;
    }
    std::move(responder).Send(HttpResponse{200, "text/plain", "ok", {}});
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient client((*server)->port());
  client.Send("GET /held HTTP/1.1\r\nHost: x\r\n\r\nGET /pipelined HTTP/1.1\r\nHost: x\r\n\r\n");
  dispatched.WaitForNotification();
  RawClient idle((*server)->port());
  std::thread drain([&] { (*server)->Shutdown(std::chrono::seconds(20)); });
  EXPECT_TRUE(idle.ClosedByServer());  // the drain has begun
  {
    absl::MutexLock lock(&mu);
    std::move(*held).Send(HttpResponse{200, "text/plain", "late", {}});
    held.reset();
  }
  const std::string reply = client.ReadUntil("<never>");  // until the server closes
  EXPECT_THAT(reply, HasSubstr("Connection: close\r\n"));
  EXPECT_EQ(reply.find("HTTP/1.1", 1), std::string::npos) << "a second answer: " << reply;
  drain.join();
  EXPECT_EQ(handled.load(), 1);
}

// RFC 9112 section 5.2: obs-fold is refused with a 400 naming it, header or trailer; the
// handler never sees the request and the connection closes.
TEST(SessionTest, ObsFoldIsRefusedAndTheHandlerNeverSeesTheRequest) {
  std::atomic<int> handled{0};
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest&&, HttpResponder responder) {
    handled.fetch_add(1);
    std::move(responder).Send(HttpResponse{200, "text/plain", "ok", {}});
  });
  ASSERT_TRUE(server.ok()) << server.status();
  for (const std::string& request :
       {std::string("GET /a HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n"),
        std::string("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "2\r\nok\r\n0\r\nX-Folded: a\r\n\tb\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n")}) {
    RawClient client((*server)->port());
    client.Send(request);
    const std::string reply = client.ReadUntil("<never>");  // until the server closes
    EXPECT_THAT(reply, StartsWith("HTTP/1.1 400 Bad Request\r\n")) << request;
    EXPECT_THAT(reply, HasSubstr("Connection: close\r\n"));
    EXPECT_THAT(reply, HasSubstr("header field 'X-Folded' is folded"));
    EXPECT_EQ(reply.find("HTTP/1.1", 1), std::string::npos) << "a second answer: " << reply;
  }
  EXPECT_EQ(handled.load(), 0);
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace infera
