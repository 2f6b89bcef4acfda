#include "scheduling/scheduling_options.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

TEST(SchedulingOptionsTest, WithoutBatchingEveryRequestRunsAloneInABoundedQueue) {
  auto options = SchedulingOptionsFromConfig(Config("name: 'm' max_batch_size: 8"), 77);
  ASSERT_TRUE(options.ok());
  EXPECT_FALSE(options->batching);
  EXPECT_EQ(options->max_batch_rows, 0);
  ASSERT_EQ(options->num_levels(), 1);
  EXPECT_EQ(options->policies[0].max_queue_size, 77u);
  EXPECT_TRUE(options->policies[0].allow_timeout_override);
}

TEST(SchedulingOptionsTest, ReadsTritonDynamicBatchingFields) {
  auto options = SchedulingOptionsFromConfig(Config(R"pb(
    name: "m" max_batch_size: 16
    dynamic_batching {
      preferred_batch_size: [ 8, 4 ] max_queue_delay_microseconds: 500 preserve_ordering: true
      priority_levels: 3 default_priority_level: 2
      default_queue_policy { max_queue_size: 10 default_timeout_microseconds: 1000 timeout_action: DELAY }
      priority_queue_policy { key: 1 value { max_queue_size: 0 allow_timeout_override: true } }
    })pb"), 99);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->batching);
  EXPECT_EQ(options->max_batch_rows, 16);
  EXPECT_EQ(options->preferred_batch_sizes, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(options->max_queue_delay.count(), 500);
  EXPECT_TRUE(options->preserve_ordering);
  ASSERT_EQ(options->num_levels(), 3);
  EXPECT_EQ(options->default_priority_level, 2);
  EXPECT_EQ(options->policies[0].max_queue_size, 99u);  // 0 means the server default
  EXPECT_TRUE(options->policies[0].allow_timeout_override);
  EXPECT_EQ(options->policies[1].max_queue_size, 10u);
  EXPECT_EQ(options->policies[1].timeout_action, QueuePolicy::TimeoutAction::kDelay);
  EXPECT_EQ(options->policies[2].default_timeout.count(), 1000);
  EXPECT_FALSE(options->latency_slo.has_value());
}

TEST(SchedulingOptionsTest, LatencySloParameter) {
  auto options = SchedulingOptionsFromConfig(
      Config("name: 'm' max_batch_size: 8 dynamic_batching { } "
             "parameters { key: 'latency_slo_ms' value { string_value: '12.5' } }"), 10);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->latency_slo->count(), 12500);
  for (const char* bad : {"abc", "0", "-3", ""}) {
    auto result = SchedulingOptionsFromConfig(
        Config(std::string("name: 'm' max_batch_size: 8 dynamic_batching { } "
                           "parameters { key: 'latency_slo_ms' value { string_value: '") + bad + "' } }"), 10);
    EXPECT_THAT(std::string(result.status().message()), ::testing::HasSubstr("latency_slo_ms")) << bad;
  }
  auto without_batching = SchedulingOptionsFromConfig(
      Config("name: 'm' max_batch_size: 8 parameters { key: 'latency_slo_ms' value { string_value: '5' } }"), 10);
  EXPECT_THAT(std::string(without_batching.status().message()), ::testing::HasSubstr("dynamic_batching"));
}

TEST(SchedulingOptionsTest, ValuesPastTheirBoundsAreRejectedNamingFieldAndLimit) {
  struct Case {
    const char* batching;
    const char* field;
    const char* limit;
  };
  for (const Case& c : {
           Case{"priority_levels: 18446744073709551615", "dynamic_batching.priority_levels", "256"},
           Case{"priority_levels: 1000000", "dynamic_batching.priority_levels", "256"},
           Case{"max_queue_delay_microseconds: 9223372036854775807",
                "dynamic_batching.max_queue_delay_microseconds", "3600000000"},
           Case{"default_queue_policy { default_timeout_microseconds: 18446744073709551615 }",
                "dynamic_batching.default_queue_policy.default_timeout_microseconds", "86400000000"},
           Case{"priority_levels: 2 priority_queue_policy { key: 2 value { max_queue_size: 4294967295 } }",
                "dynamic_batching.priority_queue_policy[2].max_queue_size", "16777216"},
       }) {
    auto result = SchedulingOptionsFromConfig(
        Config(std::string("name: 'm' max_batch_size: 8 dynamic_batching { ") + c.batching + " }"), 10);
    ASSERT_FALSE(result.ok()) << c.batching;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(result.status().message()), ::testing::HasSubstr(c.field));
    EXPECT_THAT(std::string(result.status().message()), ::testing::HasSubstr(c.limit));
  }
  // At the bounds: accepted, one policy per level.
  auto at_bounds = SchedulingOptionsFromConfig(
      Config("name: 'm' max_batch_size: 8 dynamic_batching { priority_levels: 256 "
             "max_queue_delay_microseconds: 3600000000 "
             "default_queue_policy { default_timeout_microseconds: 86400000000 } }"), 10);
  ASSERT_TRUE(at_bounds.ok()) << at_bounds.status();
  EXPECT_EQ(at_bounds->num_levels(), 256);
}

TEST(SchedulingOptionsTest, DefaultLevelIsOneWithoutPriorityLevels) {
  // Triton ignores default_priority_level when there are no levels; a value past the
  // single level must not index past the queue's levels.
  auto options = SchedulingOptionsFromConfig(
      Config("name: 'm' max_batch_size: 8 dynamic_batching { default_priority_level: 7 }"), 10);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->num_levels(), 1);
  EXPECT_EQ(options->default_priority_level, 1);
}

}  // namespace
}  // namespace infera
