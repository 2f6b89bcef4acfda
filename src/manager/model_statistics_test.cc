#include "manager/model_statistics.h"

#include <string>

#include "absl/status/status.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/server_metrics.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

// Each request outcome lands in the statistics snapshot and in the Prometheus outcome
// and duration series, with the same buckets.
TEST(ModelStatisticsTest, OutcomesLandInSnapshotAndMetrics) {
  ServerMetrics metrics;
  ModelStatistics stats(0, metrics.ForModel("fortune", 1));
  stats.RecordSuccess(30'000'000, 2'000'000, 1);
  stats.RecordSuccess(10'000'000, 1'000'000, 1);
  stats.RecordFailure(absl::StatusCode::kCancelled, 5'000'000);
  stats.RecordFailure(absl::StatusCode::kInvalidArgument, 1'000'000);
  stats.RecordFailure(absl::StatusCode::kResourceExhausted, 1'000'000);
  stats.RecordFailure(absl::StatusCode::kInternal, 1'000'000);

  const StatisticsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.success.count, 2u);
  EXPECT_EQ(s.success.ns, 40'000'000u);
  EXPECT_EQ(s.queue.count, 2u);
  EXPECT_EQ(s.queue.ns, 3'000'000u);
  EXPECT_EQ(s.inference_count, 2u);
  EXPECT_EQ(s.execution_count, 0u);  // no RecordExecution: requests and executions are apart
  EXPECT_EQ(s.fail.count, 4u);
  EXPECT_EQ(s.failures.cancelled, 1u);
  EXPECT_EQ(s.failures.bad_request, 1u);
  EXPECT_EQ(s.failures.rejected, 1u);
  EXPECT_EQ(s.failures.backend_error, 1u);

  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="fortune",outcome="success",version="1"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="fortune",outcome="cancelled",version="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="fortune",outcome="bad_request",version="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="fortune",outcome="rejected",version="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_requests_total{model="fortune",outcome="backend_error",version="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_request_duration_seconds_count{model="fortune",version="1"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_request_duration_seconds_bucket{model="fortune",version="1",le="0.025"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_queue_duration_seconds_bucket{model="fortune",version="1",le="0.001"} 1)"));
}

// Triton's nv_inference_* series are fed by the same calls as the snapshot, so
// /metrics and the statistics extension agree (durations: ns / 1000).
TEST(ModelStatisticsTest, TritonSeriesEqualTheSnapshot) {
  ServerMetrics metrics;
  ModelStatistics stats(4, metrics.ForModel("simple", 1));
  stats.RecordExecution(2, 3, 2'000, 50'000, 4'000);
  stats.RecordSuccess(90'000, 7'000, 2);
  stats.RecordSuccess(80'000, 6'000, 1);
  stats.RecordFailure(absl::StatusCode::kDeadlineExceeded, 1'000);
  stats.RecordFailure(absl::StatusCode::kInvalidArgument, 1'000);

  const StatisticsSnapshot s = stats.Snapshot();
  const std::string text = metrics.Serialize();
  auto series = [](const char* name, uint64_t value) {
    return StrCat(name, R"({model="simple",version="1"} )", value, "\n");
  };
  EXPECT_THAT(text, HasSubstr(series("nv_inference_request_success", s.success.count)));
  EXPECT_THAT(text, HasSubstr(series("nv_inference_count", s.inference_count)));
  EXPECT_THAT(text, HasSubstr(series("nv_inference_exec_count", s.execution_count)));
  EXPECT_THAT(text, HasSubstr(series("nv_inference_request_duration_us", s.success.ns / 1000)));
  EXPECT_THAT(text, HasSubstr(series("nv_inference_queue_duration_us", s.queue.ns / 1000)));
  EXPECT_THAT(text, HasSubstr(series("nv_inference_compute_input_duration_us", s.compute_input.ns / 1000)));
  EXPECT_THAT(text, HasSubstr(series("nv_inference_compute_infer_duration_us", s.compute_infer.ns / 1000)));
  EXPECT_THAT(text, HasSubstr(series("nv_inference_compute_output_duration_us", s.compute_output.ns / 1000)));
  EXPECT_EQ(s.compute_infer.ns, 100'000u);  // both requests charged the execution
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_failure{model="simple",reason="REJECTED",version="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(nv_inference_request_failure{model="simple",reason="OTHER",version="1"} 1)"));
}

// The frontend stages (decode, encode, write) are counted apart from Triton's stages;
// a write whose client was gone counts as a write failure too.
// As Triton: a hit is a success with no queue time, no inference and no execution; a
// miss counts only its cache time (the request's own success is recorded apart).
TEST(ModelStatisticsTest, CacheHitsAndMisses) {
  ModelStatistics stats(8);
  stats.RecordCacheHit(/*request_ns=*/5000, /*lookup_ns=*/300);
  stats.RecordCacheMiss(/*ns=*/700);
  stats.RecordCacheMiss(/*ns=*/100);
  const StatisticsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.cache_hit.count, 1u);
  EXPECT_EQ(s.cache_hit.ns, 300u);
  EXPECT_EQ(s.cache_miss.count, 2u);
  EXPECT_EQ(s.cache_miss.ns, 800u);
  EXPECT_EQ(s.success.count, 1u);
  EXPECT_EQ(s.success.ns, 5000u);
  EXPECT_EQ(s.queue.count, 1u);
  EXPECT_EQ(s.queue.ns, 0u);
  EXPECT_EQ(s.inference_count, 0u);
  EXPECT_EQ(s.execution_count, 0u);
  EXPECT_GT(s.last_inference_ms, 0u);
}

TEST(ModelStatisticsTest, RecordsFrontendStages) {
  ModelStatistics stats;
  stats.RecordDecode(1'000);
  stats.RecordDecode(3'000);
  stats.RecordEncode(500);
  stats.RecordWrite(2'000, true);
  stats.RecordWrite(7'000, false);
  const StatisticsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.decode.count, 2u);
  EXPECT_EQ(s.decode.ns, 4'000u);
  EXPECT_EQ(s.encode.count, 1u);
  EXPECT_EQ(s.encode.ns, 500u);
  EXPECT_EQ(s.write.count, 2u);
  EXPECT_EQ(s.write.ns, 9'000u);
  EXPECT_EQ(s.write_failed, 1u);
  EXPECT_EQ(s.success.count, 0u);  // stages are not outcomes
}

}  // namespace
}  // namespace infera
