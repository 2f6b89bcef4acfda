#include "tools/diagnose/diagnose_command.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::diagnose {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DiagnoseCommandTest, ParsesFlags) {
  auto options = ParseDiagnoseArgs({"--url", "http://10.0.0.2:8123/", "-m", "my model", "--model-version", "3",
                                    "--window", "30", "--json"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->host, "10.0.0.2");
  EXPECT_EQ(options->port, 8123);
  EXPECT_TRUE(options->json);
  EXPECT_EQ(DiagnosisPath(*options), "/v2/models/my%20model/versions/3/diagnosis?window=30");
  auto defaults = ParseDiagnoseArgs({"-m", "m"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(DiagnosisPath(*defaults), "/v2/models/m/diagnosis");
}

// The shared CLI convention: perf_analyzer's -u HOST:PORT, -m/--model-name (--model kept),
// -x/--model-version, --flag=value.
TEST(DiagnoseCommandTest, ParsesTheSharedConvention) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-u", "localhost:8123", "-m", "fortune", "-x", "2"},
        {"--url", "http://localhost:8123", "--model-name", "fortune", "--model-version", "2"},
        {"--url=localhost:8123", "--model=fortune", "--model-version=2"}}) {
    auto options = ParseDiagnoseArgs(args);
    ASSERT_TRUE(options.ok()) << options.status();
    EXPECT_EQ(options->host, "localhost");
    EXPECT_EQ(options->port, 8123);
    EXPECT_EQ(DiagnosisPath(*options), "/v2/models/fortune/versions/2/diagnosis");
  }
  auto v6 = ParseDiagnoseArgs({"-u", "[::1]:8000", "-m", "m"});
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
}

TEST(DiagnoseCommandTest, HelpFitsOneHundredColumns) {
  const std::string help = DiagnoseHelp();
  size_t start = 0;
  while (start < help.size()) {
    const size_t end = help.find('\n', start);
    const std::string line = help.substr(start, end - start);
    EXPECT_LE(line.size(), 100u) << line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  EXPECT_THAT(help, HasSubstr("-u, --url HOST:PORT"));
  EXPECT_THAT(help, HasSubstr("-m, --model-name NAME"));
  EXPECT_THAT(help, HasSubstr("LLMs"));
}

TEST(DiagnoseCommandTest, BadFlagsNameTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "-m/--model-name MODEL is required"},
      {{"-m", "m", "--url", "https://h:1"}, "--url"},
      {{"-m", "m", "-u", "h"}, "HOST:PORT"},
      {{"-m", "m", "-u", "h:99999"}, "1..65535"},
      {{"-m", ""}, "-m needs a model name"},
      {{"-m", "m", "--json=1"}, "--json takes no value"},
      {{"-m", "m", "stray"}, "unexpected argument 'stray'"},
      {{"-m", "m", "--url", "http://h"}, "--url"},
      {{"-m", "m", "--url", "http://h:0"}, "--url"},
      {{"-m", "m", "--url", "http://h:1/x"}, "--url"},
      {{"-m", "m", "--window", "0"}, "--window"},
      {{"-m", "m", "--window", "301"}, "--window"},
      {{"-m", "m", "--model-version", "x"}, "--model-version"},
      {{"-m"}, "-m needs a value"},
      {{"-m", "m", "--bogus"}, "'--bogus'"},
  };
  for (const auto& [args, expected] : cases) {
    auto options = ParseDiagnoseArgs(args);
    ASSERT_FALSE(options.ok()) << expected;
    EXPECT_THAT(options.status().message(), HasSubstr(expected));
  }
}

TEST(DiagnoseCommandTest, RendersTheTable) {
  const std::string json = R"({"model":"m","version":"1","window_seconds":60.0,"requests":1200,
    "bottleneck":{"class":"queueing","summary":"instances are saturated"},
    "evidence":[{"name":"instance_utilisation","value":0.97,"unit":"ratio","detail":"58 s busy"},
                {"name":"request_rate","value":20.0,"unit":"req/s","detail":"1200 requests"}],
    "actions":[{"action":"add 1 instance","expected_effect":"utilisation 97 % -> about 48 %"}],
    "rate_per_second":20.0,"concurrency":3.5,
    "stages":{"server_us":1000,"queue":{"mean_us":620,"share":0.62}},
    "batch_sizes":{"1":1000,"2":100},"mean_batch_size":1.09,
    "instances":{"count":1,"utilisation":0.97},"rejections":2,"timeouts":0,
    "client":{"cancelled":1,"write_failures":0}})";
  auto table = RenderDiagnosisTable(json);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(*table, HasSubstr("BOTTLENECK  queueing"));
  EXPECT_THAT(*table, HasSubstr("instance_utilisation      97 %"));
  EXPECT_THAT(*table, HasSubstr("20.0 req/s"));
  EXPECT_THAT(*table, HasSubstr("1. add 1 instance\n     -> utilisation 97 % -> about 48 %"));
  EXPECT_THAT(*table, HasSubstr("620.0  62 %"));
  EXPECT_THAT(*table, HasSubstr("1: 1000 2: 100  (mean 1.09)"));
  EXPECT_THAT(*table, HasSubstr("rejected 2, timeouts 0, cancelled 1"));
}

TEST(DiagnoseCommandTest, RendersAnLlmAndAnEnsemble) {
  auto llm = RenderDiagnosisTable(R"({"bottleneck":{"class":"decode_bound","summary":"s"},"batch_sizes":{"1":3},
    "llm":{"ttft_ms":55.6,"ttft_p90_ms":97.7,"tpot_ms":0.4,"tpot_p90_ms":9,"tokens_per_second":3247,
           "kv_cache_usage_peak":0.02,"num_running_peak":2,"max_num_seqs":2,"num_waiting_peak":4,"preemptions":0}})");
  ASSERT_TRUE(llm.ok()) << llm.status();
  EXPECT_THAT(*llm, HasSubstr("TTFT 55.6 ms (p90 97.7), TPOT 0.4 ms (p90 9.0), 3247.0 tokens/s"));
  EXPECT_THAT(*llm, HasSubstr("KV cache peak 2 %, running peak 2 of 2, waiting peak 4, preemptions 0"));
  EXPECT_THAT(*llm, HasSubstr("queue = the engine's wait for a batch slot"));
  EXPECT_THAT(*llm, Not(HasSubstr("INSTANCES")));  // the engine batches past the instances
  auto ensemble = RenderDiagnosisTable(R"({"bottleneck":{"class":"compute_bound","summary":"s"},
    "slowest_step":"enc","steps":[{"model":"tok","mean_latency_us":160,"requests":25,"class":"healthy"},
                                  {"model":"enc","mean_latency_us":80000,"requests":25,"class":"compute_bound"}]})");
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  EXPECT_THAT(*ensemble, HasSubstr("STEPS        (slowest: enc)"));
  EXPECT_THAT(*ensemble, HasSubstr("  enc                     80.00 ms  25 requests  compute_bound"));
  EXPECT_THAT(*ensemble, Not(HasSubstr("INSTANCES")));
}

TEST(DiagnoseCommandTest, RefusesWhatIsNotADiagnosis) {
  EXPECT_FALSE(RenderDiagnosisTable("not json").ok());
  EXPECT_FALSE(RenderDiagnosisTable("[1,2]").ok());
  EXPECT_FALSE(RenderDiagnosisTable(R"({"error":"x"})").ok());
  // Wrong types are shown as zeros / blanks, never a crash.
  EXPECT_TRUE(RenderDiagnosisTable(R"({"bottleneck":{"class":1},"evidence":[1,{}],"actions":"x",)"
                                   R"("stages":[],"batch_sizes":{"1":"x"}})")
                  .ok());
}

}  // namespace
}  // namespace infera::diagnose
