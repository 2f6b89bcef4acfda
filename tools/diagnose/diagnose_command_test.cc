#include "tools/diagnose/diagnose_command.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::diagnose {
namespace {

using ::testing::HasSubstr;

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

TEST(DiagnoseCommandTest, BadFlagsNameTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "-m MODEL"},
      {{"-m", "m", "--url", "https://h:1"}, "--url"},
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
  EXPECT_THAT(*table, HasSubstr("instance_utilisation  97 %"));
  EXPECT_THAT(*table, HasSubstr("20.0 req/s"));
  EXPECT_THAT(*table, HasSubstr("1. add 1 instance\n     -> utilisation 97 % -> about 48 %"));
  EXPECT_THAT(*table, HasSubstr("620.0  62 %"));
  EXPECT_THAT(*table, HasSubstr("1: 1000 2: 100  (mean 1.09)"));
  EXPECT_THAT(*table, HasSubstr("rejected 2, timeouts 0, cancelled 1"));
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
