#include "common/completion_batch.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(CompletionBatchTest, NoScopeByDefault) { EXPECT_EQ(CompletionBatch::Current(), nullptr); }

TEST(CompletionBatchTest, FlushesRunOnceInOrderWhenTheOutermostScopeCloses) {
  std::vector<std::string> log;
  {
    CompletionBatch outer;
    ASSERT_EQ(CompletionBatch::Current(), &outer);
    CompletionBatch::Current()->AtClose([&] { log.push_back("a"); });
    {
      CompletionBatch inner;  // nested: the outer one stays current
      EXPECT_EQ(CompletionBatch::Current(), &outer);
      CompletionBatch::Current()->AtClose([&] { log.push_back("b"); });
    }
    EXPECT_TRUE(log.empty());  // the inner scope flushed nothing
    log.push_back("body");
  }
  EXPECT_EQ(log, (std::vector<std::string>{"body", "a", "b"}));
  EXPECT_EQ(CompletionBatch::Current(), nullptr);
}

TEST(CompletionBatchTest, AFlushMayRegisterMoreFlushes) {
  std::vector<int> log;
  {
    CompletionBatch batch;
    batch.AtClose([&] {
      log.push_back(1);
      ASSERT_NE(CompletionBatch::Current(), nullptr);
      CompletionBatch nested;  // e.g. a flush that completes further requests
      CompletionBatch::Current()->AtClose([&] { log.push_back(2); });
    });
  }
  EXPECT_EQ(log, (std::vector<int>{1, 2}));
  EXPECT_EQ(CompletionBatch::Current(), nullptr);
}

TEST(CompletionBatchTest, ScopesArePerThread) {
  CompletionBatch mine;
  CompletionBatch* seen = &mine;
  std::thread other([&] { seen = CompletionBatch::Current(); });
  other.join();
  EXPECT_EQ(seen, nullptr);
}

}  // namespace
}  // namespace infera
