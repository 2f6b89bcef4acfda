// InferTrace's generation stages (Generated): what each GenerationTimings point becomes,
// exported to an in-process OTLP collector; and trace mode triton's time points, written
// to a trace file.
#include "tracing/infer_trace.h"

#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "http/http_server.h"
#include "rapidjson/document.h"
#include "tracing/request_trace.h"
#include "tracing/tracer.h"

namespace infera {
namespace {

using std::chrono::milliseconds;

constexpr char kParent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

struct Span {
  std::string name, id, parent;
  uint64_t start = 0, end = 0;
  std::map<std::string, std::string> attributes;  // int values as their decimal text
};

// Receives one OTLP export and keeps its spans.
class Collector {
 public:
  Collector() {
    auto server = HttpServer::Start({"127.0.0.1", 0, 1}, [this](HttpRequest request, HttpResponder responder) {
      {
        absl::MutexLock lock(&mu_);
        body_ = request.body;
      }
      std::move(responder).Send(HttpResponse{200, "application/json", "{}", {}});
      if (!received_.HasBeenNotified()) received_.Notify();
    });
    EXPECT_TRUE(server.ok());
    server_ = std::move(*server);
  }
  ~Collector() { server_->Shutdown(milliseconds(100)); }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/v1/traces"; }

  // The spans of the first export, by name (a name may repeat: one entry each).
  std::multimap<std::string, Span> Spans() {
    EXPECT_TRUE(received_.WaitForNotificationWithTimeout(absl::Seconds(10)));
    absl::MutexLock lock(&mu_);
    rapidjson::Document doc;
    doc.Parse(body_.c_str());
    std::multimap<std::string, Span> spans;
    for (const auto& s : doc["resourceSpans"][0]["scopeSpans"][0]["spans"].GetArray()) {
      Span span;
      span.name = s["name"].GetString();
      span.id = s["spanId"].GetString();
      span.parent = s.HasMember("parentSpanId") ? s["parentSpanId"].GetString() : "";
      span.start = std::stoull(s["startTimeUnixNano"].GetString());
      span.end = std::stoull(s["endTimeUnixNano"].GetString());
      for (const auto& a : s["attributes"].GetArray()) {
        const auto& v = a["value"];
        span.attributes[a["key"].GetString()] =
            v.HasMember("intValue") ? v["intValue"].GetString() : v["stringValue"].GetString();
      }
      spans.emplace(span.name, span);
    }
    return spans;
  }

 private:
  absl::Mutex mu_;
  std::string body_ ABSL_GUARDED_BY(mu_);
  absl::Notification received_;
  std::unique_ptr<HttpServer> server_;
};

TEST(InferTraceTest, AGenerationsTimingsBecomeItsStagesUnderTheOneRoot) {
  Collector collector;
  Tracer::Options options;
  options.endpoint = collector.endpoint();
  options.flush_interval = milliseconds(10);
  auto tracer = Tracer::Create(options);
  ASSERT_TRUE(tracer.ok());
  TraceSettings::Initial on;
  on.level = TraceSettings::Level::kTimestamps;
  on.rate = 1;
  TraceSettings settings(on, true);
  const SteadyTime t0 = std::chrono::steady_clock::now();
  auto trace = InferTrace::Start({&settings, tracer->get()}, "llm", kParent, t0);
  ASSERT_TRUE(trace.has_value());
  trace->Parsed(t0 + milliseconds(1));
  // Choice 0 went all the way; choice 1 was cancelled while it waited for the engine.
  GenerationTimings full{t0, t0 + milliseconds(3), t0 + milliseconds(5), t0 + milliseconds(8),
                         t0 + milliseconds(20), std::chrono::microseconds(500)};
  trace->Generated(full, 0);
  GenerationTimings queued_only;
  queued_only.arrival = t0;
  queued_only.queued = t0 + milliseconds(2);
  queued_only.finished = t0 + milliseconds(6);
  trace->Generated(queued_only, 1);
  trace->Serialized(t0 + milliseconds(20), t0 + milliseconds(21));
  std::move(*trace).Finish("openai", "cmpl-1", "http.status_code", "200", std::nullopt, t0 + milliseconds(22));

  const std::multimap<std::string, Span> spans = collector.Spans();
  ASSERT_EQ(spans.count("infer llm"), 1u);
  const Span& root = spans.find("infer llm")->second;
  EXPECT_EQ(root.parent, "00f067aa0ba902b7");
  EXPECT_EQ(root.attributes.at("infera.protocol"), "openai");
  EXPECT_EQ(root.attributes.at("infera.request_id"), "cmpl-1");
  EXPECT_EQ(root.attributes.at("http.status_code"), "200");
  const uint64_t base = root.start;
  auto micros = [&](const Span& s) { return std::make_pair((s.start - base) / 1000, (s.end - base) / 1000); };
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> stages;  // (name, choice) -> µs
  for (const auto& [name, span] : spans) {
    if (&span == &root) continue;
    auto it = span.attributes.find("infera.choice");
    stages[{name, it == span.attributes.end() ? "" : it->second}] = micros(span);
  }
  using Stage = std::pair<std::string, std::string>;
  using Interval = std::pair<uint64_t, uint64_t>;
  const std::map<Stage, Interval> expected = {
      {{"parse", ""}, {0, 1000}},
      {{"tokenize", "0"}, {1000, 3000}},  // from the end of parsing to the engine's queue
      {{"queue", "0"}, {3000, 5000}},
      {{"prefill", "0"}, {5000, 8000}},
      {{"decode", "0"}, {8000, 20000}},
      {{"detokenize", "0"}, {19500, 20000}},  // its summed time, ending with the last output
      {{"tokenize", "1"}, {1000, 2000}},
      {{"queue", "1"}, {2000, 6000}},  // never scheduled: queued until it ended; no prefill, no decode
      {{"serialize", ""}, {20000, 21000}},
  };
  EXPECT_EQ(stages, expected);
  for (const auto& [name, span] : spans) {
    if (&span == &root) continue;
    EXPECT_EQ(span.parent, root.id) << name;  // one level: every stage under the root
  }
}

TEST(InferTraceTest, TritonModeWritesTritonsPointsInOrderAndAnswersNoTraceparent) {
  char dir[] = "/tmp/infer_trace_test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/trace.json";
  TraceSettings::Initial on;
  on.level = TraceSettings::Level::kTimestamps;
  on.rate = 1;
  TraceSettings settings(on, true, TraceSettings::Output{TraceSettings::Mode::kTriton, path});
  {
    auto writer = TraceFileWriter::Create({path});
    ASSERT_TRUE(writer.ok());
    // No file writer: triton mode traces nothing (the tracer alone is not its sink).
    EXPECT_FALSE(InferTrace::Start({&settings, nullptr, nullptr}, "simple", std::nullopt, SteadyTime{}).has_value());
    const SteadyTime t0 = std::chrono::steady_clock::now();
    auto trace = InferTrace::Start({&settings, nullptr, writer->get()}, "simple", kParent, t0);
    ASSERT_TRUE(trace.has_value());
    EXPECT_EQ(trace->traceparent(), "");
    trace->Parsed(t0 + milliseconds(1));
    RequestTimings timings;
    timings.enqueue = t0 + milliseconds(2);
    timings.execution_start = t0 + milliseconds(3);
    timings.execution_end = t0 + milliseconds(5);
    trace->Ran(timings);
    trace->Answered(1);
    trace->Serialized(t0 + milliseconds(6), t0 + milliseconds(7));
    std::move(*trace).Finish("grpc", "r1", "rpc.grpc.status_code", "0", std::nullopt, t0 + milliseconds(8));
    // Refused before it ran: no queue or compute points.
    auto refused = InferTrace::Start({&settings, nullptr, writer->get()}, "simple", std::nullopt, t0);
    ASSERT_TRUE(refused.has_value());
    std::move(*refused).Finish("http", "", "http.status_code", "404", std::string("unknown"), t0 + milliseconds(1));
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  ASSERT_FALSE(doc.HasParseError()) << text.str();
  std::map<uint64_t, std::vector<std::pair<std::string, int64_t>>> points;
  for (const auto& o : doc.GetArray()) {
    if (o.HasMember("model_name")) {
      EXPECT_STREQ(o["model_name"].GetString(), "simple");
      continue;
    }
    for (const auto& t : o["timestamps"].GetArray()) points[o["id"].GetUint64()].emplace_back(t["name"].GetString(), t["ns"].GetInt64());
  }
  ASSERT_EQ(points.size(), 2u);
  std::vector<std::string> names;
  int64_t last = 0;
  for (const auto& [name, ns] : points[1]) {
    names.push_back(name);
    EXPECT_GE(ns, last) << name;
    last = ns;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"GRPC_WAITREAD_START", "GRPC_WAITREAD_END", "REQUEST_START",
                                             "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END",
                                             "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END",
                                             "GRPC_SEND_START", "GRPC_SEND_END"}));
  EXPECT_EQ(points[1].back().second - points[1].front().second, 8'000'000);
  names.clear();
  for (const auto& [name, ns] : points[2]) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"HTTP_RECV_START", "HTTP_RECV_END", "REQUEST_START", "REQUEST_END",
                                             "HTTP_SEND_START", "HTTP_SEND_END"}));
  std::system((std::string("rm -rf ") + dir).c_str());
}

}  // namespace
}  // namespace infera
