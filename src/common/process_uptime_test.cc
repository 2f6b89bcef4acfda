#include "common/process_uptime.h"

#include <gtest/gtest.h>

namespace infera {
namespace {

// A real line's shape: pid (comm) state ppid ... field 22 = starttime.
constexpr char kStat[] =
    "4242 (infera) S 1 4242 4242 0 -1 4194560 1500 0 0 0 12 3 0 0 20 0 9 0 123456 1000000 500 "
    "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 0\n";

TEST(StartTimeTicksFromStat, ReadsField22) { EXPECT_EQ(StartTimeTicksFromStat(kStat), 123456u); }

TEST(StartTimeTicksFromStat, CommandNameWithSpacesAndParentheses) {
  EXPECT_EQ(StartTimeTicksFromStat("7 (a ) b (c)) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 1 1"), 99u);
}

TEST(StartTimeTicksFromStat, RejectsMalformedLines) {
  EXPECT_EQ(StartTimeTicksFromStat(""), std::nullopt);
  EXPECT_EQ(StartTimeTicksFromStat("4242 infera S 1 2 3"), std::nullopt);           // no ')'
  EXPECT_EQ(StartTimeTicksFromStat("4242 (infera) S 1 2 3 4 5"), std::nullopt);     // too short
  EXPECT_EQ(StartTimeTicksFromStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12x 1"), std::nullopt);
  EXPECT_EQ(StartTimeTicksFromStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 1"), std::nullopt);
}

TEST(ProcessUptime, IsNonNegativeAndSmallForThisTest) {
  const auto uptime = ProcessUptime();
  ASSERT_TRUE(uptime.has_value());
  // Tick resolution: a process may look up to one tick younger than it is.
  EXPECT_GE(uptime->count(), -0.02);
  EXPECT_LT(uptime->count(), 24 * 3600.0);
}

}  // namespace
}  // namespace infera
