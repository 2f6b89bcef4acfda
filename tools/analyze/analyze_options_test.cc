#include "tools/analyze/analyze_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infera::analyze {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Args(std::vector<std::string> extra) {
  std::vector<std::string> args = {"--repository", "/repo", "-m", "simple", "--objective", "max-throughput:p99<=5ms"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(AnalyzeOptionsTest, DefaultsAndFlags) {
  auto o = ParseAnalyzeOptions(Args({}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->out, "analyze-simple");
  EXPECT_EQ(o->concurrency.ToString(), "1:16:x2");
  EXPECT_EQ(o->precisions, (std::vector<std::string>{"fp32", "bf16", "int8_dynamic"}));
  auto all = ParseAnalyzeOptions(Args({"--out", "/tmp/x", "--time-per-point=1.5", "--max-points", "7",
                                       "--concurrency", "1:4:x2", "--min-gain", "2", "--patience", "0", "--max-queue-delay-us", "800",
                                       "--max-instances", "2", "--dimensions", "instances,batch",
                                       "--precisions", "fp32,bf16", "--binary", "/bin/infera", "--baseline"}));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_DOUBLE_EQ(all->time_per_point_s, 1.5);
  EXPECT_EQ(all->max_points, 7);
  EXPECT_EQ(all->concurrency.Levels().size(), 3u);
  EXPECT_EQ(all->max_instances, 2);
  EXPECT_EQ(all->patience, 0);
  EXPECT_EQ(o->patience, 1);
  EXPECT_EQ(all->dimensions, (std::vector<std::string>{"instances", "batch"}));
  EXPECT_EQ(all->precisions, (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_EQ(all->binary, "/bin/infera");
  EXPECT_TRUE(all->baseline);
  EXPECT_FALSE(o->baseline);
}

TEST(AnalyzeOptionsTest, HostileFlagsNameTheProblem) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {{"-m", "simple", "--objective", "min-latency:rate>=5"}, "--model-repository DIR is required"},
           {{"--repository", "/r", "--objective", "min-latency:rate>=5"}, "-m/--model-name MODEL is required"},
           {Args({"--repeats", "0"}), "--repeats: '0'"},
           {Args({"--repeats", "21"}), "--repeats"},
           {Args({"--repeats", "2.5"}), "not an integer"},
           {Args({"--allow-api-change=yes"}), "--allow-api-change takes no value"},
           {{"--repository", "/r", "-m", "simple"}, "--objective is required"},
           {{"--repository", "/r", "-m", "../etc", "--objective", "min-latency:rate>=5"}, "not a model directory"},
           {Args({"--objective", "max-throughput:p99<=-1"}), "finite number > 0"},
           {Args({"--objective", "fast"}), "expected"},
           {Args({"--time-per-point", "-3"}), "--time-per-point"},
           {Args({"--time-per-point", "nan"}), "--time-per-point"},
           {Args({"--max-points", "0"}), "--max-points"},
           {Args({"--max-points", "2.5"}), "not an integer"},
           {Args({"--concurrency", "8:1"}), "--concurrency"},
           {Args({"--concurrency", "1:100000:+1"}), "--concurrency"},
           {Args({"--min-gain", "-5"}), "--min-gain"},
           {Args({"--patience", "11"}), "--patience"},
           {Args({"--max-queue-delay-us", "1e12"}), "--max-queue-delay-us"},
           {Args({"--max-instances", "0"}), "--max-instances"},
           {Args({"--dimensions", "instances,threads"}), "unknown dimension 'threads'"},
           {Args({"--dimensions", ""}), "unknown dimension ''"},
           {Args({"--precisions", "fp32,int4"}), "unknown precision 'int4'"},
           {Args({"--frobnicate"}), "unknown flag '--frobnicate'"},
           {Args({"--out"}), "--out needs a value"},
       }) {
    auto o = ParseAnalyzeOptions(c.args);
    ASSERT_FALSE(o.ok()) << c.message;
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(o.status().message(), HasSubstr(c.message));
  }
}

TEST(AnalyzeOptionsTest, TritonNamesAndTheirAliases) {
  for (const auto& names : std::vector<std::pair<std::string, std::string>>{
           {"--model-repository", "--model-name"}, {"--repository", "--model"}, {"--model-repository", "-m"}}) {
    auto o = ParseAnalyzeOptions({names.first, "/repo", names.second, "ranker", "--objective", "min-latency:rate>=5"});
    ASSERT_TRUE(o.ok()) << names.first << " " << names.second << ": " << o.status();
    EXPECT_EQ(o->repository, "/repo");
    EXPECT_EQ(o->model, "ranker");
  }
  auto eq = ParseAnalyzeOptions({"--model-repository=/r", "--model-name=m", "--objective=min-latency:rate>=5"});
  ASSERT_TRUE(eq.ok()) << eq.status();
  EXPECT_EQ(eq->repository, "/r");
  // The aliases work but the help shows Triton's names only.
  EXPECT_THAT(AnalyzeHelpText(), HasSubstr("--model-repository DIR"));
  EXPECT_THAT(AnalyzeHelpText(), HasSubstr("-m, --model-name MODEL"));
  EXPECT_THAT(AnalyzeHelpText(), ::testing::Not(HasSubstr("--repository ")));
  EXPECT_THAT(AnalyzeHelpText(), ::testing::Not(HasSubstr("--model ")));
}

TEST(AnalyzeOptionsTest, RepeatsApiChangeAndTheOldDimensionName) {
  auto o = ParseAnalyzeOptions(Args({}));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->repeats, 3);
  EXPECT_FALSE(o->allow_api_change);
  EXPECT_DOUBLE_EQ(o->time_per_point_s, 3);
  auto set = ParseAnalyzeOptions(Args({"--repeats", "5", "--allow-api-change", "--dimensions", "max_batch,instances"}));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->repeats, 5);
  EXPECT_TRUE(set->allow_api_change);
  EXPECT_EQ(set->dimensions, (std::vector<std::string>{"batch", "instances"}));  // max_batch: the old name
}

TEST(AnalyzeOptionsTest, ErrorsAreOneLineAndHelpFits100Columns) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           Args({"--frobnicate"}), Args({"--repeats", "x"}), Args({"--dimensions", "threads"}),
           Args({"--objective", "fast"}), Args({"--concurrency", "8:1"}), {}}) {
    auto o = ParseAnalyzeOptions(args);
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(std::string(o.status().message()).find('\n'), std::string::npos) << o.status().message();
  }
  const std::string help = AnalyzeHelpText();
  size_t start = 0;
  while (start < help.size()) {
    size_t end = help.find('\n', start);
    if (end == std::string::npos) end = help.size();
    EXPECT_LE(end - start, 100u) << help.substr(start, end - start);
    start = end + 1;
  }
  EXPECT_THAT(help, HasSubstr("--allow-api-change"));
  EXPECT_THAT(help, HasSubstr("--repeats N"));
}

TEST(AnalyzeOptionsTest, HelpNeedsNothingElse) {
  auto o = ParseAnalyzeOptions({"--help"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
  EXPECT_THAT(AnalyzeHelpText(), HasSubstr("queue_delay_us"));
}

}  // namespace
}  // namespace infera::analyze
