// INFERA_CHECK must be active in Release builds: this file is compiled with NDEBUG
// whatever the build type, as Release compiles the server.
#ifndef NDEBUG
#define NDEBUG 1
#endif

#include "common/check.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(CheckDeathTest, FailureLogsConditionMessageAndPlaceThenAborts) {
  const int free_blocks = 2;
  EXPECT_DEATH(INFERA_CHECK(free_blocks > 3) << "need " << 4 << " blocks",
               "CHECK failed: free_blocks > 3 need 4 blocks \\(at .*check_test.cc:[0-9]+\\)");
}

TEST(CheckDeathTest, WithoutAMessage) {
  EXPECT_DEATH(INFERA_CHECK(false), "CHECK failed: false \\(at ");
}

TEST(CheckTest, PassingCheckEvaluatesTheConditionOnceAndNotTheMessage) {
  int evaluated = 0;
  int streamed = 0;
  INFERA_CHECK(++evaluated == 1) << ++streamed;
  EXPECT_EQ(evaluated, 1);
  EXPECT_EQ(streamed, 0);
}

}  // namespace
}  // namespace infera
