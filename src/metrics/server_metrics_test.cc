#include "metrics/server_metrics.h"

#include <string>
#include <thread>
#include <vector>

#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ServerMetricsTest, ModelSeriesAppearWithLabelsAndGoAwayOnUnload) {
  ServerMetrics metrics;
  {
    std::shared_ptr<ModelMetrics> m = metrics.ForModel("resnet18", 2);
    m->ObserveSuccess(0.012, 0.001);
    m->CountFailure(RequestOutcome::kRejected);
    m->ObserveExecution(4, 0.010);
    m->SetLoad(3, 5, 0.5, 0.75);
    const std::string text = metrics.Serialize();
    EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="resnet18",outcome="success",version="2"} 1)"));
    EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="resnet18",outcome="rejected",version="2"} 1)"));
    EXPECT_THAT(text, HasSubstr(R"(infera_inferences_total{model="resnet18",version="2"} 4)"));
    EXPECT_THAT(text, HasSubstr(R"(infera_executions_total{model="resnet18",version="2"} 1)"));
    EXPECT_THAT(text, HasSubstr(R"(infera_request_duration_seconds_bucket{model="resnet18",version="2",le="0.025"} 1)"));
    EXPECT_THAT(text, HasSubstr(R"(infera_request_duration_seconds_bucket{model="resnet18",version="2",le="0.01"} 0)"));
    EXPECT_THAT(text, HasSubstr(R"(infera_batch_size_bucket{model="resnet18",version="2",le="4"} 1)"));
    EXPECT_THAT(text, HasSubstr(R"(infera_queue_depth{model="resnet18",version="2"} 3)"));
    EXPECT_THAT(text, HasSubstr(R"(infera_load_ratio{model="resnet18",version="2"} 0.75)"));
    EXPECT_THAT(text, HasSubstr("# TYPE infera_request_duration_seconds histogram"));
  }
  EXPECT_THAT(metrics.Serialize(), Not(HasSubstr(R"(model="resnet18")")));
}

TEST(ServerMetricsTest, HttpResponseCountsAdvanceByTheDelta) {
  ServerMetrics metrics;
  metrics.SetHttpResponseCounts({{200, 3}, {503, 1}, {9999, 5}});  // 9999: ignored
  metrics.SetHttpResponseCounts({{200, 5}, {503, 1}});
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(infera_http_requests_total{code="200"} 5)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_http_requests_total{code="503"} 1)"));
  EXPECT_THAT(text, Not(HasSubstr(R"(code="9999")")));
}

TEST(ServerMetricsTest, ServerAndProcessSeries) {
  ServerMetrics metrics;
  metrics.CountHttpResponse(200);
  metrics.CountHttpResponse(200);
  metrics.CountHttpResponse(429);
  metrics.CountHttpResponse(9999);  // ignored, never crashes
  metrics.SetReadiness({{"a", 1, true}, {"b", 1, false}}, false);
  std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(infera_http_requests_total{code="200"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_http_requests_total{code="429"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_model_ready{model="b",version="1"} 0)"));
  EXPECT_THAT(text, HasSubstr("infera_models_loaded 1"));
  EXPECT_THAT(text, HasSubstr("infera_server_ready 0"));
  EXPECT_THAT(text, HasSubstr("process_resident_memory_bytes "));
  EXPECT_THAT(text, HasSubstr("process_cpu_seconds_total "));
  // A version that went away loses its readiness series.
  metrics.SetReadiness({{"a", 1, true}}, true);
  text = metrics.Serialize();
  EXPECT_THAT(text, Not(HasSubstr(R"(model="b")")));
  EXPECT_THAT(text, HasSubstr("infera_server_ready 1"));
}

TEST(ServerMetricsTest, LlmSeries) {
  ServerMetrics metrics;
  auto llm = metrics.ForLlm("tiny", 100);
  llm->ObserveTimeToFirstToken(0.05);
  llm->AddGenerationTokens(7);
  llm->SetKvCacheUsage(0.25);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(infera_llm_generation_tokens_total{model="tiny"} 7)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_llm_kv_cache_usage_ratio{model="tiny"} 0.25)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_llm_time_to_first_token_seconds_count{model="tiny"} 1)"));
}

TEST(ServerMetricsTest, ConcurrentRecordingLosesNothing) {
  ServerMetrics metrics;
  auto m = metrics.ForModel("m", 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) m->ObserveSuccess(0.001, 0.0001);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_THAT(metrics.Serialize(), HasSubstr(R"(infera_request_duration_seconds_count{model="m",version="1"} 40000)"));
}

// A reload loads the new version (same name and number) before the retiring one goes:
// both hold the same labels. The retiring one's release must not free the series the
// new one records into (issue 13, finding 0: a heap use-after-free at the next request).
TEST(ServerMetricsTest, ReloadedVersionKeepsItsSeriesWhenTheRetiringOneGoes) {
  ServerMetrics metrics;
  auto retiring = metrics.ForModel("m", 1);
  retiring->ObserveSuccess(0.002, 0.001);
  auto reloaded = metrics.ForModel("m", 1);
  retiring.reset();  // the old version unloads
  reloaded->ObserveSuccess(0.002, 0.001);
  reloaded->ObserveExecution(3, 0.001);
  reloaded->SetLoad(1, 2, 0.5, 0.25);
  std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="m",outcome="success",version="1"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_inferences_total{model="m",version="1"} 3)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_request_duration_seconds_count{model="m",version="1"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_inflight_requests{model="m",version="1"} 2)"));
  reloaded.reset();  // the last user: the series go
  EXPECT_THAT(metrics.Serialize(), Not(HasSubstr(R"(model="m")")));
  // Loading the version again starts fresh series.
  auto again = metrics.ForModel("m", 1);
  again->CountFailure(RequestOutcome::kTimeout);
  text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="m",outcome="timeout",version="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="m",outcome="success",version="1"} 0)"));
}

TEST(ServerMetricsTest, OtherVersionsAndModelsHaveTheirOwnSeries) {
  ServerMetrics metrics;
  auto v1 = metrics.ForModel("m", 1);
  auto v2 = metrics.ForModel("m", 2);
  auto other = metrics.ForModel("n", 1);
  v1->ObserveSuccess(0.001, 0);
  v2.reset();
  other.reset();
  v1->ObserveSuccess(0.001, 0);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="m",outcome="success",version="1"} 2)"));
  EXPECT_THAT(text, Not(HasSubstr(R"(version="2")")));
  EXPECT_THAT(text, Not(HasSubstr(R"(model="n")")));
}

// Versions of the same labels come and go on several threads (reloads racing requests
// and scrapes) while one handle records throughout: nothing recorded is lost, and
// under ASan/TSan nothing is freed while in use.
TEST(ServerMetricsTest, ConcurrentAcquireAndReleaseNeverFreesASeriesInUse) {
  ServerMetrics metrics;
  auto holder = metrics.ForModel("m", 1);
  constexpr int kThreads = 4, kRounds = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics, t] {
      for (int i = 0; i < kRounds; ++i) {
        auto mine = metrics.ForModel("m", 1);
        mine->ObserveSuccess(0.001, 0);
        auto passing = metrics.ForModel("m" + std::to_string(t), i % 3);  // created and removed
        passing->ObserveExecution(1, 0.001);
      }
    });
  }
  for (int i = 0; i < kRounds; ++i) {
    holder->ObserveSuccess(0.001, 0);
    if (i % 100 == 0) metrics.Serialize();
  }
  for (auto& t : threads) t.join();
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(StrCat(R"(infera_requests_total{model="m",outcome="success",version="1"} )",
                                     (kThreads + 1) * kRounds)));
  EXPECT_THAT(text, Not(HasSubstr(R"(model="m0")")));
}

}  // namespace
}  // namespace infera
