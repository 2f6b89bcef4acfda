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
                                       "--max-instances", "2", "--dimensions", "instances,max_batch",
                                       "--precisions", "fp32,bf16", "--binary", "/bin/infera", "--baseline"}));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_DOUBLE_EQ(all->time_per_point_s, 1.5);
  EXPECT_EQ(all->max_points, 7);
  EXPECT_EQ(all->concurrency.Levels().size(), 3u);
  EXPECT_EQ(all->max_instances, 2);
  EXPECT_EQ(all->patience, 0);
  EXPECT_EQ(o->patience, 1);
  EXPECT_EQ(all->dimensions, (std::vector<std::string>{"instances", "max_batch"}));
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
           {{"-m", "simple", "--objective", "min-latency:rate>=5"}, "--repository is required"},
           {{"--repository", "/r", "--objective", "min-latency:rate>=5"}, "-m MODEL is required"},
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

TEST(AnalyzeOptionsTest, HelpNeedsNothingElse) {
  auto o = ParseAnalyzeOptions({"--help"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
  EXPECT_THAT(AnalyzeHelpText(), HasSubstr("queue_delay_us"));
}

}  // namespace
}  // namespace infera::analyze
