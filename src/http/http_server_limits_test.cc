// HttpServer's limits over real sockets (issue 13): ambiguous framing, the write timeout,
// the server-wide bound on unread response bytes, the per-stream bound, and responses
// coalesced per I/O thread by a CompletionBatch. (The rest: http_server_test.cc.)
#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/completion_batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/http_server.h"
#include "http/raw_test_client.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

// Counts the number of HTTP status lines in `reply`.
size_t StatusLines(const std::string& reply) {
  size_t n = 0;
  for (size_t at = reply.find("HTTP/1.1 "); at != std::string::npos; at = reply.find("HTTP/1.1 ", at + 1)) ++n;
  return n;
}

// Issue 13 finding 11: a Transfer-Encoding Beast does not treat as chunked made the body
// the next pipelined request (request smuggling). Each ambiguous framing is answered 400
// naming the problem, the connection is closed, and the handler never sees the body.
TEST(HttpServerTest, AmbiguousFramingIsRejectedAndNothingIsSmuggled) {
  absl::Mutex mu;
  std::vector<std::string> paths;
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest request, HttpResponder responder) {
    {
      absl::MutexLock lock(&mu);
      paths.emplace_back(request.path());
    }
    std::move(responder).Send(HttpResponse{200, "text/plain", "ok", {}});
  });
  ASSERT_TRUE(server.ok());
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string chunked_body = "5\r\nhello\r\n0\r\n\r\n";
  struct Case {
    std::string headers;
    std::string body;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"Transfer-Encoding: chunked, identity\r\n", smuggled, "bad Transfer-Encoding 'chunked, identity'"},
      {"Transfer-Encoding: xchunked\r\n", smuggled, "bad Transfer-Encoding 'xchunked'"},
      {"Transfer-Encoding: identity\r\n", smuggled, "bad Transfer-Encoding 'identity'"},
      {"Transfer-Encoding: gzip, chunked\r\n", chunked_body + smuggled, "bad Transfer-Encoding"},
      {"Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", chunked_body + smuggled,
       "Transfer-Encoding"},
      {"Content-Length: 0\r\nTransfer-Encoding: chunked\r\n", chunked_body + smuggled, "Transfer-Encoding"},
      {"Transfer-Encoding: chunked\r\nContent-Length: 0\r\n", chunked_body + smuggled, "Content-Length"},
      {"Transfer-Encoding: identity\r\nContent-Length: 0\r\n", smuggled, "Content-Length and Transfer-Encoding"},
      {"Content-Length: 0\r\nContent-Length: 0\r\n", smuggled, "Content-Length"},
      {"Content-Length: 0, 0\r\n", smuggled, "Content-Length"},
      {"Content-Length: 0\r\nContent-Length: 37\r\n", smuggled, "Content-Length"},
  };
  for (const Case& c : cases) {
    RawClient client((*server)->port());
    client.Send("POST /front HTTP/1.1\r\nHost: x\r\n" + c.headers + "\r\n" + c.body);
    const std::string reply = client.ReadUntil("<never>");  // until the server closes
    EXPECT_EQ(reply.rfind("HTTP/1.1 400 Bad Request", 0), 0u) << c.headers << reply;
    EXPECT_THAT(reply, HasSubstr(c.needle)) << c.headers;
    EXPECT_THAT(reply, HasSubstr("Connection: close")) << c.headers;
    EXPECT_EQ(StatusLines(reply), 1u) << c.headers << reply;
  }
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(paths.empty()) << paths.size() << " requests reached the handler, first " << paths[0];
  }
  // A single "chunked" still works, and keep-alive with it.
  RawClient client((*server)->port());
  client.Send("POST /ok HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n" + chunked_body +
              "GET /next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusLines(client.ReadUntil("<never>")), 2u);
  absl::MutexLock lock(&mu);
  EXPECT_THAT(paths, ::testing::ElementsAre("/ok", "/next"));
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

// Waits (bounded) until `condition` holds; the server's counters move on its I/O thread.
template <typename F>
bool WaitFor(F condition, std::chrono::seconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// Issue 13 finding 8: a client that never reads its (large) response held the buffer
// for as long as it liked. A write without progress for write_timeout closes it.
TEST(HttpServerTest, WriteTimeoutClosesAClientThatDoesNotRead) {
  HttpServer::Options options{"127.0.0.1", 0, 1};
  // Long enough that a loaded machine pausing the steady reader below never trips it.
  options.write_timeout = std::chrono::milliseconds(2000);
  const std::string big(64 << 20, 'x');
  auto server = HttpServer::Start(options, [&](HttpRequest, HttpResponder responder) {
    std::move(responder).Send(HttpResponse{200, "application/octet-stream", big, {}});
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  // The response is accounted while it waits for the client...
  ASSERT_TRUE(WaitFor([&] { return (*server)->GetStats().buffered_response_bytes >= (32 << 20); }));
  // ...until the write timeout closes the connection and frees it.
  ASSERT_TRUE(WaitFor([&] { return (*server)->GetStats().write_timeouts == 1; }));
  EXPECT_TRUE(WaitFor([&] { return (*server)->GetStats().buffered_response_bytes == 0; }));
  EXPECT_TRUE(WaitFor([&] { return (*server)->InFlight() == 0; }));
  // A client that reads slowly but steadily is not cut off: progress re-arms the timer.
  RawClient reader((*server)->port());
  reader.Send("GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  size_t received = 0;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = recv(reader.fd(), buf, sizeof(buf), 0);
    if (n <= 0) break;
    received += static_cast<size_t>(n);
  }
  EXPECT_GT(received, big.size());
  EXPECT_EQ((*server)->GetStats().write_timeouts, 1u);
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

// Issue 13 finding 8: slow readers together may hold at most max_buffered_response_bytes;
// past it a large response is replaced by a 503 (freed at once), small ones still pass.
TEST(HttpServerTest, BufferedResponseBytesAreBoundedServerWide) {
  HttpServer::Options options{"127.0.0.1", 0, 1};
  options.max_buffered_response_bytes = 1 << 20;
  const std::string big(32 << 20, 'x');
  auto server = HttpServer::Start(options, [&](HttpRequest request, HttpResponder responder) {
    if (request.path() == "/small") return std::move(responder).Send(HttpResponse{200, "text/plain", "small", {}});
    std::move(responder).Send(HttpResponse{200, "application/octet-stream", big, {}});
  });
  ASSERT_TRUE(server.ok());
  RawClient slow((*server)->port());  // never reads
  slow.Send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(WaitFor([&] { return (*server)->GetStats().buffered_response_bytes >= (32 << 20); }));
  RawClient second((*server)->port());
  second.Send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string reply = second.ReadUntil("<never>");
  EXPECT_EQ(reply.rfind("HTTP/1.1 503", 0), 0u) << reply.substr(0, 200);
  EXPECT_THAT(reply, HasSubstr("--http-max-buffered-response-bytes"));
  EXPECT_EQ((*server)->GetStats().rejected_over_buffer_limit, 1u);
  RawClient third((*server)->port());
  third.Send("GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(third.ReadUntil("<never>"), HasSubstr("HTTP/1.1 200 OK"));
  // Once the slow client goes away its bytes are released and large responses pass again.
  slow.Close();
  ASSERT_TRUE(WaitFor([&] { return (*server)->GetStats().buffered_response_bytes == 0; }));
  RawClient fourth((*server)->port());
  fourth.Send("GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(fourth.ReadUntil("\r\n").rfind("HTTP/1.1 200 OK", 0), 0u);
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

// A streamed response whose client stops reading is cut off at max_stream_buffered_bytes
// and its producer sees client_gone().
TEST(HttpServerTest, StreamToAClientThatDoesNotReadIsCancelled) {
  HttpServer::Options options{"127.0.0.1", 0, 1};
  options.max_stream_buffered_bytes = 1 << 20;
  std::thread producer;
  absl::Notification gone;
  auto server = HttpServer::Start(options, [&](HttpRequest, HttpResponder responder) {
    HttpStream stream = std::move(responder).StartStream(HttpResponse{200, "text/event-stream", "", {}});
    producer = std::thread([&gone, stream = std::move(stream)]() mutable {
      const std::string chunk(64 << 10, 'y');
      // 1 GiB at most: far past what the socket buffers and the bound can hold.
      for (int i = 0; i < (1 << 14) && !stream.client_gone(); ++i) stream.Write(chunk);
      if (stream.client_gone()) gone.Notify();
      std::move(stream).Finish();
    });
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(gone.WaitForNotificationWithTimeout(absl::Seconds(60)));
  producer.join();
  EXPECT_GE((*server)->GetStats().rejected_over_buffer_limit, 1u);
  EXPECT_TRUE(WaitFor([&] { return (*server)->GetStats().buffered_response_bytes == 0; }));
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}


// A batch's responses sent from a worker thread with a CompletionBatch are held until
// the batch closes, then each I/O thread writes its share (one posted handler each):
// every client gets its own answer, and a client gone meanwhile disturbs no one.
TEST(HttpServerTest, ResponsesSentInACompletionBatchLeaveWhenItClosesEachToItsClient) {
  constexpr int kClients = 8;
  absl::Mutex mu;
  std::vector<std::pair<std::string, HttpResponder>> held;
  auto server = HttpServer::Start({"127.0.0.1", 0, 2}, [&](HttpRequest request, HttpResponder responder) {
    absl::MutexLock lock(&mu);
    held.emplace_back(request.target, std::move(responder));
  });
  ASSERT_TRUE(server.ok());
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int k = 0; k < kClients; ++k) {
    clients.push_back(std::make_unique<RawClient>((*server)->port()));
    clients.back()->Send("GET /c" + std::to_string(k) + " HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(+[](decltype(held)* h) { return h->size() == kClients; }, &held));
  }
  clients[3]->Close();  // gone before its answer
  std::thread worker([&] {
    absl::MutexLock lock(&mu);
    CompletionBatch batch;
    for (auto& [target, responder] : held) {
      std::move(responder).Send(HttpResponse{200, "text/plain", "answer to " + target, {}}, nullptr, &batch);
    }
    // Nothing was posted yet: every request is still in flight until the batch closes.
    EXPECT_EQ((*server)->InFlight(), kClients);
  });
  worker.join();
  for (int k = 0; k < kClients; ++k) {
    if (k == 3) continue;
    const std::string expected = "answer to /c" + std::to_string(k);
    EXPECT_THAT(clients[k]->ReadUntil(expected), HasSubstr(expected)) << k;
  }
  EXPECT_TRUE(WaitFor([&] { return (*server)->InFlight() == 0; }));
  (*server)->Shutdown(std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace infera
