#include "metrics/response_cache_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ResponseCacheMetricsTest, TritonsPerModelCountersAndTheStore) {
  std::string text;
  AppendResponseCacheMetrics({3, 4096, 1 << 20, 10, 6, 4, 1, 2},
                             {{"simple", 1, 6, 12'345, 4, 99'999}, {"odd\"name\\", 2, 0, 0, 0, 0}}, text);
  EXPECT_THAT(text, HasSubstr("# TYPE nv_cache_num_hits_per_model counter\n"));
  EXPECT_THAT(text, HasSubstr("nv_cache_num_hits_per_model{model=\"simple\",version=\"1\"} 6\n"));
  EXPECT_THAT(text, HasSubstr("nv_cache_hit_duration_per_model{model=\"simple\",version=\"1\"} 12\n"));  // us
  EXPECT_THAT(text, HasSubstr("nv_cache_num_misses_per_model{model=\"simple\",version=\"1\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("nv_cache_miss_duration_per_model{model=\"simple\",version=\"1\"} 99\n"));
  EXPECT_THAT(text, HasSubstr("nv_cache_num_hits_per_model{model=\"odd\\\"name\\\\\",version=\"2\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("infera_response_cache_entries 3\n"));
  EXPECT_THAT(text, HasSubstr("infera_response_cache_bytes 4096\n"));
  EXPECT_THAT(text, HasSubstr("infera_response_cache_capacity_bytes 1048576\n"));
  EXPECT_THAT(text, HasSubstr("infera_response_cache_evictions_total 1\n"));
  EXPECT_THAT(text, HasSubstr("infera_response_cache_refused_too_large_total 2\n"));
  EXPECT_THAT(text, Not(HasSubstr("\n\n")));
}

}  // namespace
}  // namespace infera
