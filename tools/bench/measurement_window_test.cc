#include "tools/bench/measurement_window.h"

#include <gtest/gtest.h>

#include "tools/bench/bench_options.h"

namespace infera::bench {
namespace {

TEST(MeasurementWindowTest, TimeWindowsEndAtTheInterval) {
  const WindowRule rule{MeasurementMode::kTimeWindows, 500, 50};
  EXPECT_FALSE(WindowComplete(rule, 499, 1000000));  // many requests do not end it early
  EXPECT_TRUE(WindowComplete(rule, 500, 0));         // nor does a lack of them extend it
}

TEST(MeasurementWindowTest, CountWindowsLastTheirMinimumThenUntilTheCount) {
  const WindowRule rule{MeasurementMode::kCountWindows, 1000, 50};
  EXPECT_FALSE(WindowComplete(rule, 999, 50));   // the minimum first
  EXPECT_FALSE(WindowComplete(rule, 1000, 49));  // then the count
  EXPECT_FALSE(WindowComplete(rule, 60000, 49)); // however long it takes
  EXPECT_TRUE(WindowComplete(rule, 1000, 50));
  EXPECT_TRUE(WindowComplete(rule, 5000, 51));
}

TEST(MeasurementWindowTest, RuleFromTheFlags) {
  auto time = ParseBenchOptions({"-m", "m"});
  ASSERT_TRUE(time.ok());
  EXPECT_EQ(MeasurementWindowRule(*time).mode, MeasurementMode::kTimeWindows);
  EXPECT_EQ(MeasurementWindowRule(*time).min_ms, 2000);

  auto count = ParseBenchOptions({"-m", "m", "--measurement-mode", "count_windows",
                                  "--measurement-request-count", "200"});
  ASSERT_TRUE(count.ok()) << count.status();
  const WindowRule rule = MeasurementWindowRule(*count);
  EXPECT_EQ(rule.mode, MeasurementMode::kCountWindows);
  EXPECT_EQ(rule.min_ms, 1000);  // perf_analyzer starts count windows at 1 s
  EXPECT_EQ(rule.request_count, 200);

  auto given = ParseBenchOptions({"-m", "m", "--measurement-mode=count_windows", "-p", "300"});
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_EQ(MeasurementWindowRule(*given).min_ms, 300);  // an explicit interval is the minimum
  EXPECT_EQ(MeasurementWindowRule(*given).request_count, 50);
}

}  // namespace
}  // namespace infera::bench
