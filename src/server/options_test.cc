#include "server/options.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

TEST(OptionsTest, ParsesTritonStyleFlagsBothForms) {
  auto options = ParseServeOptions({"--model-repository", "/models", "--http-port=0",
                                    "--grpc-port", "9001", "--metrics-port=0", "--log-verbose=1",
                                    "--exit-timeout-secs", "5", "--log-format", "json"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->model_repository, "/models");
  EXPECT_EQ(options->http_port, 0);
  EXPECT_EQ(options->grpc_port, 9001);
  EXPECT_EQ(options->metrics_port, 0);
  EXPECT_EQ(options->log_verbose, 1);
  EXPECT_EQ(options->exit_timeout_secs, 5);
  EXPECT_EQ(options->log_format, "json");
}

TEST(OptionsTest, ErrorsNameTheFlag) {
  auto message = [](std::vector<std::string> args) {
    return std::string(ParseServeOptions(args).status().message());
  };
  EXPECT_THAT(message({}), HasSubstr("--model-repository is required"));
  EXPECT_THAT(message({"--model-repository=/m", "--http-port=70000"}), HasSubstr("--http-port"));
  EXPECT_THAT(message({"--model-repository=/m", "--http-port=abc"}), HasSubstr("'abc'"));
  EXPECT_THAT(message({"--model-repository=/m", "--bogus=1"}), HasSubstr("unknown flag --bogus"));
  EXPECT_THAT(message({"--model-repository"}), HasSubstr("needs a value"));
  EXPECT_THAT(message({"--model-repository=/m", "stray"}), HasSubstr("unexpected argument 'stray'"));
  EXPECT_THAT(message({"--model-repository=/m", "--log-format=xml"}), HasSubstr("text or json"));
}

TEST(OptionsTest, HelpListsEveryFlag) {
  auto options = ParseServeOptions({"--help"});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->help);
  const std::string help = ServeHelpText();
  for (const char* flag : {"--model-repository", "--http-port", "--grpc-port", "--metrics-port",
                           "--log-verbose", "--exit-timeout-secs", "--http-max-input-size"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
}

}  // namespace
}  // namespace infera
