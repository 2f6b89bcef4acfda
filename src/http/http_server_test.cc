// HttpServer over real sockets: streams, cancellation, HEAD, header bytes, write callbacks,
// pipelining. (Its limits: http_server_limits_test.cc.)
#include "http/http_server.h"

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/raw_test_client.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

// TLS whose files cannot be used: Start fails naming the file, before listening.
TEST(HttpServerTest, TlsWithAnUnreadableCertificateDoesNotStart) {
  HttpServer::Options options{"127.0.0.1", 0, 1};
  options.tls.cert_file = "/nonexistent/server.pem";
  options.tls.key_file = "/nonexistent/server.key";
  auto server = HttpServer::Start(options, [](HttpRequest, HttpResponder responder) {
    std::move(responder).Send(HttpResponse{200, "text/plain", "ok", {}});
  });
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), ::testing::HasSubstr("/nonexistent/server.pem"));
}

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

// A request that arrives with the connection (the client sends right after connecting)
// is read speculatively, before epoll reports the bytes; the readiness epoll then reports
// is stale. The disconnect watch must not take it for a closed connection: every such
// request, answered later from another thread as a queued model request is, gets its
// answer, not a cancellation (seen as 499s on fresh connections under load).
TEST(HttpServerTest, StaleReadinessOnAFreshConnectionDoesNotCancelTheRequest) {
  constexpr int kConnections = 300;
  absl::Mutex mu;
  std::vector<std::thread> workers;
  int cancelled = 0;
  auto server = HttpServer::Start({"127.0.0.1", 0, 2}, [&](HttpRequest, HttpResponder responder) {
    absl::MutexLock lock(&mu);
    workers.emplace_back([&, responder = std::move(responder)]() mutable {
      // Model work of ~2 ms; a cancellation ends it early, as the scheduler would.
      const auto token = responder.cancellation();
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      while (!token->IsCancelled() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      if (token->IsCancelled()) {
        absl::MutexLock lock(&mu);
        ++cancelled;
      }
      std::move(responder).Send(HttpResponse{token->IsCancelled() ? 499 : 200, "text/plain", "done", {}});
    });
  });
  ASSERT_TRUE(server.ok());
  for (int i = 0; i < kConnections; ++i) {
    RawClient client((*server)->port());
    client.Send("GET /work HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string reply = client.ReadUntil("done");
    ASSERT_THAT(reply, HasSubstr("HTTP/1.1 200")) << "connection " << i;
  }
  (*server)->Shutdown(std::chrono::milliseconds(1000));
  std::vector<std::thread> finished;
  {
    absl::MutexLock lock(&mu);
    finished.swap(workers);
  }
  for (std::thread& t : finished) t.join();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(cancelled, 0);
}

// The header block of the first response in `reply` (up to and including the blank line).
std::string HeaderBlock(const std::string& reply) {
  const size_t end = reply.find("\r\n\r\n");
  return end == std::string::npos ? reply : reply.substr(0, end + 4);
}

// RFC 9110 section 9.3.2: HEAD gets the headers a GET would (Content-Length of the GET's
// body), no body bytes, and the connection serves the next request.
// The hand-serialised header: status line, Content-Type, the route's headers (a later one
// of the same name replaces an earlier one), Connection: close only when closing,
// Content-Length; and the per-status response counts.
TEST(HttpServerTest, ResponseHeaderBytesAndResponseCounts) {
  auto server = HttpServer::Start({"127.0.0.1", 0, 2}, [](HttpRequest&& request, HttpResponder responder) {
    if (request.path() == "/missing") return std::move(responder).Send(HttpResponse{404, "application/json", "{}", {}});
    std::move(responder).Send(
        HttpResponse{200, "text/plain", "body", {{"X-A", "1"}, {"Retry-After", "1"}, {"x-a", "2"}}});
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient client((*server)->port());
  client.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(client.ReadUntil("body"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nRetry-After: 1\r\nx-a: 2\r\n"
            "Content-Length: 4\r\n\r\nbody");
  client.Send("GET /missing HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(client.ReadUntil("{}"),
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  // HTTP/1.0 without keep-alive: the answer says the connection closes, and it does.
  RawClient old_client((*server)->port());
  old_client.Send("GET /a HTTP/1.0\r\n\r\n");
  EXPECT_EQ(old_client.ReadUntil("\r\n\r\nbody\x01"),  // reads until the server closes
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nRetry-After: 1\r\nx-a: 2\r\n"
            "Connection: close\r\nContent-Length: 4\r\n\r\nbody");
  EXPECT_EQ((*server)->ResponseCounts(), (std::vector<std::pair<int, uint64_t>>{{200, 2}, {404, 1}}));
  EXPECT_EQ((*server)->InFlight(), 0);
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

TEST(HttpServerTest, HeadAnswersWithTheGetHeadersAndNoBodyThenKeepsServing) {
  const std::string asset(5000, '~');
  absl::Mutex mu;
  std::vector<std::string> methods;
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest request, HttpResponder responder) {
    {
      absl::MutexLock lock(&mu);
      methods.push_back(request.method);
    }
    if (request.path() == "/asset") {
      return std::move(responder).Send(HttpResponse{200, "text/css", asset, {{"ETag", "\"abc\""}}});
    }
    std::move(responder).Send(HttpResponse{200, "text/plain", "next", {}});
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient get_client((*server)->port());
  get_client.Send("GET /asset HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string get_reply = get_client.ReadUntil(asset);
  ASSERT_THAT(get_reply, HasSubstr(asset));

  RawClient client((*server)->port());
  // HEAD, then a GET on the same connection: the bytes after the HEAD answer's header
  // block must be the next answer, not a body.
  client.Send("HEAD /asset HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string reply = client.ReadUntil("\r\n\r\nnext");
  const std::string head = HeaderBlock(reply);
  EXPECT_EQ(head, HeaderBlock(get_reply));  // the same status line and headers
  EXPECT_THAT(head, HasSubstr("Content-Length: 5000\r\n"));
  EXPECT_THAT(head, HasSubstr("ETag: \"abc\"\r\n"));
  EXPECT_THAT(head, ::testing::Not(HasSubstr("Connection: close")));
  EXPECT_EQ(reply.substr(head.size(), 16), "HTTP/1.1 200 OK\r") << reply;
  EXPECT_EQ(reply.find('~'), std::string::npos) << "body bytes on the wire after HEAD";
  EXPECT_THAT(reply.substr(head.size()), HasSubstr("Content-Length: 4\r\n"));
  {
    absl::MutexLock lock(&mu);
    EXPECT_THAT(methods, ::testing::ElementsAre("GET", "GET", "GET"));  // routes see a GET
  }
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

// Errors and empty answers keep their own framing under HEAD (a 404's Content-Length is
// its error body's; a 204's is what a GET gets, 0).
TEST(HttpServerTest, HeadOfAnErrorCarriesTheErrorsLengthWithoutTheBody) {
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest request, HttpResponder responder) {
    if (request.path() == "/empty") return std::move(responder).Send(HttpResponse{204, "text/plain", "", {}});
    std::move(responder).Send(HttpResponse{404, "application/json", "{\"error\":\"no such thing\"}", {}});
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient client((*server)->port());
  client.Send("HEAD /missing HTTP/1.1\r\nHost: x\r\n\r\nHEAD /empty HTTP/1.1\r\nHost: x\r\n\r\n"
              "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string reply = client.ReadUntil("no such thing\"}");
  const std::string first = HeaderBlock(reply);
  EXPECT_EQ(first.rfind("HTTP/1.1 404", 0), 0u) << reply;
  EXPECT_THAT(first, HasSubstr("Content-Length: 25\r\n"));
  const std::string rest = reply.substr(first.size());
  const std::string second = HeaderBlock(rest);
  EXPECT_EQ(second.rfind("HTTP/1.1 204", 0), 0u) << reply;
  EXPECT_THAT(second, HasSubstr("Content-Length: 0\r\n"));
  // Only the GET's answer carries the error text.
  EXPECT_EQ(reply.find("no such thing"), reply.rfind("no such thing"));
  EXPECT_EQ(rest.substr(second.size()).rfind("HTTP/1.1 404", 0), 0u) << reply;
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

// A HEAD on a streamed answer: the stream's headers, no chunk, the producer cancelled
// and the connection closed.
TEST(HttpServerTest, HeadOnAStreamSendsItsHeadersCancelsTheProducerAndCloses) {
  absl::Mutex mu;
  std::thread producer;
  std::shared_ptr<const CancellationToken> token;
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest, HttpResponder responder) {
    absl::MutexLock lock(&mu);
    token = responder.cancellation();
    HttpStream stream = std::move(responder).StartStream(HttpResponse{200, "text/event-stream", "first;", {}});
    producer = std::thread([stream = std::move(stream)]() mutable {
      stream.Write("data: late\n\n");
      std::move(stream).Finish();
    });
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient client((*server)->port());
  client.Send("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string reply = client.ReadUntil("never appears: read until the server closes");
  EXPECT_EQ(reply, HeaderBlock(reply)) << "bytes after the header block";
  EXPECT_THAT(reply, HasSubstr("Content-Type: text/event-stream"));
  EXPECT_THAT(reply, HasSubstr("Transfer-Encoding: chunked"));
  EXPECT_THAT(reply, HasSubstr("Connection: close"));
  {
    absl::MutexLock lock(&mu);
    producer.join();
    ASSERT_NE(token, nullptr);
    EXPECT_TRUE(token->IsCancelled());
  }
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

// Send's write callback: once per response, after its last byte; `completed` tells a
// client that read it from one that had gone.
TEST(HttpServerTest, WriteCallbackReportsTheWriteAndWhetherTheClientWasThere) {
  absl::Notification written, got_slow, gone_reported;
  std::atomic<int> calls{0};
  std::atomic<bool> read_completed{false}, gone_completed{true};
  std::shared_ptr<const CancellationToken> slow_token;
  std::thread waiter;
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest request, HttpResponder responder) {
    if (request.path() == "/fast") {
      return std::move(responder).Send(HttpResponse{200, "text/plain", "hello", {}},
                                       [&](std::chrono::nanoseconds time, bool completed) {
                                         EXPECT_GE(time.count(), 0);
                                         read_completed = completed;
                                         ++calls;
                                         written.Notify();
                                       });
    }
    slow_token = responder.cancellation();
    got_slow.Notify();
    // Answer only after the client has gone.
    waiter = std::thread([&, responder = std::move(responder)]() mutable {
      while (!slow_token->IsCancelled()) std::this_thread::yield();
      std::move(responder).Send(HttpResponse{200, "text/plain", "late", {}},
                                [&](std::chrono::nanoseconds, bool completed) {
                                  gone_completed = completed;
                                  gone_reported.Notify();
                                });
    });
  });
  ASSERT_TRUE(server.ok());
  {
    RawClient client((*server)->port());
    client.Send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_THAT(client.ReadUntil("hello"), HasSubstr("hello"));
    ASSERT_TRUE(written.WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_TRUE(read_completed);
    EXPECT_EQ(calls, 1);
  }
  {
    RawClient client((*server)->port());
    client.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    got_slow.WaitForNotification();
  }  // client closes its socket before the answer
  EXPECT_TRUE(gone_reported.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(gone_completed);
  waiter.join();
  (*server)->Shutdown(std::chrono::milliseconds(1000));
  EXPECT_EQ(calls, 1);
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
