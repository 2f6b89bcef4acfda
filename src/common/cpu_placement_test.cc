#include "common/cpu_placement.h"

#include <algorithm>
#include <thread>

#include "gtest/gtest.h"

namespace infera {
namespace {

CpuTopology Flat(int cpus) {
  CpuTopology t;
  for (int i = 0; i < cpus; ++i) t.cpus.push_back({i, i, 0, 0});
  t.online = cpus;
  return t;
}

TEST(CpuPlacementModeTest, ParsesAndRejects) {
  EXPECT_EQ(*ParseCpuPlacementMode("none"), CpuPlacementMode::kNone);
  EXPECT_EQ(*ParseCpuPlacementMode("pinned"), CpuPlacementMode::kPinned);
  for (const char* bad : {"", "Pinned", "pinned ", "static", "1"}) {
    absl::StatusOr<CpuPlacementMode> mode = ParseCpuPlacementMode(bad);
    ASSERT_FALSE(mode.ok()) << bad;
    EXPECT_NE(mode.status().message().find("none, pinned"), std::string::npos);
  }
}

TEST(CpuPlannerTest, IoCpuCount) {
  EXPECT_EQ(IoCpuCount(1, 4), 1);
  EXPECT_EQ(IoCpuCount(2, 2), 1);
  EXPECT_EQ(IoCpuCount(8, 4), 2);
  EXPECT_EQ(IoCpuCount(64, 4), 4);
  EXPECT_EQ(IoCpuCount(64, 0), 1);
}

TEST(CpuPlannerTest, DistinctCpusWhileThereAreEnough) {
  CpuPlanner planner(Flat(8), 8, 2);
  EXPECT_EQ(planner.io_cpus(), (std::vector<int>{0, 1}));
  CpuPlanner::Assignment a = planner.Assign(2);
  CpuPlanner::Assignment b = planner.Assign(2);
  CpuPlanner::Assignment c = planner.Assign(2);
  EXPECT_EQ(a.cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(b.cpus, (std::vector<int>{4, 5}));
  EXPECT_EQ(c.cpus, (std::vector<int>{6, 7}));
  EXPECT_FALSE(a.shared || b.shared || c.shared);
  // Full: the next one shares, least loaded first (every CPU has 1: preference order).
  CpuPlanner::Assignment d = planner.Assign(1);
  EXPECT_TRUE(d.shared);
  EXPECT_EQ(d.cpus, (std::vector<int>{0}));
}

TEST(CpuPlannerTest, TwoCpusTwoInstances) {
  // This machine: 2 vCPUs, resnet18 as 2 x 1 thread. I/O on 0, the first instance on 1,
  // the second shares CPU 0 with the I/O side (not CPU 1 with the other instance).
  CpuPlanner planner(Flat(2), 2, IoCpuCount(2, 2));
  EXPECT_EQ(planner.io_cpus(), (std::vector<int>{0}));
  EXPECT_EQ(planner.Assign(1).cpus, (std::vector<int>{1}));
  CpuPlanner::Assignment second = planner.Assign(1);
  EXPECT_EQ(second.cpus, (std::vector<int>{0}));
  EXPECT_TRUE(second.shared);
}

TEST(CpuPlannerTest, MoreThreadsThanCpusRoundRobin) {
  CpuPlanner planner(Flat(3), 3, 1);
  CpuPlanner::Assignment a = planner.Assign(5);
  EXPECT_EQ(a.cpus, (std::vector<int>{1, 2, 0, 1, 2}));
  EXPECT_TRUE(a.shared);
  EXPECT_EQ(planner.Load(0), 2);
  EXPECT_EQ(planner.Load(1), 2);
  EXPECT_EQ(planner.Load(2), 2);
}

TEST(CpuPlannerTest, OneCpuCpuset) {
  CpuTopology one;
  one.cpus.push_back({5, 0, 0, 0});
  one.online = 8;
  CpuPlanner planner(one, 1, 4);
  EXPECT_EQ(planner.io_cpus(), (std::vector<int>{5}));
  CpuPlanner::Assignment a = planner.Assign(2);
  EXPECT_EQ(a.cpus, (std::vector<int>{5, 5}));
  EXPECT_TRUE(a.shared);
}

TEST(CpuPlannerTest, SmtSiblingsLast) {
  // 2 cores x 2 threads, siblings (0,2) and (1,3).
  CpuTopology t;
  t.cpus = {{0, 0, 0, 0}, {1, 1, 0, 0}, {2, 0, 0, 0}, {3, 1, 0, 0}};
  t.online = 4;
  CpuPlanner planner(t, 4, 1);
  EXPECT_EQ(planner.cpus(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(planner.io_cpus(), (std::vector<int>{0}));
  // The first instance gets a whole core; the second a sibling, preferring the sibling
  // of the core that is less busy (core 0 has I/O, core 1 has the first instance: tie,
  // then preference order).
  EXPECT_EQ(planner.Assign(1).cpus, (std::vector<int>{1}));
  EXPECT_EQ(planner.Assign(1).cpus, (std::vector<int>{2}));
}

TEST(CpuPlannerTest, SmtPrefersIdleCoresOverSiblings) {
  CpuTopology t;  // siblings listed adjacently (0,1) (2,3) (4,5), as on AMD
  t.cpus = {{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 1, 0, 0}, {3, 1, 0, 0}, {4, 2, 0, 0}, {5, 2, 0, 0}};
  t.online = 6;
  CpuPlanner planner(t, 6, 1);
  EXPECT_EQ(planner.cpus(), (std::vector<int>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(planner.Assign(2).cpus, (std::vector<int>{2, 4}));
  EXPECT_EQ(planner.Assign(1).cpus, (std::vector<int>{1}));  // all cores busy: siblings now
}

TEST(CpuPlannerTest, InstanceStaysOnOneNumaNode) {
  CpuTopology t;  // node 0: CPUs 0-3, node 1: CPUs 4-7
  for (int i = 0; i < 8; ++i) t.cpus.push_back({i, i, i / 4, i / 4});
  t.online = 8;
  CpuPlanner planner(t, 8, 1);
  EXPECT_EQ(planner.Assign(3).cpus, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(planner.Assign(3).cpus, (std::vector<int>{4, 5, 6}));
  // A 2-thread instance starts on the last free CPU (7, node 1) and stays on node 1.
  CpuPlanner::Assignment c = planner.Assign(2);
  EXPECT_EQ(c.cpus[0], 7);
  EXPECT_GE(c.cpus[1], 4);
}

TEST(CpuPlannerTest, QuotaBudgetUsesFewerCpus) {
  CpuPlanner planner(Flat(16), 4, 1);  // a 4-CPU quota on a 16-CPU cpuset
  EXPECT_EQ(planner.cpus(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(planner.Assign(4).cpus, (std::vector<int>{1, 2, 3, 0}));
}

TEST(CpuPlannerTest, ReleaseFreesCpus) {
  CpuPlanner planner(Flat(4), 4, 1);
  CpuPlanner::Assignment a = planner.Assign(2);
  EXPECT_EQ(a.cpus, (std::vector<int>{1, 2}));
  planner.Release(a.cpus);
  EXPECT_EQ(planner.Load(1), 0);
  EXPECT_EQ(planner.Assign(2).cpus, (std::vector<int>{1, 2}));
}

TEST(CpuPlacementTest, LeaseGivesCpusBack) {
  std::shared_ptr<CpuPlacement> placement = CpuPlacement::Create(Flat(4), 4, 1);
  EXPECT_EQ(placement->io_cpus(), (std::vector<int>{0}));
  EXPECT_EQ(placement->cpus(), (std::vector<int>{0, 1, 2, 3}));
  {
    std::unique_ptr<CpuLease> lease = placement->Reserve("m_0", 3);
    EXPECT_EQ(lease->cpus(), (std::vector<int>{1, 2, 3}));
  }
  std::unique_ptr<CpuLease> again = placement->Reserve("m_1", 1);
  EXPECT_EQ(again->cpus(), (std::vector<int>{1}));
  EXPECT_NE(placement->DescribePlan().find("I/O threads (HTTP, gRPC and the server's other threads) on CPU 0"),
            std::string::npos)
      << placement->DescribePlan();
}

TEST(PinCurrentThreadTest, PinsAndReadsBack) {
  const std::vector<int> mine = CurrentThreadCpus();
  ASSERT_FALSE(mine.empty());
  std::thread t([&] {
    ASSERT_TRUE(PinCurrentThread({mine.back()}).ok());
    EXPECT_EQ(CurrentThreadCpus(), (std::vector<int>{mine.back()}));
    EXPECT_EQ(PinCurrentThread({}).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(PinCurrentThread({-1}).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_FALSE(PinCurrentThread({CPU_SETSIZE - 1}).ok());  // not a CPU of this machine
  });
  t.join();
  EXPECT_EQ(CurrentThreadCpus(), mine);  // another thread's mask is untouched
}

TEST(ProcessCpuPlacementTest, InstallsAndClears) {
  EXPECT_EQ(ProcessCpuPlacement(), nullptr);
  SetProcessCpuPlacement(CpuPlacement::Create(Flat(2), 2, 1));
  EXPECT_NE(ProcessCpuPlacement(), nullptr);
  SetProcessCpuPlacement(nullptr);
  EXPECT_EQ(ProcessCpuPlacement(), nullptr);
}

TEST(PinCurrentThreadForModelLoadingTest, WidensFromTheIoCpusToTheBudget) {
  const std::vector<int> mine = CurrentThreadCpus();
  ASSERT_FALSE(mine.empty());
  std::thread t([&] {
    // Without a placement nothing changes.
    ASSERT_TRUE(PinCurrentThread({mine.front()}).ok());
    PinCurrentThreadForModelLoading();
    EXPECT_EQ(CurrentThreadCpus(), (std::vector<int>{mine.front()}));
    // With one over this thread's CPUs, the I/O mask widens to all of them.
    CpuTopology topology;
    for (int cpu : mine) topology.cpus.push_back({cpu, cpu, 0, 0});
    topology.online = static_cast<int>(mine.size());
    SetProcessCpuPlacement(CpuPlacement::Create(topology, static_cast<int>(mine.size()), 1));
    PinCurrentThreadForModelLoading();
    EXPECT_EQ(CurrentThreadCpus(), mine);
    SetProcessCpuPlacement(nullptr);
  });
  t.join();
}

}  // namespace
}  // namespace infera
