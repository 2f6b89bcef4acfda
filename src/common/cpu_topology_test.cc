#include "common/cpu_topology.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "common/str_cat.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(CpuListTest, ParsesKernelLists) {
  EXPECT_EQ(*ParseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseCpuList("5"), (std::vector<int>{5}));
  EXPECT_EQ(*ParseCpuList("3,1,1-2"), (std::vector<int>{1, 2, 3}));  // sorted, deduplicated
}

TEST(CpuListTest, RejectsHostileLists) {
  for (const char* bad : {"", "\n", "a", "1-", "-1", "3-1", "1,,2", "1,", "0-99999", "1 2", "0x3", "1-2-3"}) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(bad);
    EXPECT_FALSE(cpus.ok()) << "'" << bad << "'";
    if (!cpus.ok()) {
      EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
  EXPECT_NE(ParseCpuList("3-1").status().message().find("'3-1' is reversed"), std::string::npos);
}

TEST(CpuListTest, FormatsRanges) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({4}), "4");
  EXPECT_EQ(FormatCpuList({}), "");
}

// A fake /sys/devices/system/cpu in a temporary directory.
class FakeSysfs {
 public:
  FakeSysfs() {
    root_ = std::filesystem::temp_directory_path() /
            StrCat("cpu_topology_test_", ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                   getpid());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~FakeSysfs() { std::filesystem::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  // cpuN with its core and package, linked to nodeM (a directory stands in for the link).
  void Cpu(int id, int core, int package, int node) {
    Write(StrCat("cpu", id, "/topology/core_id"), StrCat(core, "\n"));
    Write(StrCat("cpu", id, "/topology/physical_package_id"), StrCat(package, "\n"));
    std::filesystem::create_directories(root_ / StrCat("cpu", id) / StrCat("node", node));
  }
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

TEST(CpuTopologyTest, ReadsSmtSiblingsAndNodes) {
  FakeSysfs sys;
  sys.Write("online", "0-7\n");
  // Two packages of two cores with two threads each; siblings are (n, n+4) as on Intel.
  for (int id = 0; id < 8; ++id) sys.Cpu(id, /*core=*/id % 2, /*package=*/(id / 2) % 2, /*node=*/(id / 2) % 2);
  absl::StatusOr<CpuTopology> topology = ReadCpuTopology(sys.root(), {0, 1, 2, 3, 4, 5, 6, 7});
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->cpus.size(), 8u);
  EXPECT_EQ(topology->PhysicalCores(), 4);  // core_id 0/1 repeat in each package
  EXPECT_EQ(topology->NumaNodes(), 2);
  EXPECT_TRUE(topology->Smt());
  EXPECT_EQ(topology->cpus[0].core, topology->cpus[4].core);
  EXPECT_NE(topology->cpus[0].core, topology->cpus[2].core);
  EXPECT_EQ(topology->cpus[2].node, 1);
  EXPECT_EQ(topology->Describe(),
            "8 usable CPUs (0-7) of 8 online: 4 physical cores, SMT siblings present, 2 NUMA nodes");
}

TEST(CpuTopologyTest, KeepsOnlyAllowedOnlineCpus) {
  FakeSysfs sys;
  sys.Write("online", "0-1,3\n");  // CPU 2 offline
  for (int id = 0; id < 4; ++id) sys.Cpu(id, id, 0, 0);
  absl::StatusOr<CpuTopology> topology = ReadCpuTopology(sys.root(), {1, 2, 3, 9});
  ASSERT_TRUE(topology.ok()) << topology.status();
  ASSERT_EQ(topology->cpus.size(), 2u);
  EXPECT_EQ(topology->cpus[0].id, 1);
  EXPECT_EQ(topology->cpus[1].id, 3);
  EXPECT_EQ(topology->online, 3);
  EXPECT_FALSE(topology->Smt());
}

TEST(CpuTopologyTest, MissingTopologyFilesMakeEachCpuItsOwnCore) {
  FakeSysfs sys;
  sys.Write("online", "0-1\n");
  absl::StatusOr<CpuTopology> topology = ReadCpuTopology(sys.root(), {0, 1});
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->PhysicalCores(), 2);
  EXPECT_EQ(topology->NumaNodes(), 1);
}

TEST(CpuTopologyTest, GarbledFilesAreErrorsOrFallbacks) {
  FakeSysfs sys;
  EXPECT_EQ(ReadCpuTopology(sys.root(), {0}).status().code(), absl::StatusCode::kFailedPrecondition);
  sys.Write("online", "zero\n");
  absl::Status bad = ReadCpuTopology(sys.root(), {0}).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("online"), std::string::npos) << bad;
  sys.Write("online", "0\n");
  sys.Write("cpu0/topology/core_id", "garbage\n");
  EXPECT_TRUE(ReadCpuTopology(sys.root(), {0}).ok());
  // None of the allowed CPUs online.
  EXPECT_EQ(ReadCpuTopology(sys.root(), {5}).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CpuTopologyTest, TheRealMachineHasTheAffinityCpus) {
  const std::vector<int> mine = CurrentThreadCpus();
  ASSERT_FALSE(mine.empty());
  absl::StatusOr<CpuTopology> topology = ReadProcessCpuTopology();
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->cpus.size(), mine.size());
}

}  // namespace
}  // namespace infera
