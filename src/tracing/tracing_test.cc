#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/http_server.h"
#include "rapidjson/document.h"
#include "tracing/http_post.h"
#include "tracing/otlp_json.h"
#include "tracing/request_trace.h"
#include "tracing/tracer.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

Tracer::Options Options(std::string endpoint) {
  Tracer::Options options;
  options.endpoint = std::move(endpoint);
  return options;
}

constexpr char kParent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContextTest, ParsesAndFormatsW3cTraceparent) {
  auto context = ParseTraceparent(kParent);
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(ToHex(context->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(ToHex(context->span_id), "00f067aa0ba902b7");
  EXPECT_TRUE(context->sampled);
  EXPECT_EQ(FormatTraceparent(context->trace_id, context->span_id, true), kParent);
  EXPECT_FALSE(ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")->sampled);
}

TEST(TraceContextTest, RejectsMalformedHeaders) {
  for (const char* bad : {"", "garbage", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                          "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                          "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
                          "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01"}) {
    EXPECT_FALSE(ParseTraceparent(bad).has_value()) << bad;
  }
}

TEST(RequestTraceTest, RootIsServerSpanChildrenPointAtIt) {
  RequestTrace trace(*ParseTraceparent(kParent));
  const SteadyTime t0 = std::chrono::steady_clock::now();
  trace.AddStage("parse", t0, t0 + std::chrono::microseconds(10));
  trace.AddStage("compute", t0 + std::chrono::microseconds(10), t0 + std::chrono::microseconds(50),
                 {{"infera.batch_rows", 4}});
  auto spans = trace.Finish("infer m", t0, t0 + std::chrono::microseconds(60), {{"infera.model", "m"}}, std::nullopt);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_TRUE(spans[0].server_kind);
  EXPECT_EQ(ToHex(*spans[0].parent_span_id), "00f067aa0ba902b7");
  for (size_t i = 1; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].trace_id, spans[0].trace_id);
    EXPECT_EQ(*spans[i].parent_span_id, spans[0].span_id);
    EXPECT_FALSE(spans[i].server_kind);
  }
  EXPECT_EQ(spans[2].end_unix_ns - spans[2].start_unix_ns, 40000u);
}

TEST(OtlpJsonTest, ProducesExportTraceServiceRequestShape) {
  RequestTrace trace(*ParseTraceparent(kParent));
  const SteadyTime t0 = std::chrono::steady_clock::now();
  trace.AddStage("queue", t0, t0, {{"n", 7}});
  std::string json = SpansToOtlpJson(trace.Finish("infer m", t0, t0, {}, "boom"), "infera", "1.0");
  rapidjson::Document doc;
  ASSERT_FALSE(doc.Parse(json.c_str()).HasParseError()) << json;
  const auto& spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"];
  ASSERT_EQ(spans.Size(), 2u);
  EXPECT_STREQ(spans[0]["traceId"].GetString(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(spans[0]["kind"].GetInt(), 2);
  EXPECT_EQ(spans[0]["status"]["code"].GetInt(), 2);
  EXPECT_STREQ(spans[0]["status"]["message"].GetString(), "boom");
  EXPECT_STREQ(spans[1]["attributes"][0]["value"]["intValue"].GetString(), "7");
  EXPECT_STREQ(doc["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"].GetString(),
               "infera");
}

TEST(TracerTest, RefusesEndpointsItCannotReach) {
  EXPECT_TRUE(Tracer::Create(Options("http://127.0.0.1:9/v1/traces")).ok());
  EXPECT_FALSE(Tracer::Create(Options("https://secure/v1/traces")).ok());
}

TEST(TracerTest, ExportsBatchesToTheCollector) {
  absl::Mutex mu;
  std::vector<std::string> bodies;
  absl::Notification received;
  auto collector = HttpServer::Start({"127.0.0.1", 0, 1}, [&](HttpRequest request, HttpResponder responder) {
    {
      absl::MutexLock lock(&mu);
      bodies.push_back(std::string(request.path()) + " " + request.body);
    }
    std::move(responder).Send(HttpResponse{200, "application/json", "{}", {}});
    if (!received.HasBeenNotified()) received.Notify();
  });
  ASSERT_TRUE(collector.ok());
  Tracer::Options options;
  options.endpoint = "http://127.0.0.1:" + std::to_string((*collector)->port()) + "/v1/traces";
  options.flush_interval = std::chrono::milliseconds(20);
  auto tracer = Tracer::Create(options);
  ASSERT_TRUE(tracer.ok());
  RequestTrace trace(*ParseTraceparent(kParent));
  const SteadyTime t0 = std::chrono::steady_clock::now();
  (*tracer)->Submit(trace.Finish("infer m", t0, t0, {}, std::nullopt));
  ASSERT_TRUE(received.WaitForNotificationWithTimeout(absl::Seconds(10)));
  tracer->reset();
  absl::MutexLock lock(&mu);
  EXPECT_THAT(bodies[0], HasSubstr("/v1/traces {\"resourceSpans\""));
  EXPECT_THAT(bodies[0], HasSubstr("4bf92f3577b34da6a3ce929d0e0e4736"));
  (*collector)->Shutdown(std::chrono::milliseconds(100));
}

TEST(TracerTest, SubmitNeverBlocksAndCountsDrops) {
  Tracer::Options options;
  options.endpoint = "http://127.0.0.1:9/v1/traces";  // nobody listens
  options.max_queued_spans = 10;
  options.flush_interval = std::chrono::hours(1);      // nothing leaves the buffer
  options.max_batch_spans = 1000;
  auto tracer = Tracer::Create(options);
  ASSERT_TRUE(tracer.ok());
  for (int i = 0; i < 5; ++i) {
    RequestTrace trace(*ParseTraceparent(kParent));
    const SteadyTime t0 = std::chrono::steady_clock::now();
    trace.AddStage("a", t0, t0);
    trace.AddStage("b", t0, t0);
    (*tracer)->Submit(trace.Finish("r", t0, t0, {}, std::nullopt));  // 3 spans each
  }
  EXPECT_EQ((*tracer)->dropped_spans(), 5u);  // 15 submitted, 10 kept
}

TEST(HttpPostTest, ACollectorThatNeverAnswersCostsOnlyTheTimeout) {
  // A listening socket nobody reads from: connect succeeds, the response never comes.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  auto url = ParseHttpUrl("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/v1/traces");
  ASSERT_TRUE(url.ok());
  const auto start = std::chrono::steady_clock::now();
  auto result = HttpPost(*url, "application/json", "{}", std::chrono::milliseconds(200));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  ::close(fd);
}

TEST(HttpPostTest, ParsesOnlyHttpUrls) {
  auto url = ParseHttpUrl("http://collector:4318/v1/traces");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "collector");
  EXPECT_EQ(url->port, "4318");
  EXPECT_EQ(url->target, "/v1/traces");
  EXPECT_EQ(ParseHttpUrl("http://collector")->port, "80");
  EXPECT_FALSE(ParseHttpUrl("https://collector/v1/traces").ok());
  EXPECT_FALSE(ParseHttpUrl("http://:4318/").ok());
}

}  // namespace
}  // namespace infera
