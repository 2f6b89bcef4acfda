#include "console/console_stream.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(ConsoleStreamTest, IntervalDefaultsAndBounds) {
  EXPECT_EQ(*ConsoleStream::ParseIntervalMs("/v2/console/stream"), 1000);
  EXPECT_EQ(*ConsoleStream::ParseIntervalMs("/v2/console/stream?"), 1000);
  EXPECT_EQ(*ConsoleStream::ParseIntervalMs("/v2/console/stream?interval_ms=250"), 250);
  EXPECT_EQ(*ConsoleStream::ParseIntervalMs("/v2/console/stream?interval_ms=10000"), 10000);
}

TEST(ConsoleStreamTest, BadIntervalsNameTheParameter) {
  for (const char* target :
       {"/s?interval_ms=249", "/s?interval_ms=10001", "/s?interval_ms=0", "/s?interval_ms=-5", "/s?interval_ms=abc",
        "/s?interval_ms=", "/s?interval_ms", "/s?interval_ms=1e3", "/s?interval_ms=99999999999999999999",
        "/s?interval_ms=500&interval_ms=600", "/s?interval_ms=500x"}) {
    absl::StatusOr<int> r = ConsoleStream::ParseIntervalMs(target);
    ASSERT_FALSE(r.ok()) << target;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("interval_ms"), std::string::npos) << target << ": " << r.status();
  }
  absl::StatusOr<int> unknown = ConsoleStream::ParseIntervalMs("/s?every=5");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("every"), std::string::npos);
}

TEST(ConsoleStreamTest, ShutdownWithoutSubscribersJoinsPromptlyAndIsIdempotent) {
  ConsoleStream::Options options;
  int reads = 0;
  options.read_models = [&reads] {
    ++reads;
    return std::vector<ConsoleModelReading>{};
  };
  ConsoleStream stream(options);
  EXPECT_EQ(stream.subscribers(), 0);
  stream.Shutdown();
  stream.Shutdown();
  EXPECT_EQ(stream.snapshots_rendered(), 0u);
  EXPECT_EQ(reads, 0);  // nobody subscribed: nothing read
}

}  // namespace
}  // namespace infera
