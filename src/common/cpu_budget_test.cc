#include "common/cpu_budget.h"

#include <thread>

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(CpuBudgetTest, ParsesCgroupV2Quota) {
  EXPECT_EQ(CpusFromCgroupV2("max 100000\n"), std::nullopt);
  EXPECT_EQ(CpusFromCgroupV2("400000 100000\n"), 4);
  EXPECT_EQ(CpusFromCgroupV2("150000 100000"), 2);  // 1.5 CPUs: two threads may run
  EXPECT_EQ(CpusFromCgroupV2("50000 100000"), 1);
  EXPECT_EQ(CpusFromCgroupV2("garbage"), std::nullopt);
  EXPECT_EQ(CpusFromCgroupV2("-1 100000"), std::nullopt);
}

TEST(CpuBudgetTest, AvailableIsPositiveAndAtMostTheMachine) {
  const int cpus = AvailableCpus();
  EXPECT_GE(cpus, 1);
  EXPECT_LE(cpus, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace infera
