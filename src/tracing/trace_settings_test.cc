#include "tracing/trace_settings.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Change = TraceSettings::Change;
using Values = std::vector<std::string>;

constexpr char kSampled[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr char kNotSampled[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";

TraceSettings::Initial On(int64_t rate, int64_t count = -1) {
  TraceSettings::Initial initial;
  initial.level = TraceSettings::Level::kTimestamps;
  initial.rate = rate;
  initial.count = count;
  return initial;
}

int Traced(TraceSettings& settings, std::string_view model, int requests) {
  int traced = 0;
  for (int i = 0; i < requests; ++i) traced += settings.Sample(model, std::nullopt).has_value();
  return traced;
}

std::string Message(const absl::StatusOr<TraceSettings::Map>& result) {
  return std::string(result.status().message());
}

TEST(TraceSettingsTest, ReportsEverySettingByTritonsNames) {
  TraceSettings settings(On(100), true);
  const TraceSettings::Map map = settings.Get("");
  EXPECT_THAT(map.at("trace_level"), ElementsAre("TIMESTAMPS"));
  EXPECT_THAT(map.at("trace_rate"), ElementsAre("100"));
  EXPECT_THAT(map.at("trace_count"), ElementsAre("-1"));
  EXPECT_THAT(map.at("log_frequency"), ElementsAre("0"));
  EXPECT_THAT(map.at("trace_file"), ElementsAre(""));
  EXPECT_THAT(map.at("trace_mode"), ElementsAre("opentelemetry"));
  EXPECT_EQ(map.size(), 6u);
}

TEST(TraceSettingsTest, RateTracesEveryNthRequest) {
  TraceSettings settings(On(4), true);
  EXPECT_EQ(Traced(settings, "m", 12), 3);
  ASSERT_TRUE(settings.Update("", {Change{"trace_rate", Values{"1"}}}).ok());
  EXPECT_EQ(Traced(settings, "m", 5), 5);
  ASSERT_TRUE(settings.Update("", {Change{"trace_rate", Values{"0"}}}).ok());
  EXPECT_EQ(Traced(settings, "m", 5), 0);
}

TEST(TraceSettingsTest, TraceparentDecidesWhenPresent) {
  TraceSettings settings(On(0), true);
  auto joined = settings.Sample("m", std::string_view(kSampled));
  ASSERT_TRUE(joined.has_value());
  EXPECT_EQ(ToHex(joined->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_FALSE(settings.Sample("m", std::string_view(kNotSampled)).has_value());
  EXPECT_FALSE(settings.Sample("m", std::nullopt).has_value());  // rate 0
  ASSERT_TRUE(settings.Update("", {Change{"trace_rate", Values{"1"}}}).ok());
  auto root = settings.Sample("m", std::string_view("not a traceparent"));
  ASSERT_TRUE(root.has_value());
  EXPECT_NE(ToHex(root->trace_id), std::string(32, '0'));
}

TEST(TraceSettingsTest, LevelOffTracesNothingEvenWithASampledParent) {
  TraceSettings settings(On(1), true);
  ASSERT_TRUE(settings.Update("", {Change{"trace_level", Values{"OFF"}}}).ok());
  EXPECT_FALSE(settings.Sample("m", std::string_view(kSampled)).has_value());
  EXPECT_EQ(Traced(settings, "m", 3), 0);
}

TEST(TraceSettingsTest, CountStopsTracingAndCountsDown) {
  TraceSettings settings(On(1, 2), true);
  EXPECT_EQ(Traced(settings, "m", 5), 2);
  EXPECT_THAT(settings.Get("").at("trace_count"), ElementsAre("0"));
  EXPECT_FALSE(settings.Sample("m", std::string_view(kSampled)).has_value());
}

TEST(TraceSettingsTest, ModelOverridesSettingBySettingAndClearsWithNull) {
  TraceSettings settings(On(1), true);
  auto updated = settings.Update("a", {Change{"trace_level", Values{"OFF"}}});
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_THAT(updated->at("trace_level"), ElementsAre("OFF"));
  EXPECT_THAT(updated->at("trace_rate"), ElementsAre("1"));  // follows the global one
  EXPECT_EQ(Traced(settings, "a", 3), 0);
  EXPECT_EQ(Traced(settings, "b", 3), 3);
  ASSERT_TRUE(settings.Update("", {Change{"trace_rate", Values{"2"}}}).ok());
  EXPECT_THAT(settings.Get("a").at("trace_rate"), ElementsAre("2"));
  // null (nullopt) and an empty list both clear a model's setting.
  ASSERT_TRUE(settings.Update("a", {Change{"trace_level", std::nullopt}}).ok());
  EXPECT_THAT(settings.Get("a").at("trace_level"), ElementsAre("TIMESTAMPS"));
  ASSERT_TRUE(settings.Update("a", {Change{"trace_count", Values{"1"}}}).ok());
  EXPECT_THAT(settings.Get("a").at("trace_count"), ElementsAre("1"));
  ASSERT_TRUE(settings.Update("a", {Change{"trace_count", Values{}}}).ok());
  EXPECT_THAT(settings.Get("a").at("trace_count"), ElementsAre("-1"));
}

TEST(TraceSettingsTest, ModelRateHasItsOwnCounter) {
  TraceSettings settings(On(1000), true);
  ASSERT_TRUE(settings.Update("hot", {Change{"trace_rate", Values{"2"}}}).ok());
  EXPECT_EQ(Traced(settings, "hot", 4), 2);
  EXPECT_EQ(Traced(settings, "cold", 4), 0);  // the global counter: 4 of 1000 seen
}

TEST(TraceSettingsTest, RejectsWhatItCannotHonourAndChangesNothing) {
  TraceSettings settings(On(10), true);
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_level", Values{"TENSORS"}}})),
              HasSubstr("TENSORS is not supported"));
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_level", Values{"LOUD"}}})),
              HasSubstr("unknown trace_level 'LOUD'"));
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_rate", Values{"-1"}}})),
              HasSubstr("'trace_rate' must be an integer in [0, 2147483647], got '-1'"));
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_rate", Values{"1x"}}})),
              HasSubstr("'trace_rate' must be an integer"));
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_rate", Values{"99999999999999999999"}}})),
              HasSubstr("'trace_rate' must be an integer"));
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_count", Values{"-2"}}})),
              HasSubstr("'trace_count' must be an integer in [-1, 2147483647]"));
  for (const char* name : {"trace_count", "trace_rate", "log_frequency"}) {  // Triton's out of range
    EXPECT_THAT(Message(settings.Update("m", {Change{name, Values{"10000000000"}}})), HasSubstr("must be an integer in"));
  }
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_rate", Values{"1", "2"}}})),
              HasSubstr("takes exactly one value, got 2"));
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_file", Values{"/tmp/t.json"}}})),
              HasSubstr("trace file location can not be updated through network protocol"));
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_mode", Values{"triton"}}})),
              HasSubstr("trace_mode can not be updated through network protocol"));
  EXPECT_THAT(Message(settings.Update("", {Change{"sample", Values{"1"}}})),
              HasSubstr("unknown trace setting 'sample'"));
  // All or nothing: a good change next to a bad one is not applied.
  EXPECT_FALSE(settings.Update("", {Change{"trace_count", Values{"5"}}, Change{"trace_rate", Values{"x"}}}).ok());
  EXPECT_THAT(settings.Get("").at("trace_count"), ElementsAre("-1"));
  EXPECT_TRUE(settings.Update("", {Change{"trace_mode", Values{"opentelemetry"}}}).ok());
}

TEST(TraceSettingsTest, TimestampsNeedAnExporter) {
  TraceSettings settings(On(1), /*exporter=*/false);
  EXPECT_THAT(settings.Get("").at("trace_level"), ElementsAre("OFF"));
  EXPECT_FALSE(settings.Sample("m", std::string_view(kSampled)).has_value());
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_level", Values{"TIMESTAMPS"}}})),
              HasSubstr("--trace-endpoint"));
  EXPECT_TRUE(settings.Update("", {Change{"trace_rate", Values{"5"}}}).ok());
}

TEST(TraceSettingsTest, FractionMapsOntoARate) {
  EXPECT_EQ(TraceSettings::FromFraction(0.01, true).rate, 100);
  EXPECT_EQ(TraceSettings::FromFraction(1, true).rate, 1);
  EXPECT_EQ(TraceSettings::FromFraction(0, true).rate, 0);
  EXPECT_EQ(TraceSettings::FromFraction(0.3, true).rate, 3);
  EXPECT_EQ(TraceSettings::FromFraction(0.5, false).level, TraceSettings::Level::kOff);
}


TEST(TraceSettingsTest, ClearingAGlobalSettingRestoresItsStartValue) {
  TraceSettings settings(On(7), /*exporter=*/true);
  ASSERT_TRUE(settings.Update("", {Change{"trace_rate", Values{"3"}}, Change{"trace_count", Values{"9"}},
                                   Change{"log_frequency", Values{"5"}}, Change{"trace_level", Values{"OFF"}}})
                  .ok());
  ASSERT_TRUE(settings.Update("m", {Change{"trace_rate", Values{"2"}}}).ok());
  absl::StatusOr<TraceSettings::Map> cleared =
      settings.Update("", {Change{"trace_rate", std::nullopt}, Change{"trace_count", std::nullopt},
                           Change{"log_frequency", Values{}}, Change{"trace_level", std::nullopt},
                           Change{"trace_file", std::nullopt}, Change{"trace_mode", std::nullopt}});
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_THAT(cleared->at("trace_rate"), ElementsAre("7"));
  EXPECT_THAT(cleared->at("trace_count"), ElementsAre("-1"));
  EXPECT_THAT(cleared->at("log_frequency"), ElementsAre("0"));
  EXPECT_THAT(cleared->at("trace_level"), ElementsAre("TIMESTAMPS"));
  // A model's own setting is untouched by clearing the global one.
  EXPECT_THAT(settings.Get("m").at("trace_rate"), ElementsAre("2"));
}

TraceSettings TritonMode(TraceSettings::Initial initial) {
  return TraceSettings(initial, true, TraceSettings::Output{TraceSettings::Mode::kTriton, "trace.json"});
}

TEST(TraceSettingsTest, TritonModeReadsBackItsFileAndMode) {
  TraceSettings settings = TritonMode(On(1));
  const TraceSettings::Map map = settings.Get("simple");
  EXPECT_THAT(map.at("trace_file"), ElementsAre("trace.json"));
  EXPECT_THAT(map.at("trace_mode"), ElementsAre("triton"));
  EXPECT_TRUE(settings.Update("", {Change{"trace_mode", Values{"triton"}}}).ok());
  EXPECT_THAT(Message(settings.Update("", {Change{"trace_mode", Values{"opentelemetry"}}})),
              HasSubstr("can not be updated"));
  EXPECT_THAT(Message(settings.Update("simple", {Change{"trace_file", Values{"model.log"}}})),
              HasSubstr("trace file location can not be updated through network protocol"));
  // Clearing the file (Triton's clients send null) is accepted and changes nothing.
  auto cleared = settings.Update("", {Change{"trace_file", std::nullopt}});
  ASSERT_TRUE(cleared.ok());
  EXPECT_THAT(cleared->at("trace_file"), ElementsAre("trace.json"));
}

TEST(TraceSettingsTest, TritonModeTakesTensorsAndReadsLevelsBackInOrder) {
  TraceSettings settings = TritonMode(On(1));
  auto both = settings.Update("", {Change{"trace_level", Values{"TENSORS", "TIMESTAMPS"}}});
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_THAT(both->at("trace_level"), ElementsAre("TIMESTAMPS", "TENSORS"));
  auto sampled = settings.SampleTrace("m", std::nullopt);
  ASSERT_TRUE(sampled.has_value());
  EXPECT_TRUE(sampled->timestamps);
  EXPECT_TRUE(sampled->tensors);
  ASSERT_TRUE(settings.Update("m", {Change{"trace_level", Values{"TENSORS"}},
                                    Change{"log_frequency", Values{"3"}}}).ok());
  sampled = settings.SampleTrace("m", std::nullopt);
  ASSERT_TRUE(sampled.has_value());
  EXPECT_FALSE(sampled->timestamps);
  EXPECT_EQ(sampled->log_frequency, 3);
  EXPECT_EQ(settings.SampleTrace("other", std::nullopt)->log_frequency, 0);
}

TEST(TraceSettingsTest, TritonModeCountsRequestsAsTritonAndIgnoresTraceparents) {
  TraceSettings settings = TritonMode(On(3));
  std::vector<int> traced;
  for (int i = 1; i <= 9; ++i) {
    if (settings.Sample("m", std::string_view(kSampled)).has_value()) traced.push_back(i);
  }
  EXPECT_EQ(traced, (std::vector<int>{3, 6, 9}));  // the rate-th first; the sampled parent ignored
  EXPECT_FALSE(settings.Sample("m", std::string_view(kNotSampled)).has_value());
}

}  // namespace
}  // namespace infera
