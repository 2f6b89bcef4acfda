#include "metrics/triton_metrics.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/server_metrics.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every family Triton's dashboards read, with Triton's type, help text, labels and units
// (durations in cumulative microseconds).
TEST(TritonMetricsTest, FamiliesHaveTritonsNamesTypesLabelsAndUnits) {
  ServerMetrics metrics;
  std::shared_ptr<ModelMetrics> m = metrics.ForModel("simple", 3);
  ASSERT_NE(m->triton(), nullptr);
  TritonModelSeries& t = *m->triton();
  t.RecordSuccess(4, 12'345'000, 1'500);  // 12345 us, 1.5 us
  t.RecordSuccess(1, 1'000'000, 500);
  t.RecordExecution(2, 1'000, 40'000, 3'000);  // each stage charged to both requests
  t.RecordFailure(RequestOutcome::kBackendError);
  m->SetLoad(7, 9, 0, 0);

  const std::string text = metrics.Serialize();
  for (const char* counter :
       {"nv_inference_request_success", "nv_inference_request_failure", "nv_inference_count",
        "nv_inference_exec_count", "nv_inference_request_duration_us", "nv_inference_queue_duration_us",
        "nv_inference_compute_input_duration_us", "nv_inference_compute_infer_duration_us",
        "nv_inference_compute_output_duration_us"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + counter + " counter\n")) << counter;
  }
  EXPECT_THAT(text, HasSubstr("# TYPE nv_inference_pending_request_count gauge\n"));
  EXPECT_THAT(text, HasSubstr("# HELP nv_inference_request_success Number of successful inference requests, "
                              "all batch sizes\n"));
  EXPECT_THAT(text, HasSubstr("# HELP nv_inference_queue_duration_us Cumulative inference queuing duration in "
                              "microseconds (includes cached requests)\n"));

  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_success{model="simple",version="3"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_count{model="simple",version="3"} 5)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_exec_count{model="simple",version="3"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_duration_us{model="simple",version="3"} 13345)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_queue_duration_us{model="simple",version="3"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_compute_input_duration_us{model="simple",version="3"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_compute_infer_duration_us{model="simple",version="3"} 80)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_compute_output_duration_us{model="simple",version="3"} 6)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_pending_request_count{model="simple",version="3"} 7)"));
  // Every reason is exported from the start (Triton creates all four), at zero.
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_failure{model="simple",reason="BACKEND",version="3"} 1)"));
  for (const char* reason : {"REJECTED", "CANCELED", "OTHER"}) {
    EXPECT_THAT(text, HasSubstr(std::string(R"(nv_inference_request_failure{model="simple",reason=")") + reason +
                                R"(",version="3"} 0)"))
        << reason;
  }
}

TEST(TritonMetricsTest, FailureReasonsReadAsTritonsCategories) {
  EXPECT_EQ(TritonReasonOf(RequestOutcome::kRejected), TritonFailureReason::kRejected);
  EXPECT_EQ(TritonReasonOf(RequestOutcome::kTimeout), TritonFailureReason::kRejected);
  EXPECT_EQ(TritonReasonOf(RequestOutcome::kCancelled), TritonFailureReason::kCanceled);
  EXPECT_EQ(TritonReasonOf(RequestOutcome::kBackendError), TritonFailureReason::kBackend);
  EXPECT_EQ(TritonReasonOf(RequestOutcome::kBadRequest), TritonFailureReason::kOther);

  ServerMetrics metrics;
  std::shared_ptr<ModelMetrics> m = metrics.ForModel("m", 1);
  for (RequestOutcome o : {RequestOutcome::kRejected, RequestOutcome::kTimeout, RequestOutcome::kCancelled,
                           RequestOutcome::kBadRequest, RequestOutcome::kBadRequest}) {
    m->triton()->RecordFailure(o);
  }
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_failure{model="m",reason="REJECTED",version="1"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_failure{model="m",reason="CANCELED",version="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_failure{model="m",reason="OTHER",version="1"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_failure{model="m",reason="BACKEND",version="1"} 0)"));
}

// A reload shares the series (the counters keep counting, as Triton's reporter does);
// the last version to go takes them off /metrics.
TEST(TritonMetricsTest, SeriesFollowTheVersionsLifetime) {
  ServerMetrics metrics;
  std::shared_ptr<ModelMetrics> retiring = metrics.ForModel("m", 1);
  retiring->triton()->RecordSuccess(1, 1'000, 0);
  std::shared_ptr<ModelMetrics> reloaded = metrics.ForModel("m", 1);
  retiring.reset();
  reloaded->triton()->RecordSuccess(1, 1'000, 0);
  EXPECT_THAT(metrics.Serialize(), HasSubstr(R"(nv_inference_request_success{model="m",version="1"} 2)"));
  reloaded.reset();
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, Not(HasSubstr(R"(nv_inference_request_success{)")));
  EXPECT_THAT(text, Not(HasSubstr(R"(model="m")")));
}

TEST(TritonMetricsTest, TurnedOffNothingIsExported) {
  ServerMetrics metrics(TritonMetricsOptions{.enabled = false});
  std::shared_ptr<ModelMetrics> m = metrics.ForModel("m", 1);
  EXPECT_EQ(m->triton(), nullptr);
  m->ObserveSuccess(0.001, 0);
  m->SetLoad(1, 1, 0, 0);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, Not(HasSubstr("nv_")));
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="m",outcome="success",version="1"} 1)"));
}

// Triton's --metrics-config counter_latencies=false: the counts stay, the *_duration_us go.
TEST(TritonMetricsTest, LatencyCountersOff) {
  ServerMetrics metrics(TritonMetricsOptions{.enabled = true, .latency_counters = false});
  std::shared_ptr<ModelMetrics> m = metrics.ForModel("m", 1);
  m->triton()->RecordSuccess(2, 5'000, 1'000);
  m->triton()->RecordExecution(1, 1'000, 1'000, 1'000);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, Not(HasSubstr("_duration_us")));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_success{model="m",version="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_count{model="m",version="1"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_exec_count{model="m",version="1"} 1)"));
}

// Triton's --metrics-config summary_latencies=true (+ summary_quantiles): one observation
// per request, in microseconds, with the configured quantiles; off by default.
TEST(TritonMetricsTest, LatencySummaries) {
  {
    ServerMetrics off;
    off.ForModel("m", 1)->triton()->RecordSuccess(1, 5'000, 1'000);
    EXPECT_THAT(off.Serialize(), Not(HasSubstr("_summary_us")));
  }
  TritonMetricsOptions options;
  options.latency_summaries = true;
  options.summary_quantiles = {{0.5, 0.05}, {0.99, 0.001}};
  ServerMetrics metrics(options);
  std::shared_ptr<ModelMetrics> m = metrics.ForModel("m", 2);
  for (uint64_t us : {100, 200, 300, 400}) m->triton()->RecordSuccess(1, us * 1000, 10'000);
  m->triton()->RecordExecution(3, 2'000, 50'000, 4'000);  // three requests: three observations
  const std::string text = metrics.Serialize();
  for (const char* family : {"nv_inference_request_summary_us", "nv_inference_queue_summary_us",
                             "nv_inference_compute_input_summary_us", "nv_inference_compute_infer_summary_us",
                             "nv_inference_compute_output_summary_us"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + family + " summary\n")) << family;
  }
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_summary_us_count{model="m",version="2"} 4)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_summary_us_sum{model="m",version="2"} 1000)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_queue_summary_us{model="m",version="2",quantile="0.99"} 10)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_compute_infer_summary_us_count{model="m",version="2"} 3)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_compute_infer_summary_us{model="m",version="2",quantile="0.5"} 50)"));
  EXPECT_THAT(text, Not(HasSubstr(R"(quantile="0.9")")));
  // Cache hits are successes without inference (Triton's counting); the cache summaries
  // appear with the first hit or miss (or at a cached version's load).
  EXPECT_THAT(text, Not(HasSubstr("nv_cache_hit_summary_us{")));
  m->triton()->RecordCacheHit(40'000, 3'000);
  m->triton()->RecordCacheMiss(7'000);
  const std::string cached = metrics.Serialize();
  EXPECT_THAT(cached, HasSubstr(R"(nv_inference_request_success{model="m",version="2"} 5)"));
  EXPECT_THAT(cached, HasSubstr(R"(nv_inference_count{model="m",version="2"} 4)"));
  EXPECT_THAT(cached, HasSubstr(R"(nv_inference_request_summary_us_count{model="m",version="2"} 5)"));
  EXPECT_THAT(cached, HasSubstr(R"(nv_cache_hit_summary_us{model="m",version="2",quantile="0.5"} 3)"));
  EXPECT_THAT(cached, HasSubstr(R"(nv_cache_miss_summary_us_sum{model="m",version="2"} 7)"));
  // The series go with the version, as the counters do.
  m.reset();
  EXPECT_THAT(metrics.Serialize(), Not(HasSubstr("summary_us{")));
}

}  // namespace
}  // namespace infera
