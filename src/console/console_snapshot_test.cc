#include "console/console_snapshot.h"

#include <chrono>

#include "gtest/gtest.h"
#include "manager/latency_histogram.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

ConsoleModelReading Serving(uint64_t ok, uint64_t failed, std::vector<uint64_t> latency) {
  ConsoleModelReading m;
  m.name = "m";
  m.version = 1;
  m.state = "READY";
  m.backend = "identity";
  m.serving = true;
  m.max_batch_size = 8;
  m.queue_depth = 3;
  m.instances = {{"m_0", "KIND_CPU", 2}};
  m.stats.success = {ok, ok * 2'000'000};
  m.stats.fail = {failed, failed * 1'000'000};
  m.stats.failures.bad_request = failed;
  m.stats.queue = {ok, ok * 500'000};
  m.stats.compute_infer = {ok, ok * 1'000'000};
  m.stats.inference_count = ok;
  m.stats.execution_count = ok;
  m.stats.batch_stats = {{4, {}, {ok, 0}, {}}};
  m.latency = std::move(latency);
  return m;
}

std::vector<uint64_t> Latencies(int count, uint64_t nanos, std::vector<uint64_t> base = {}) {
  base.resize(LatencyHistogram::kBuckets);
  base[LatencyHistogram::BucketOf(nanos)] += count;
  return base;
}

TEST(StatsWindowTest, RatesAreOverTheLastIntervalAndQuantilesOverTheWindow) {
  StatsWindow window(seconds(10));
  const auto t0 = std::chrono::steady_clock::time_point{} + seconds(100);
  ConsoleServerReading server{"1.2.3", true, "explicit", true, 1};
  // First sample: no previous one, so rates are 0.
  auto first = Parse(window.Render(t0, 5, server, {Serving(10, 0, Latencies(10, 100'000'000))}));
  const auto& m0 = first["models"][0];
  EXPECT_EQ(m0["rates"]["requests"].GetDouble(), 0);
  EXPECT_EQ(m0["counters"]["requests"].GetUint64(), 10u);
  EXPECT_EQ(first["server"]["control_mode"].GetString(), std::string("explicit"));
  EXPECT_TRUE(first["server"]["admin_token_required"].GetBool());
  EXPECT_EQ(first["time_ms"].GetInt64(), 5);
  // 2 s later: 20 more successes (1 ms each) and 2 failures.
  auto second = Parse(window.Render(t0 + seconds(2), 6, server,
                                    {Serving(30, 2, Latencies(22, 1'000'000, Latencies(10, 100'000'000)))}));
  const auto& m1 = second["models"][0];
  EXPECT_DOUBLE_EQ(m1["rates"]["requests"].GetDouble(), 11.0);  // 22 / 2 s
  EXPECT_DOUBLE_EQ(m1["rates"]["errors"].GetDouble(), 1.0);
  EXPECT_DOUBLE_EQ(m1["rates"]["inferences"].GetDouble(), 10.0);
  EXPECT_NEAR(m1["breakdown_ms"]["queue"].GetDouble(), 0.5, 1e-9);
  EXPECT_NEAR(m1["breakdown_ms"]["compute_infer"].GetDouble(), 1.0, 1e-9);
  // The window starts at t0: only the 22 fast requests count.
  EXPECT_LT(m1["latency_ms"]["p99"].GetDouble(), 2.0);
  EXPECT_GT(m1["latency_ms"]["p99"].GetDouble(), 0.9);
  EXPECT_EQ(m1["queue_depth"].GetUint64(), 3u);
  EXPECT_EQ(m1["instances"][0]["count"].GetInt(), 2);
  EXPECT_EQ(m1["batch_sizes"][0]["batch_size"].GetUint64(), 4u);
  EXPECT_EQ(m1["batch_sizes"][0]["executions"].GetUint64(), 30u);
  EXPECT_EQ(m1["failures"]["bad_request"].GetUint64(), 2u);
  EXPECT_TRUE(m1["llm"].IsNull());
  EXPECT_TRUE(m1["canary"].IsNull());
}

TEST(StatsWindowTest, OldSamplesLeaveTheWindow) {
  StatsWindow window(seconds(10));
  const auto t0 = std::chrono::steady_clock::time_point{} + seconds(100);
  ConsoleServerReading server;
  window.Render(t0, 0, server, {Serving(10, 0, Latencies(10, 100'000'000))});  // slow ones
  // 15 s later nothing new: the window (which holds only the previous sample, already
  // older than 10 s) is empty, so quantiles cover everything since load.
  auto later = Parse(window.Render(t0 + seconds(15), 0, server, {Serving(10, 0, Latencies(10, 100'000'000))}));
  EXPECT_EQ(later["models"][0]["rates"]["requests"].GetDouble(), 0);
  // 1 s after that: the window starts at the previous sample, nothing happened in it.
  auto next = Parse(window.Render(t0 + seconds(16), 0, server, {Serving(10, 0, Latencies(10, 100'000'000))}));
  EXPECT_EQ(next["models"][0]["latency_ms"]["p99"].GetDouble(), 0);
}

TEST(StatsWindowTest, NotServingRowsCarryStateAndReasonOnly) {
  StatsWindow window;
  ConsoleModelReading failed;
  failed.name = "broken";
  failed.state = "UNAVAILABLE";
  failed.reason = "load failed: \"model.pt\" missing";
  CanaryStatus canary;
  canary.model = "broken";
  canary.canary_version = 2;
  canary.baseline_version = 1;
  canary.weight_percent = 10;
  canary.state = CanaryState::kRolledBack;
  canary.reason = "p99 +50%";
  failed.canary = canary;
  auto d = Parse(window.Render(std::chrono::steady_clock::now(), 0, {}, {failed}));
  const auto& m = d["models"][0];
  EXPECT_TRUE(m["version"].IsNull());
  EXPECT_EQ(m["reason"].GetString(), failed.reason);  // escaped and back
  EXPECT_FALSE(m.HasMember("counters"));
  EXPECT_EQ(m["canary"]["state"].GetString(), std::string(CanaryStateName(CanaryState::kRolledBack)));
  EXPECT_EQ(m["canary"]["canary_version"].GetInt(), 2);
}

TEST(StatsWindowTest, LlmFiguresRatesAndWindowedQuantiles) {
  StatsWindow window(seconds(10));
  const auto t0 = std::chrono::steady_clock::time_point{} + seconds(100);
  ConsoleModelReading m = Serving(1, 0, Latencies(1, 1'000'000));
  GenerationMetrics l;
  l.time_to_first_token = Histogram::WithBounds({0.01, 0.1, 1});
  l.inter_token_latency = Histogram::WithBounds({0.01, 0.1, 1});
  l.generation_tokens = 100;
  l.kv_cache_usage = 0.25;
  l.num_running = 2;
  l.num_waiting = 1;
  l.time_to_first_token.Observe(0.5);  // slow, before the window
  m.llm = l;
  window.Render(t0, 0, {}, {m});
  m.llm->generation_tokens = 150;
  m.llm->time_to_first_token.Observe(0.005);
  m.llm->inter_token_latency.Observe(0.05);
  auto d = Parse(window.Render(t0 + milliseconds(500), 0, {}, {m}));
  const auto& j = d["models"][0]["llm"];
  EXPECT_DOUBLE_EQ(j["tokens_per_s"].GetDouble(), 100.0);  // 50 tokens / 0.5 s
  EXPECT_LE(j["ttft_ms"]["p99"].GetDouble(), 10.0);         // only the fast one is in the window
  EXPECT_GT(j["tpot_ms"]["p50"].GetDouble(), 10.0);
  EXPECT_DOUBLE_EQ(j["kv_cache_usage"].GetDouble(), 0.25);
  EXPECT_EQ(j["running"].GetInt(), 2);
  EXPECT_EQ(j["waiting"].GetInt(), 1);
}

TEST(StatsWindowTest, ACounterGoingBackwardsStartsOver) {
  StatsWindow window;
  const auto t0 = std::chrono::steady_clock::time_point{} + seconds(100);
  window.Render(t0, 0, {}, {Serving(100, 0, Latencies(100, 1'000'000))});
  auto d = Parse(window.Render(t0 + seconds(1), 0, {}, {Serving(5, 0, Latencies(5, 1'000'000))}));
  EXPECT_EQ(d["models"][0]["rates"]["requests"].GetDouble(), 0);  // not a negative rate
}

}  // namespace
}  // namespace infera
