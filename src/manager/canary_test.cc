#include "manager/canary.h"

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "manager/latency_histogram.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

inference::ModelConfig Config(const std::string& parameters) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString("name: 'm' " + parameters, &config));
  return config;
}

std::string Param(const std::string& key, const std::string& value) {
  return "parameters { key: '" + key + "' value { string_value: '" + value + "' } } ";
}

TEST(CanaryConfigTest, ReadsParametersWithDefaults) {
  auto none = CanaryConfigFromModelConfig(Config(""));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto canary = CanaryConfigFromModelConfig(
      Config(Param("canary.version", "2") + Param("canary.weight_percent", "25") +
             Param("canary.window_secs", "30")));
  ASSERT_TRUE(canary.ok()) << canary.status();
  EXPECT_EQ((*canary)->canary_version, 2);
  EXPECT_EQ((*canary)->weight_percent, 25);
  EXPECT_EQ((*canary)->window.count(), 30);
  EXPECT_EQ((*canary)->max_p99_increase_percent, 20);
  EXPECT_EQ((*canary)->max_error_rate_percent, 0.5);
  EXPECT_FALSE((*canary)->baseline_version.has_value());
}

TEST(CanaryConfigTest, BadValuesNameTheParameter) {
  EXPECT_THAT(std::string(CanaryConfigFromModelConfig(Config(Param("canary.version", "2") +
                                                             Param("canary.weight_percent", "150")))
                              .status().message()),
              HasSubstr("canary.weight_percent"));
  EXPECT_THAT(std::string(CanaryConfigFromModelConfig(Config(Param("canary.weight_percent", "5"))).status().message()),
              HasSubstr("needs parameters[canary.version]"));
  EXPECT_THAT(std::string(CanaryConfigFromModelConfig(Config(Param("canary.version", "2") +
                                                             Param("canary.baseline_version", "2")))
                              .status().message()),
              HasSubstr("equals"));
}

TEST(CanaryConfigTest, NonFiniteNumbersAreRefusedForEveryField) {
  // from_chars reads "nan" and "inf"; NaN passed every bound (each comparison is false)
  // and then made weight * 100 a NaN cast to uint64_t, or disabled the rollback.
  for (const char* key : {"canary.weight_percent", "canary.max_p99_increase_percent", "canary.min_p99_increase_ms",
                          "canary.max_error_rate_percent"}) {
    for (const char* value : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999"}) {
      auto canary = CanaryConfigFromModelConfig(Config(Param("canary.version", "2") + Param(key, value)));
      EXPECT_EQ(canary.status().code(), absl::StatusCode::kInvalidArgument) << key << "=" << value;
      EXPECT_THAT(std::string(canary.status().message()), HasSubstr(key)) << value;
    }
  }
}

TEST(CanaryConfigTest, IntegerFieldsTakeWholeNumbersOnly) {
  for (const char* key : {"canary.version", "canary.baseline_version", "canary.min_requests", "canary.window_secs"}) {
    for (const char* value : {"nan", "inf", "1.5", "2e3", "0x10", "", " 3", "-1", "99999999999999999999"}) {
      std::string params = std::string(key) == "canary.version" ? "" : Param("canary.version", "2");
      auto canary = CanaryConfigFromModelConfig(Config(params + Param(key, value)));
      EXPECT_EQ(canary.status().code(), absl::StatusCode::kInvalidArgument) << key << "=" << value;
      EXPECT_THAT(std::string(canary.status().message()), HasSubstr("is not an integer")) << key << "=" << value;
    }
  }
  auto canary = CanaryConfigFromModelConfig(Config(Param("canary.version", "3") + Param("canary.baseline_version", "1") +
                                                   Param("canary.min_requests", "50")));
  ASSERT_TRUE(canary.ok()) << canary.status();
  EXPECT_EQ((*canary)->canary_version, 3);
  EXPECT_EQ((*canary)->baseline_version, 1);
  EXPECT_EQ((*canary)->min_requests, 50);
}

TEST(CanaryConfigTest, UnknownCanaryKeysAreRefusedNamingTheKey) {
  auto misspelt = CanaryConfigFromModelConfig(Config(Param("canary.version", "2") + Param("canary.wieght_percent", "50")));
  EXPECT_EQ(misspelt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(misspelt.status().message()),
              HasSubstr("parameters[canary.wieght_percent] is not a canary setting (known: canary.version"));
  // Without canary.version too: the unknown key is what is named.
  EXPECT_THAT(std::string(CanaryConfigFromModelConfig(Config(Param("canary.", "1"))).status().message()),
              HasSubstr("parameters[canary.] is not a canary setting"));
  // Other parameters are not the canary's business.
  EXPECT_TRUE(CanaryConfigFromModelConfig(Config(Param("canary", "x") + Param("delay_ms", "nan"))).ok());
}

CanaryConfig Basic(double weight = 10) {
  CanaryConfig config;
  config.canary_version = 2;
  config.weight_percent = weight;
  config.min_requests = 100;
  config.window = std::chrono::seconds(10);
  return config;
}

TEST(CanaryControllerTest, RoutingIsStickyByKeyAndMatchesTheWeight) {
  CanaryController controller(Basic(10), 1);
  int canary = 0;
  for (int user = 0; user < 10000; ++user) {
    const std::string key = "user-" + std::to_string(user);
    const bool first = controller.Route(key);
    EXPECT_EQ(controller.Route(key), first);  // sticky
    canary += first;
  }
  EXPECT_NEAR(canary / 10000.0, 0.10, 0.015);  // a fixed set of keys: deterministic
}

TEST(CanaryControllerTest, UnkeyedRoutingGivesExactlyTheWeight) {
  for (double weight : {10.0, 20.0, 12.5, 0.5, 99.0}) {
    CanaryController controller(Basic(weight), 1);
    // Exactly the weight of every 100 (or, for fractional weights, 10,000) in a row,
    // and evenly spread: never more than ceil(weight) in any 100 consecutive.
    std::vector<bool> sides;
    for (int i = 0; i < 20000; ++i) sides.push_back(controller.Route(""));
    int total = 0;
    for (bool side : sides) total += side;
    EXPECT_EQ(total, static_cast<int>(weight * 200)) << "weight " << weight;
    int window = 0;
    for (size_t i = 0; i < sides.size(); ++i) {
      window += sides[i] - (i >= 100 ? sides[i - 100] : 0);
      ASSERT_LE(window, static_cast<int>(std::ceil(weight))) << "weight " << weight << " at " << i;
    }
  }
}

TEST(CanaryControllerTest, UnkeyedRoutingIsExactUnderConcurrency) {
  CanaryController controller(Basic(20), 1);
  std::atomic<int> canary{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2500; ++i) canary += controller.Route("");
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(canary.load(), 2000);
}

// Cumulative sample with `requests` requests, `errors` errors, all at `latency_ms`.
CanarySample Sample(uint64_t requests, uint64_t errors, uint64_t latency_ms) {
  LatencyHistogram h;
  for (uint64_t i = 0; i < requests - errors; ++i) h.Record(latency_ms * 1'000'000);
  return {requests, errors, h.Snapshot()};
}

TEST(CanaryControllerTest, RollsBackOnErrorsOnlyWithEnoughRequests) {
  FakeClock clock;
  CanaryController controller(Basic(), 1);
  controller.Observe(clock.Now(), Sample(1, 0, 10), Sample(1, 0, 10));
  clock.Advance(std::chrono::seconds(1));
  controller.Observe(clock.Now(), Sample(500, 0, 10), Sample(50, 5, 10));  // too few canary requests
  EXPECT_EQ(controller.state(), CanaryState::kActive);
  clock.Advance(std::chrono::seconds(1));
  controller.Observe(clock.Now(), Sample(1000, 0, 10), Sample(120, 6, 10));  // 5 % errors
  EXPECT_EQ(controller.state(), CanaryState::kRolledBack);
  EXPECT_THAT(controller.reason(), HasSubstr("error rate"));
  EXPECT_FALSE(controller.Route("anyone"));  // weight 0 at once
}

TEST(CanaryControllerTest, RollsBackWhenP99IsTooMuchHigher) {
  FakeClock clock;
  CanaryController controller(Basic(), 1);
  controller.Observe(clock.Now(), Sample(1, 0, 10), Sample(1, 0, 10));
  clock.Advance(std::chrono::seconds(1));
  controller.Observe(clock.Now(), Sample(300, 0, 10), Sample(200, 0, 11));  // +10 %: fine
  EXPECT_EQ(controller.state(), CanaryState::kActive);
  clock.Advance(std::chrono::seconds(20));  // the old window slides out
  controller.Observe(clock.Now(), Sample(600, 0, 10), Sample(400, 0, 11));
  clock.Advance(std::chrono::seconds(1));
  controller.Observe(clock.Now(), Sample(900, 0, 10), Sample(600, 0, 30));  // 3x slower now
  EXPECT_EQ(controller.state(), CanaryState::kRolledBack);
  EXPECT_THAT(controller.reason(), HasSubstr("P99"));
}

TEST(CanaryControllerTest, SmallAbsoluteDifferencesAreNoise) {
  FakeClock clock;
  CanaryController controller(Basic(), 1);
  controller.Observe(clock.Now(), Sample(1, 0, 2), Sample(1, 0, 2));
  clock.Advance(std::chrono::seconds(1));
  controller.Observe(clock.Now(), Sample(500, 0, 2), Sample(200, 0, 3));  // +50 % but only +1 ms
  EXPECT_EQ(controller.state(), CanaryState::kActive);
}

TEST(CanaryControllerTest, HealthyCanaryStaysAndCanBePromoted) {
  FakeClock clock;
  CanaryController controller(Basic(), 1);
  for (int s = 1; s <= 30; ++s) {
    controller.Observe(clock.Now(), Sample(100 * s, 0, 10), Sample(20 * s, 0, 10));
    clock.Advance(std::chrono::seconds(1));
  }
  EXPECT_EQ(controller.state(), CanaryState::kActive);
  controller.Promote();
  EXPECT_EQ(controller.state(), CanaryState::kPromoted);
  EXPECT_TRUE(controller.Route("anyone"));
}

}  // namespace
}  // namespace infera
