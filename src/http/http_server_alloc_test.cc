// Heap allocations per request on the HTTP hot path, counted (issue 18, item 2).
//
// This binary replaces the global operator new / delete with counting wrappers, serves
// keep-alive requests over a real loopback socket (a client with fixed buffers that
// allocates nothing itself) and asserts how many allocations each request costs in
// steady state, across every thread of the process:
//   - the HTTP layer alone (HttpServer, a handler that answers from the request it reads
//     in place, using the connection's recycled body buffer): none;
//   - the whole KServe infer path (HttpServer + KServeRoutes + ModelManager + the add_sub
//     backend, JSON tensors in and out): a fixed budget, each remaining allocation named
//     below.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backend/builtin/builtin_backends.h"
#include "gtest/gtest.h"
#include "http/http_server.h"
#include "http/kserve_routes.h"
#include "http/route_table.h"
#include "manager/test_model_repository.h"

namespace {
std::atomic<uint64_t> g_allocations{0};

void* Allocate(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* AllocateAligned(size_t n, std::align_val_t align) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const size_t a = static_cast<size_t>(align);
  if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) { return Allocate(n); }
void* operator new[](size_t n) { return Allocate(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new(size_t n, std::align_val_t a) { return AllocateAligned(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return AllocateAligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace infera {
namespace {

// A blocking keep-alive HTTP/1.1 client over one socket that allocates nothing: fixed
// buffers, no std::string.
class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~RawClient() { ::close(fd_); }
  bool connected() const { return connected_; }

  // Sends `request` and reads one response; returns its status (-1 on a socket or
  // framing error). The body is left in body() / body_size().
  int RoundTrip(const char* request, size_t size) {
    for (size_t sent = 0; sent < size;) {
      const ssize_t n = ::send(fd_, request + sent, size - sent, MSG_NOSIGNAL);
      if (n <= 0) return -1;
      sent += static_cast<size_t>(n);
    }
    size_t have = 0;
    const char* header_end = nullptr;
    while (header_end == nullptr) {
      if (have == sizeof(buffer_)) return -1;
      const ssize_t n = ::recv(fd_, buffer_ + have, sizeof(buffer_) - have, 0);
      if (n <= 0) return -1;
      have += static_cast<size_t>(n);
      header_end = static_cast<const char*>(memmem(buffer_, have, "\r\n\r\n", 4));
    }
    const size_t header_size = static_cast<size_t>(header_end - buffer_) + 4;
    const char* length = static_cast<const char*>(memmem(buffer_, header_size, "Content-Length: ", 16));
    if (length == nullptr) return -1;
    const size_t content_length = std::strtoul(length + 16, nullptr, 10);
    if (header_size + content_length > sizeof(buffer_)) return -1;
    while (have < header_size + content_length) {
      const ssize_t n = ::recv(fd_, buffer_ + have, sizeof(buffer_) - have, 0);
      if (n <= 0) return -1;
      have += static_cast<size_t>(n);
    }
    body_ = buffer_ + header_size;
    body_size_ = content_length;
    return std::atoi(buffer_ + 9);  // "HTTP/1.1 200 ..."
  }
  const char* body() const { return body_; }
  size_t body_size() const { return body_size_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  char buffer_[16384];
  const char* body_ = nullptr;
  size_t body_size_ = 0;
};

// Runs `warmup` then `measured` round trips of `request`; returns allocations per
// measured request (every thread), or a negative value when a request failed.
double AllocationsPerRequest(RawClient& client, const char* request, int warmup, int measured) {
  const size_t size = std::strlen(request);
  for (int i = 0; i < warmup; ++i) {
    if (client.RoundTrip(request, size) != 200) return -1;
  }
  const uint64_t before = g_allocations.load();
  for (int i = 0; i < measured; ++i) {
    if (client.RoundTrip(request, size) != 200) return -1;
  }
  return static_cast<double>(g_allocations.load() - before) / measured;
}

constexpr char kEchoRequest[] =
    "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: alloc-test/1.0\r\n"
    "Content-Type: application/json\r\nAccept: */*\r\nContent-Length: 26\r\n\r\n"
    "{\"inputs\":[1,2,3,4,5,6,7]}";

TEST(HttpServerAllocationTest, HttpLayerAllocatesNothingPerRequestInSteadyState) {
  // The handler reads the request in place and builds its answer in the connection's
  // recycled body buffer; "text/plain" fits std::string's inline storage (a content type
  // of 16 bytes or more, such as "application/json", is one allocation of the route's).
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [](HttpRequest&& request, HttpResponder responder) {
    std::string body = responder.TakeBodyBuffer();
    body.append(request.method).append(" ").append(request.target).append(" ");
    body.append(request.body);
    if (auto agent = request.Header("user-agent")) body.append(*agent);
    // (A default-constructed HttpResponse's "application/json" would itself allocate.)
    std::move(responder).Send(HttpResponse{200, "text/plain", std::move(body), {}});
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient client((*server)->port());
  ASSERT_TRUE(client.connected());
  const double per_request = AllocationsPerRequest(client, kEchoRequest, 200, 2000);
  ASSERT_GE(per_request, 0) << "a request failed";
  EXPECT_EQ(std::string(client.body(), client.body_size()),
            "POST /echo {\"inputs\":[1,2,3,4,5,6,7]}alloc-test/1.0");
  std::printf("HTTP layer: %.3f allocations per request\n", per_request);
  EXPECT_EQ(per_request, 0.0);
  (*server)->Shutdown(std::chrono::seconds(1));
}

constexpr char kSimple[] = R"pb(
  name: "simple" backend: "add_sub" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
)pb";

// Allocations per `simple` request on the whole infer path (see the test): exactly this
// many; one more fails the test.
constexpr double kInferAllocations = 14;

constexpr char kInferRequest[] =
    "POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Content-Length: 204\r\n\r\n"
    "{\"inputs\":[{\"name\":\"INPUT0\",\"shape\":[1,16],\"datatype\":\"INT32\","
    "\"data\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},{\"name\":\"INPUT1\",\"shape\":[1,16],"
    "\"datatype\":\"INT32\",\"data\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}";

TEST(HttpServerAllocationTest, KServeInferPathAllocationsPerRequest) {
  TestModelRepository repo("http_alloc_test");
  repo.AddModel("simple", kSimple);
  BackendRegistry registry;
  registry.Register(CreateAddSubBackend());
  auto manager = repo.Load(&registry);
  ASSERT_TRUE(manager.ok()) << manager.status();
  KServeRoutes routes(**manager, KServeRoutes::Options{});
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&routes](HttpRequest&& request, HttpResponder responder) {
    routes.Handle(std::move(request), std::move(responder));
  });
  ASSERT_TRUE(server.ok()) << server.status();
  {
    RawClient client((*server)->port());
    ASSERT_TRUE(client.connected());
    ASSERT_EQ(std::strlen(std::strstr(kInferRequest, "\r\n\r\n") + 4), 204u);
    const double per_request = AllocationsPerRequest(client, kInferRequest, 500, 2000);
    ASSERT_GE(per_request, 0) << "a request failed";
    const std::string body(client.body(), client.body_size());
    EXPECT_NE(body.find("\"name\":\"OUTPUT0\",\"datatype\":\"INT32\",\"shape\":[1,16],"
                        "\"data\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]"),
              std::string::npos)
        << body;
    std::printf("KServe infer path (HTTP + codec + manager + add_sub): %.3f allocations per request\n",
                per_request);
    // What remains (found with a backtrace per allocation; docs/benchmarks.md, "The HTTP
    // hot path (issue 18)", second step), none of it in the HTTP layer: decoding — the inputs vector,
    // one shape and one data Buffer per input; the route — the version handle, the
    // KServeInferResponder the pipeline holds (http/infer_responders.h), the response's "application/json" content type
    // (a std::string longer than the inline 15 bytes), the write callback; the version —
    // the ScheduledRequest and its callback; the inline run's one-request batch vector;
    // add_sub — its two output Buffers. Was 31 before that step (37 before the first).
    EXPECT_LE(per_request, kInferAllocations + 0.5);
  }
  (*server)->Shutdown(std::chrono::seconds(1));
}

// The same infer path behind a RouteTable shaped like the server's (server/http_routes.cc:
// exact, prefix and segment patterns before the KServe fallback): matching a request
// allocates nothing, so the count is the same.
TEST(HttpServerAllocationTest, RouteTableAddsNoAllocationToTheInferPath) {
  TestModelRepository repo("http_alloc_route_test");
  repo.AddModel("simple", kSimple);
  BackendRegistry registry;
  registry.Register(CreateAddSubBackend());
  auto manager = repo.Load(&registry);
  ASSERT_TRUE(manager.ok()) << manager.status();
  KServeRoutes kserve(**manager, KServeRoutes::Options{});
  const HttpHandler unused = [](HttpRequest&&, HttpResponder responder) {
    std::move(responder).Send(HttpResponse{500, "text/plain", "wrong route", {}});
  };
  using P = PathPattern;
  RouteTable routes;
  routes.Add("console", MethodSet::Any(), {P::Exact("/"), P::Exact("/console"), P::Prefix("/console/")}, unused)
      .Add("trace", MethodSet::Of({"GET", "POST"}), {P::Segments("/v2/models/*/trace/setting")}, unused)
      .Add("openai", MethodSet::Any(), {P::Exact("/v1"), P::Prefix("/v1/")}, unused)
      .Add("shm", MethodSet::Any(), {P::Segments("/v2/systemsharedmemory/**")}, unused)
      .Add("diagnosis", MethodSet::Of({"GET"}), {P::Segments("/v2/models/*/versions/*/diagnosis")}, unused)
      .Add("repository", MethodSet::Any(), {P::Segments("/v2/repository/**")}, unused)
      .Add("kserve", MethodSet::Any(), {P::Any()}, [&kserve](HttpRequest&& request, HttpResponder responder) {
        kserve.Handle(std::move(request), std::move(responder));
      });
  auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [&routes](HttpRequest&& request, HttpResponder responder) {
    routes.Dispatch(std::move(request), std::move(responder));
  });
  ASSERT_TRUE(server.ok()) << server.status();
  {
    RawClient client((*server)->port());
    ASSERT_TRUE(client.connected());
    const double per_request = AllocationsPerRequest(client, kInferRequest, 500, 2000);
    ASSERT_GE(per_request, 0) << "a request failed";
    std::printf("KServe infer path behind a RouteTable: %.3f allocations per request\n", per_request);
    EXPECT_LE(per_request, kInferAllocations + 0.5);
  }
  (*server)->Shutdown(std::chrono::seconds(1));
}

}  // namespace
}  // namespace infera
