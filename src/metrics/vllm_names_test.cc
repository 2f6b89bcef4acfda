#include "metrics/vllm_names.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/server_metrics.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(OneTwoFiveBucketsTest, MatchesVllmsBuild125Buckets) {
  EXPECT_EQ(OneTwoFiveBuckets(100), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_EQ(OneTwoFiveBuckets(2048), (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}));
  EXPECT_EQ(OneTwoFiveBuckets(1), (std::vector<double>{1}));
  EXPECT_EQ(OneTwoFiveBuckets(0), (std::vector<double>{1}));  // never an empty histogram
  const std::vector<double> huge = OneTwoFiveBuckets(INT64_MAX);  // no overflow
  EXPECT_EQ(huge.back(), 5e18);
}

TEST(VllmNamesTest, EveryLlmFamilyHasItsVllmNameWithVllmsLabelsAndTheSameValues) {
  ServerMetrics metrics;
  auto llm = metrics.ForLlm("fortune", 512);
  llm->ObserveTimeToFirstToken(0.03);
  llm->ObserveInterTokenLatency(0.02);
  llm->ObserveInterTokenLatency(0.2);
  llm->ObserveQueueTime(0.4);
  llm->ObserveFinished(LlmFinish::kLength, 0.9, 7, 16);
  llm->ObserveFinished(LlmFinish::kAbort, 2.0, 3, 1);
  llm->AddPromptTokens(10);
  llm->AddGenerationTokens(17);
  llm->SetRunning(2);
  llm->SetWaiting(3);
  llm->SetKvCacheUsage(0.5);
  llm->AddPreemptions(4);
  llm->ObservePhases(0.2, 0.7, 0.9);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(vllm:num_requests_running{model_name="fortune",engine="0"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:num_requests_waiting{model_name="fortune",engine="0"} 3)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:gpu_cache_usage_perc{model_name="fortune",engine="0"} 0.5)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:kv_cache_usage_perc{model_name="fortune",engine="0"} 0.5)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:prompt_tokens_total{model_name="fortune",engine="0"} 10)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:generation_tokens_total{model_name="fortune",engine="0"} 17)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:num_preemptions_total{model_name="fortune",engine="0"} 4)"));
  EXPECT_THAT(text, HasSubstr(
                        R"(vllm:request_success_total{finished_reason="length",model_name="fortune",engine="0"} 1)"));
  EXPECT_THAT(text, HasSubstr(
                        R"(vllm:request_success_total{finished_reason="abort",model_name="fortune",engine="0"} 1)"));
  EXPECT_THAT(text, HasSubstr(
                        R"(vllm:request_success_total{finished_reason="stop",model_name="fortune",engine="0"} 0)"));
  EXPECT_THAT(text, HasSubstr(
                        R"(infera_llm_requests_finished_total{finished_reason="length",model="fortune"} 1)"));
  // Histograms: vLLM's bounds, the same counts under both names.
  EXPECT_THAT(text, HasSubstr(R"(vllm:time_to_first_token_seconds_bucket{model_name="fortune",engine="0",le="0.02"} 0)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:time_to_first_token_seconds_bucket{model_name="fortune",engine="0",le="0.04"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:time_to_first_token_seconds_bucket{model_name="fortune",engine="0",le="2560"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(infera_llm_time_to_first_token_seconds_bucket{model="fortune",le="0.04"} 1)"));
  for (const char* name : {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"}) {
    EXPECT_THAT(text, HasSubstr(std::string(name) + R"(_bucket{model_name="fortune",engine="0",le="0.025"} 1)"));
    EXPECT_THAT(text, HasSubstr(std::string(name) + R"(_bucket{model_name="fortune",engine="0",le="80"} 2)"));
    EXPECT_THAT(text, HasSubstr(std::string(name) + R"(_count{model_name="fortune",engine="0"} 2)"));
    EXPECT_THAT(text, HasSubstr("# TYPE " + std::string(name) + " histogram"));
  }
  EXPECT_THAT(text, HasSubstr(R"(vllm:e2e_request_latency_seconds_bucket{model_name="fortune",engine="0",le="1"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:e2e_request_latency_seconds_bucket{model_name="fortune",engine="0",le="7680"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_queue_time_seconds_bucket{model_name="fortune",engine="0",le="0.5"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_prompt_tokens_bucket{model_name="fortune",engine="0",le="5"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_prompt_tokens_bucket{model_name="fortune",engine="0",le="500"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_prompt_tokens_sum{model_name="fortune",engine="0"} 10)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_generation_tokens_bucket{model_name="fortune",engine="0",le="10"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_generation_tokens_bucket{model_name="fortune",engine="0",le="20"} 2)"));
  EXPECT_THAT(text, Not(HasSubstr(R"(vllm:request_generation_tokens_bucket{model_name="fortune",engine="0",le="1000"})")));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_prefill_time_seconds_bucket{model_name="fortune",engine="0",le="0.3"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_decode_time_seconds_bucket{model_name="fortune",engine="0",le="0.5"} 0)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_decode_time_seconds_bucket{model_name="fortune",engine="0",le="0.8"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(vllm:request_inference_time_seconds_sum{model_name="fortune",engine="0"} 0.9)"));
  EXPECT_THAT(text, HasSubstr("# TYPE vllm:request_success_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE vllm:num_requests_running gauge"));
  // Unloading the model removes both views.
  llm.reset();
  const std::string after = metrics.Serialize();
  EXPECT_THAT(after, Not(HasSubstr(R"(model_name="fortune")")));
  EXPECT_THAT(after, Not(HasSubstr(R"(model="fortune")")));
}

TEST(VllmNamesTest, TableNamesExistAndAreUnique) {
  ServerMetrics metrics;
  auto llm = metrics.ForLlm("m", 16);
  const std::string text = metrics.Serialize();
  std::set<std::string> vllm_names;
  for (const VllmName& name : VllmNames()) {
    EXPECT_TRUE(vllm_names.insert(name.vllm_name).second) << name.vllm_name;
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + name.infera_name + " ")) << name.infera_name;
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + name.vllm_name + " ")) << name.vllm_name;
  }
}

TEST(VllmNamesTest, NoLlmNoVllmFamilies) {
  ServerMetrics metrics;
  EXPECT_THAT(metrics.Serialize(), Not(HasSubstr("vllm:")));
}

TEST(VllmNamesTest, OtherFamiliesAreLeftAlone) {
  std::vector<prometheus::MetricFamily> families(1);
  families[0].name = "infera_requests_total";
  families[0].type = prometheus::MetricType::Counter;
  families[0].metric.resize(1);
  families[0].metric[0].label = {{"model", "a"}};
  AppendVllmFamilies(families);
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].metric[0].label.size(), 1u);
  EXPECT_EQ(families[0].metric[0].label[0].name, "model");
}

}  // namespace
}  // namespace infera
