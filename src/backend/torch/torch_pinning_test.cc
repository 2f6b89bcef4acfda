#include "backend/torch/torch_pinning.h"

#include <ATen/Parallel.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_topology.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

// Cpus_allowed_list of thread `tid` of this process.
std::string AllowedList(const std::string& tid) {
  std::ifstream in("/proc/self/task/" + tid + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 18));
  }
  return "";
}

int CountMatches(const std::string& text, const std::regex& re) {
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// On a fresh thread (its own OpenMP team, as a scheduler worker has): the caller and the
// team member land on their CPUs, and a later parallel region of the same size runs on
// the same, still pinned, threads.
TEST(TorchPinningTest, PinsTheCallerAndItsTeam) {
  const std::vector<int> mine = CurrentThreadCpus();
  ASSERT_FALSE(mine.empty());
  const std::vector<int> cpus = {mine.front(), mine.back()};
  std::thread worker([&] {
    // get_num_threads() first: ATen's lazy per-thread initialisation would undo an
    // earlier set (docs/torch_backend.md), as TorchInstance does it.
    (void)at::get_num_threads();
    at::set_num_threads(2);
    ASSERT_EQ(at::get_num_threads(), 2);
    absl::StatusOr<std::string> pinned = PinIntraOpThreads(cpus, 2);
    ASSERT_TRUE(pinned.ok()) << pinned.status();
    EXPECT_EQ(CurrentThreadCpus(), std::vector<int>{cpus[0]});
    EXPECT_NE(pinned->find("thread 0 (tid "), std::string::npos) << *pinned;
    // Both team members, each on its CPU as /proc reads it (torch_pinning.cc is built
    // with OpenMP; this file is not, so it looks from outside the team).
    const std::regex member(R"(thread (\d) \(tid (\d+)\) -> CPU (\d+))");
    std::vector<std::string> tids;
    for (auto it = std::sregex_iterator(pinned->begin(), pinned->end(), member); it != std::sregex_iterator(); ++it) {
      const std::string tid = (*it)[2];
      tids.push_back(tid);
      EXPECT_EQ(AllowedList(tid), (*it)[3].str()) << *pinned;
    }
    ASSERT_EQ(tids.size(), 2u) << *pinned;
    EXPECT_NE(tids[0], tids[1]);
    // The next region of the same size runs on the same threads: the pinning sticks.
    absl::StatusOr<std::string> again = PinIntraOpThreads(cpus, 2);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *pinned);
  });
  worker.join();
  EXPECT_EQ(CurrentThreadCpus(), mine);
}

TEST(TorchPinningTest, OneThreadPinsOnlyTheCaller) {
  const std::vector<int> mine = CurrentThreadCpus();
  std::thread worker([&] {
    (void)at::get_num_threads();
    at::set_num_threads(1);
    absl::StatusOr<std::string> pinned = PinIntraOpThreads({mine.back()}, 1);
    ASSERT_TRUE(pinned.ok()) << pinned.status();
    EXPECT_EQ(CurrentThreadCpus(), std::vector<int>{mine.back()});
    EXPECT_EQ(CountMatches(*pinned, std::regex(R"(-> CPU \d+)")), 1) << *pinned;
  });
  worker.join();
}

TEST(TorchPinningTest, AnImpossibleCpuIsAnError) {
  std::thread worker([] {
    (void)at::get_num_threads();
    at::set_num_threads(1);
    absl::StatusOr<std::string> pinned = PinIntraOpThreads({CPU_SETSIZE - 1}, 1);
    ASSERT_FALSE(pinned.ok());
    EXPECT_NE(pinned.status().message().find("intra-op thread 0"), std::string::npos) << pinned.status();
  });
  worker.join();
}

}  // namespace
}  // namespace infera
