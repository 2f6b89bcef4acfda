#include "tools/bench/server_stats.h"

#include <gtest/gtest.h>

namespace infera::bench {
namespace {

constexpr char kStats[] = R"({"model_stats":[
  {"name":"other","version":"1","inference_count":5,"inference_stats":{"success":{"count":5,"ns":5}}},
  {"name":"simple","version":"1","inference_count":400,"execution_count":100,
   "inference_stats":{"success":{"count":200,"ns":10000000},"fail":{"count":2,"ns":1000},
     "queue":{"count":200,"ns":4000000},"compute_input":{"count":200,"ns":200000},
     "compute_infer":{"count":200,"ns":"3000000"},"compute_output":{"count":200,"ns":200000}}}]})";

TEST(ServerStatsTest, ParsesTritonShape) {
  auto s = ParseServerStats(kStats, "simple", "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->inference_count, 400);
  EXPECT_EQ(s->execution_count, 100);
  EXPECT_EQ(s->success.count, 200);
  EXPECT_EQ(s->compute_infer.ns, 3000000);  // a string, as protobuf JSON writes uint64
  EXPECT_EQ(s->fail.count, 2);
}

TEST(ServerStatsTest, MissingModelOrBadJson) {
  EXPECT_EQ(ParseServerStats(kStats, "absent", "").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseServerStats(kStats, "simple", "2").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseServerStats("{\"error\":\"no route\"}", "simple", "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ServerStatsTest, BreakdownOfADelta) {
  auto later = ParseServerStats(kStats, "simple", "1");
  ASSERT_TRUE(later.ok());
  ServerStats earlier;
  earlier.success = {100, 5000000};
  earlier.queue = {100, 2000000};
  earlier.compute_input = {100, 100000};
  earlier.compute_infer = {100, 1500000};
  earlier.compute_output = {100, 100000};
  earlier.inference_count = 200;
  earlier.execution_count = 50;
  const ServerBreakdown b = ComputeBreakdown(later->Minus(earlier));
  EXPECT_EQ(b.requests, 100);
  EXPECT_DOUBLE_EQ(b.request_us, 50);
  EXPECT_DOUBLE_EQ(b.queue_us, 20);
  EXPECT_DOUBLE_EQ(b.compute_input_us, 1);
  EXPECT_DOUBLE_EQ(b.compute_infer_us, 15);
  EXPECT_DOUBLE_EQ(b.compute_output_us, 1);
  EXPECT_DOUBLE_EQ(b.overhead_us, 13);
  EXPECT_DOUBLE_EQ(b.avg_batch_rows, 4);
}

TEST(ServerStatsTest, EmptyDeltaIsZeros) {
  const ServerBreakdown b = ComputeBreakdown(ServerStats());
  EXPECT_EQ(b.requests, 0);
  EXPECT_EQ(b.request_us, 0);
  EXPECT_EQ(b.overhead_us, 0);
}

}  // namespace
}  // namespace infera::bench
