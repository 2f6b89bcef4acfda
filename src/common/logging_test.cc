#include "common/logging.h"

#include "common/log_switches.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Runs `log` with stderr redirected to a temporary file and returns what was written.
template <typename F>
std::string CaptureStderr(F log) {
  std::FILE* file = std::tmpfile();
  EXPECT_NE(file, nullptr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(::fileno(file), STDERR_FILENO);
  log();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string out;
  std::rewind(file);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) out.append(buf, n);
  std::fclose(file);
  return out;
}

size_t CountLines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

class LoggingTest : public ::testing::Test {
 protected:
  void TearDown() override {
    SetLogFormat(LogFormat::kText);
    SetLogLevel(LogLevel::kInfo);
    SetIso8601Timestamps(false);
    for (LogLevel l : {LogLevel::kError, LogLevel::kWarning, LogLevel::kInfo}) SetSeverityEnabled(l, true);
  }
};

TEST_F(LoggingTest, EscapesControlCharacters) {
  std::string out;
  logging_internal::AppendControlEscaped(out, std::string("a\nb\rc\td\x01\x7f" "e\\f\xc3\xa9", 14));
  EXPECT_EQ(out, "a\\nb\\rc\\td\\x01\\x7fe\\f\xc3\xa9");
}

// Issue 13 finding 9: a request id with a newline forged a second log line.
TEST_F(LoggingTest, TextFormatKeepsAClientStringOnOneLine) {
  SetLogFormat(LogFormat::kText);
  SetLogLevel(LogLevel::kVerbose);
  const std::string request_id = "abc\nE1201 00:00:00.000000 fake.cc:1] forged\r";
  const std::string out =
      CaptureStderr([&] { INFERA_LOG(VERBOSE) << "request " << request_id << " done"; });
  EXPECT_EQ(CountLines(out), 1u) << out;
  EXPECT_THAT(out, HasSubstr("request abc\\nE1201 00:00:00.000000 fake.cc:1] forged\\r done\n"));
}

TEST_F(LoggingTest, JsonFormatKeepsAClientStringOnOneLine) {
  SetLogFormat(LogFormat::kJson);
  const std::string out = CaptureStderr([] { INFERA_LOG(INFO) << "id a\nb\x02"; });
  EXPECT_EQ(CountLines(out), 1u) << out;
  EXPECT_THAT(out, HasSubstr(R"("msg":"id a\nb\u0002"})"));
  EXPECT_THAT(out, Not(HasSubstr("\x02")));
  // Invalid UTF-8 would make the line invalid JSON: it becomes U+FFFD.
  const std::string bad = CaptureStderr([] { INFERA_LOG(INFO) << "model \xff\xfe"; });
  EXPECT_THAT(bad, HasSubstr("\"msg\":\"model \xef\xbf\xbd\xef\xbf\xbd\"}"));
}

// Triton's switches are independent: warnings off leaves errors and infos on.
TEST_F(LoggingTest, SeveritySwitchesAreIndependent) {
  SetSeverityEnabled(LogLevel::kWarning, false);
  const std::string out = CaptureStderr([] {
    INFERA_LOG(ERROR) << "e-line";
    INFERA_LOG(WARNING) << "w-line";
    INFERA_LOG(INFO) << "i-line";
  });
  EXPECT_THAT(out, HasSubstr("e-line"));
  EXPECT_THAT(out, Not(HasSubstr("w-line")));
  EXPECT_THAT(out, HasSubstr("i-line"));
  SetSeverityEnabled(LogLevel::kError, false);
  SetSeverityEnabled(LogLevel::kWarning, true);
  SetSeverityEnabled(LogLevel::kInfo, false);
  const std::string flipped = CaptureStderr([] {
    INFERA_LOG(ERROR) << "e-line";
    INFERA_LOG(WARNING) << "w-line";
    INFERA_LOG(INFO) << "i-line";
  });
  EXPECT_EQ(CountLines(flipped), 1u) << flipped;
  EXPECT_THAT(flipped, HasSubstr("w-line"));
  EXPECT_FALSE(SeverityEnabled(LogLevel::kError));
  SetSeverityEnabled(LogLevel::kVerbose, false);  // no switch: the threshold governs it
  EXPECT_TRUE(SeverityEnabled(LogLevel::kVerbose));
}

TEST_F(LoggingTest, Iso8601PrefixIsTritons) {
  SetIso8601Timestamps(true);
  const std::string out = CaptureStderr([] { INFERA_LOG(WARNING) << "hello"; });
  // 2026-12-06T19:28:43Z W logging_test.cc:NN] hello
  EXPECT_THAT(out, ::testing::MatchesRegex(
                       "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z W logging_test\\.cc:[0-9]+\\] hello\n"));
  SetLogFormat(LogFormat::kJson);  // the JSON format is not changed by it
  EXPECT_THAT(CaptureStderr([] { INFERA_LOG(INFO) << "x"; }), HasSubstr("{\"ts\":\""));
}

}  // namespace
}  // namespace infera
