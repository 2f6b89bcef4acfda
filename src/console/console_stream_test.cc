#include "console/console_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(ConsoleStreamTest, IntervalDefaultsAndBounds) {
  EXPECT_EQ(*ConsoleStream::ParseIntervalMs("/v2/console/stream"), 1000);
  EXPECT_EQ(*ConsoleStream::ParseIntervalMs("/v2/console/stream?"), 1000);
  EXPECT_EQ(*ConsoleStream::ParseIntervalMs("/v2/console/stream?interval_ms=250"), 250);
  EXPECT_EQ(*ConsoleStream::ParseIntervalMs("/v2/console/stream?interval_ms=10000"), 10000);
}

TEST(ConsoleStreamTest, BadIntervalsNameTheParameter) {
  for (const char* target :
       {"/s?interval_ms=249", "/s?interval_ms=10001", "/s?interval_ms=0", "/s?interval_ms=-5", "/s?interval_ms=abc",
        "/s?interval_ms=", "/s?interval_ms", "/s?interval_ms=1e3", "/s?interval_ms=99999999999999999999",
        "/s?interval_ms=500&interval_ms=600", "/s?interval_ms=500x"}) {
    absl::StatusOr<int> r = ConsoleStream::ParseIntervalMs(target);
    ASSERT_FALSE(r.ok()) << target;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("interval_ms"), std::string::npos) << target << ": " << r.status();
  }
  absl::StatusOr<int> unknown = ConsoleStream::ParseIntervalMs("/s?every=5");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("every"), std::string::npos);
}

TEST(ConsoleStreamTest, ShutdownWithoutSubscribersJoinsPromptlyAndIsIdempotent) {
  ConsoleStream::Options options;
  int reads = 0;
  options.read_models = [&reads] {
    ++reads;
    return std::vector<ConsoleModelReading>{};
  };
  ConsoleStream stream(options);
  EXPECT_EQ(stream.subscribers(), 0);
  stream.Shutdown();
  stream.Shutdown();
  EXPECT_EQ(stream.snapshots_rendered(), 0u);
  EXPECT_EQ(reads, 0);  // nobody subscribed: nothing read
}

}  // namespace
}  // namespace infera

namespace infera {
namespace {

// A blocking loopback client that sends one request and reads what comes back.
class StreamClient {
 public:
  StreamClient(uint16_t port, const std::string& target) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
    EXPECT_EQ(send(fd_, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  }
  ~StreamClient() { Close(); }
  // Reads until `count` occurrences of `what` (or the end / a 10 s silence).
  std::string ReadUntilCount(const std::string& what, int count) {
    char buf[4096];
    while (Count(what) < count) {
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      received_.append(buf, n);
    }
    return received_;
  }
  int Count(const std::string& what) const {
    int n = 0;
    for (size_t at = received_.find(what); at != std::string::npos; at = received_.find(what, at + 1)) ++n;
    return n;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  std::string received_;
};

struct Served {
  std::unique_ptr<ConsoleStream> stream;
  std::unique_ptr<HttpServer> server;
  std::atomic<int> reads{0};
};

void Serve(Served& s, int max_subscribers) {
  ConsoleStream::Options options;
  options.max_subscribers = max_subscribers;
  options.read_models = [&s] {
    s.reads.fetch_add(1);
    ConsoleModelReading m;
    m.name = "m";
    m.state = "READY";
    return std::vector<ConsoleModelReading>{m};
  };
  s.stream = std::make_unique<ConsoleStream>(std::move(options));
  HttpServer::Options http;
  http.address = "127.0.0.1";
  http.port = 0;
  ConsoleStream* stream = s.stream.get();
  auto server = HttpServer::Start(http, [stream](HttpRequest request, HttpResponder responder) {
    stream->Subscribe(request, std::move(responder));
  });
  ASSERT_TRUE(server.ok()) << server.status();
  s.server = std::move(*server);
}

TEST(ConsoleStreamTest, OneSnapshotPerTickIsSharedByAllSubscribers) {
  Served s;
  Serve(s, 8);
  std::vector<std::unique_ptr<StreamClient>> clients;
  for (int i = 0; i < 6; ++i) {
    clients.push_back(std::make_unique<StreamClient>(s.server->port(), "/v2/console/stream?interval_ms=250"));
  }
  for (auto& c : clients) {
    const std::string got = c->ReadUntilCount("event: stats", 3);
    ASSERT_GE(c->Count("event: stats"), 3) << got;
    EXPECT_NE(got.find("text/event-stream"), std::string::npos);
    EXPECT_NE(got.find("\"interval_ms\":250"), std::string::npos);
    EXPECT_NE(got.find("\"name\":\"m\""), std::string::npos);
  }
  // Each read feeds every subscriber: far fewer reads than events delivered (6 x >= 3).
  EXPECT_EQ(static_cast<uint64_t>(s.reads.load()), s.stream->snapshots_rendered());
  EXPECT_LT(s.reads.load(), 18);
  s.stream->Shutdown();
  for (auto& c : clients) {
    const std::string got = c->ReadUntilCount("0\r\n\r\n", 1);
    EXPECT_NE(got.find("event: end\ndata: {\"reason\":\"shutdown\"}"), std::string::npos);
    EXPECT_NE(got.find("0\r\n\r\n"), std::string::npos);  // the body's last chunk
  }
  s.server->Shutdown(std::chrono::seconds(5));
}

TEST(ConsoleStreamTest, BoundedSubscribersAndDisconnectsFreeSlots) {
  Served s;
  Serve(s, 2);
  auto a = std::make_unique<StreamClient>(s.server->port(), "/v2/console/stream?interval_ms=250");
  auto b = std::make_unique<StreamClient>(s.server->port(), "/v2/console/stream?interval_ms=250");
  a->ReadUntilCount("event: stats", 1);
  b->ReadUntilCount("event: stats", 1);
  ASSERT_EQ(s.stream->subscribers(), 2);
  {
    StreamClient refused(s.server->port(), "/v2/console/stream");
    const std::string got = refused.ReadUntilCount("too many", 1);
    EXPECT_NE(got.find("HTTP/1.1 503"), std::string::npos) << got;
    EXPECT_NE(got.find("Retry-After: 1"), std::string::npos) << got;
  }
  {
    StreamClient bad(s.server->port(), "/v2/console/stream?interval_ms=5");
    const std::string got = bad.ReadUntilCount("interval_ms", 1);
    EXPECT_NE(got.find("HTTP/1.1 400"), std::string::npos) << got;
  }
  a->Close();
  // The closed client is noticed (its connection's cancellation) and dropped.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (s.stream->subscribers() != 1 && std::chrono::steady_clock::now() < deadline) {
    b->ReadUntilCount("event: stats", b->Count("event: stats") + 1);  // one tick
  }
  EXPECT_EQ(s.stream->subscribers(), 1);
  StreamClient again(s.server->port(), "/v2/console/stream?interval_ms=250");
  EXPECT_NE(again.ReadUntilCount("event: stats", 1).find("HTTP/1.1 200"), std::string::npos);
  s.stream->Shutdown();
  s.server->Shutdown(std::chrono::seconds(5));
}

}  // namespace
}  // namespace infera
