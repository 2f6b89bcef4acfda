#include "protocol/log_settings.h"

#include <string>

#include "common/log_switches.h"
#include "common/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

class LogSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override { Reset(); }
  void TearDown() override { Reset(); }
  static void Reset() {
    SetLogLevel(LogLevel::kInfo);
    SetLogFormat(LogFormat::kText);
    SetIso8601Timestamps(false);
    for (LogLevel l : {LogLevel::kError, LogLevel::kWarning, LogLevel::kInfo}) SetSeverityEnabled(l, true);
    inference::LogSettingsRequest reset;  // the verbose level read back as last set
    (*reset.mutable_settings())["log_verbose_level"].set_uint32_param(0);
    inference::LogSettingsResponse ignored;
    (void)BuildLogSettings(reset, &ignored);
  }

  static inference::LogSettingsRequest::SettingValue& Set(inference::LogSettingsRequest& request,
                                                          const std::string& key) {
    return (*request.mutable_settings())[key];
  }

  absl::Status Apply(const inference::LogSettingsRequest& request) {
    response_.Clear();
    return BuildLogSettings(request, &response_);
  }

  const inference::LogSettingsResponse::SettingValue& Get(const std::string& key) const {
    return response_.settings().at(key);
  }

  inference::LogSettingsResponse response_;
};

TEST_F(LogSettingsTest, AnEmptyRequestReadsEverySetting) {
  ASSERT_TRUE(Apply({}).ok());
  EXPECT_EQ(response_.settings_size(), 6);
  EXPECT_EQ(Get("log_file").string_param(), "");
  EXPECT_TRUE(Get("log_info").bool_param());
  EXPECT_TRUE(Get("log_warning").bool_param());
  EXPECT_TRUE(Get("log_error").bool_param());
  EXPECT_EQ(Get("log_verbose_level").parameter_choice_case(),
            inference::LogSettingsResponse::SettingValue::kUint32Param);
  EXPECT_EQ(Get("log_verbose_level").uint32_param(), 0u);
  EXPECT_EQ(Get("log_format").string_param(), "default");
}

TEST_F(LogSettingsTest, EachKeyChangesTheLevelOrFormat) {
  inference::LogSettingsRequest request;
  Set(request, "log_verbose_level").set_uint32_param(2);
  ASSERT_TRUE(Apply(request).ok());
  EXPECT_EQ(GetLogLevel(), LogLevel::kVerbose);
  EXPECT_EQ(Get("log_verbose_level").uint32_param(), 2u);  // read back as set (Triton's)

  request.Clear();
  Set(request, "log_verbose_level").set_uint32_param(0);
  ASSERT_TRUE(Apply(request).ok());
  EXPECT_EQ(GetLogLevel(), LogLevel::kInfo);
  EXPECT_EQ(Get("log_verbose_level").uint32_param(), 0u);

  // Triton's switches are independent of each other and of the level.
  request.Clear();
  Set(request, "log_info").set_bool_param(false);
  ASSERT_TRUE(Apply(request).ok());
  EXPECT_FALSE(SeverityEnabled(LogLevel::kInfo));
  EXPECT_FALSE(Get("log_info").bool_param());
  EXPECT_TRUE(Get("log_warning").bool_param());

  request.Clear();
  Set(request, "log_warning").set_bool_param(false);
  Set(request, "log_info").set_bool_param(true);
  Set(request, "log_error").set_bool_param(false);
  ASSERT_TRUE(Apply(request).ok());
  EXPECT_TRUE(SeverityEnabled(LogLevel::kInfo));
  EXPECT_FALSE(SeverityEnabled(LogLevel::kWarning));
  EXPECT_FALSE(SeverityEnabled(LogLevel::kError));
  EXPECT_TRUE(Get("log_info").bool_param());
  EXPECT_FALSE(Get("log_warning").bool_param());
  EXPECT_FALSE(Get("log_error").bool_param());

  request.Clear();
  Set(request, "log_warning").set_bool_param(true);
  Set(request, "log_error").set_bool_param(true);
  Set(request, "log_file").set_string_param("");
  Set(request, "log_format").set_string_param("json");
  ASSERT_TRUE(Apply(request).ok());
  EXPECT_EQ(GetLogLevel(), LogLevel::kInfo);
  EXPECT_EQ(GetLogFormat(), LogFormat::kJson);
  EXPECT_EQ(Get("log_format").string_param(), "json");

  request.Clear();
  Set(request, "log_format").set_string_param("ISO8601");
  ASSERT_TRUE(Apply(request).ok());
  EXPECT_EQ(GetLogFormat(), LogFormat::kText);
  EXPECT_TRUE(Iso8601Timestamps());
  EXPECT_EQ(Get("log_format").string_param(), "ISO8601");

  request.Clear();
  Set(request, "log_format").set_string_param("default");
  ASSERT_TRUE(Apply(request).ok());
  EXPECT_EQ(GetLogFormat(), LogFormat::kText);
  EXPECT_FALSE(Iso8601Timestamps());
}

TEST_F(LogSettingsTest, WrongTypesUnknownKeysAndUnsupportedValuesNameTheKey) {
  struct Case {
    std::string key;
    void (*fill)(inference::LogSettingsRequest::SettingValue&);
    std::string expected;
  };
  const Case cases[] = {
      {"log_info", [](auto& v) { v.set_string_param("yes"); }, "log_info must be true or false"},
      {"log_warning", [](auto& v) { v.set_uint32_param(1); }, "log_warning must be true or false"},
      {"log_error", [](auto& v) { v.set_string_param("off"); }, "log_error must be true or false"},
      {"log_format", [](auto& v) { v.set_string_param("iso8601"); }, "log_format must be 'default'"},
      {"log_verbose_level", [](auto& v) { v.set_bool_param(true); }, "log_verbose_level must be an integer"},
      {"log_verbose_level", [](auto&) {}, "log_verbose_level must be an integer"},
      {"log_format", [](auto& v) { v.set_string_param("xml"); }, "log_format must be 'default'"},
      {"log_format", [](auto& v) { v.set_bool_param(true); }, "log_format must be 'default'"},
      {"log_file", [](auto& v) { v.set_string_param("/tmp/x"); }, "infera logs to stderr"},
      {"log_file", [](auto& v) { v.set_uint32_param(0); }, "infera logs to stderr"},
      {"log_colour", [](auto& v) { v.set_bool_param(true); }, "unknown logging setting 'log_colour'"},
  };
  for (const Case& c : cases) {
    inference::LogSettingsRequest request;
    c.fill(Set(request, c.key));
    const absl::Status status = Apply(request);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.key;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.expected)) << c.key;
  }
  EXPECT_EQ(GetLogLevel(), LogLevel::kInfo);
  EXPECT_EQ(GetLogFormat(), LogFormat::kText);
}

TEST_F(LogSettingsTest, AnOversizedUnknownKeyIsCutInTheMessage) {
  inference::LogSettingsRequest request;
  Set(request, std::string(100000, 'x')).set_bool_param(true);
  const absl::Status status = Apply(request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("unknown logging setting 'xxx"));
  EXPECT_LT(status.message().size(), 200u);
}

TEST_F(LogSettingsTest, AnUpdateIsAllOrNothing) {
  inference::LogSettingsRequest request;
  Set(request, "log_verbose_level").set_uint32_param(1);
  Set(request, "log_format").set_string_param("json");
  Set(request, "log_warning").set_bool_param(false);
  Set(request, "log_error").set_bool_param(false);
  Set(request, "log_info").set_uint32_param(3);  // refused: nothing else may apply
  EXPECT_EQ(Apply(request).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetLogLevel(), LogLevel::kInfo);
  EXPECT_EQ(GetLogFormat(), LogFormat::kText);
  EXPECT_TRUE(SeverityEnabled(LogLevel::kWarning));
  EXPECT_TRUE(SeverityEnabled(LogLevel::kError));
}

}  // namespace
}  // namespace infera
