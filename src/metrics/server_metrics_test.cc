#include "metrics/server_metrics.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ServerMetricsTest, ModelSeriesAppearWithLabelsAndGoAwayOnUnload) {
  ServerMetrics metrics;
  {
    std::unique_ptr<ModelMetrics> m = metrics.ForModel("resnet18", 2);
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
  auto llm = metrics.ForLlm("tiny");
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

}  // namespace
}  // namespace infera
