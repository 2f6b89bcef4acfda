#include "llm/worker_team.h"

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

// Every index of [begin, end) is visited exactly once, in at most threads() chunks of at
// least `grain` items (the last may be shorter), as at::parallel_for splits.
TEST(WorkerTeamTest, VisitsEachIndexOnceInAtMostThreadsChunks) {
  for (int threads : {1, 2, 3, 4}) {
    WorkerTeam team(threads);
    EXPECT_EQ(team.threads(), threads);
    for (int64_t n : {0, 1, 2, 3, 7, 16, 100, 1001}) {
      for (int64_t grain : {1, 4, 16, 2000}) {
        std::vector<std::atomic<int>> visits(static_cast<size_t>(n));
        absl::Mutex mu;
        std::vector<std::pair<int64_t, int64_t>> chunks;
        team.ParallelFor(5, 5 + n, grain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) visits[static_cast<size_t>(i - 5)].fetch_add(1);
          absl::MutexLock lock(&mu);
          chunks.emplace_back(b, e);
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(visits[static_cast<size_t>(i)].load(), 1) << n << " " << grain;
        if (n == 0) {
          EXPECT_TRUE(chunks.empty());
          continue;
        }
        EXPECT_LE(static_cast<int>(chunks.size()), threads);
        if (n <= grain) {
          EXPECT_EQ(chunks.size(), 1u);
        }
        for (auto [b, e] : chunks) {
          EXPECT_LT(b, e);
          if (e != 5 + n) {
            EXPECT_GE(e - b, grain);
          }
        }
      }
    }
  }
}

TEST(WorkerTeamTest, ChunksRunOnDistinctThreadsChunkZeroOnTheCaller) {
  WorkerTeam team(3);
  std::vector<std::thread::id> ids(3);
  team.ParallelFor(0, 3, 1, [&](int64_t b, int64_t) { ids[static_cast<size_t>(b)] = std::this_thread::get_id(); });
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), 3u);
  EXPECT_FALSE(WorkerTeam::InRegion());
}

TEST(WorkerTeamTest, NestedRegionsRunInlineOnTheirThread) {
  WorkerTeam team(2), other(2);
  std::atomic<int> inline_runs{0};
  team.ParallelFor(0, 2, 1, [&](int64_t, int64_t) {
    EXPECT_TRUE(WorkerTeam::InRegion());
    const std::thread::id self = std::this_thread::get_id();
    for (WorkerTeam* t : {&team, &other}) {
      t->ParallelFor(0, 100, 1, [&](int64_t b, int64_t e) {
        EXPECT_EQ(b, 0);
        EXPECT_EQ(e, 100);
        EXPECT_EQ(std::this_thread::get_id(), self);
        inline_runs.fetch_add(1);
      });
    }
  });
  EXPECT_EQ(inline_runs.load(), 4);
}

TEST(WorkerTeamTest, RethrowsTheFirstChunksExceptionAfterEveryChunkFinished) {
  WorkerTeam team(4);
  std::atomic<int> finished{0};
  try {
    team.ParallelFor(0, 4, 1, [&](int64_t b, int64_t) {
      finished.fetch_add(1);
      if (b >= 1) throw std::runtime_error("chunk " + std::to_string(b));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "chunk 1");
  }
  EXPECT_EQ(finished.load(), 4);
  // The team still works, and the old errors are gone.
  std::atomic<int64_t> sum{0};
  team.ParallelFor(0, 1000, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum.fetch_add(i);
  });
  EXPECT_EQ(sum.load(), 999 * 1000 / 2);
}

// Back-to-back regions (the spinning hand-over) and regions after the workers went to
// sleep (the futex hand-over), then destruction with sleeping workers.
TEST(WorkerTeamTest, ManyRegionsSpinningAndSleeping) {
  WorkerTeam team(2);
  int64_t total = 0;
  for (int round = 0; round < 20000; ++round) {
    std::atomic<int64_t> sum{0};
    team.ParallelFor(0, 64, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
    total += sum.load();
    // A pause longer than kSpin now and then, so that the worker sleeps before the next.
    if (round % 1000 == 0) std::this_thread::sleep_for(WorkerTeam::kSpin * 5);
  }
  EXPECT_EQ(total, 64 * 20000);
  std::this_thread::sleep_for(WorkerTeam::kSpin * 5);
}

}  // namespace
}  // namespace infera::llm
