#include "common/completion_batch.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(CompletionBatchTest, FlushesRunOnceInOrderWhenTheBatchCloses) {
  std::vector<std::string> log;
  {
    CompletionBatch batch;
    batch.AtClose([&] { log.push_back("a"); });
    batch.AtClose([&] { log.push_back("b"); });
    EXPECT_TRUE(log.empty());  // nothing before the batch closes
    log.push_back("body");
  }
  EXPECT_EQ(log, (std::vector<std::string>{"body", "a", "b"}));
}

TEST(CompletionBatchTest, AFlushMayRegisterMoreFlushes) {
  std::vector<int> log;
  {
    CompletionBatch batch;
    batch.AtClose([&] {
      log.push_back(1);
      batch.AtClose([&] { log.push_back(2); });  // e.g. a flush that completes further requests
    });
  }
  EXPECT_EQ(log, (std::vector<int>{1, 2}));
}

TEST(CompletionBatchTest, AnInnerBatchFlushesWhenItCloses) {
  std::vector<std::string> log;
  {
    CompletionBatch outer;
    outer.AtClose([&] { log.push_back("outer"); });
    {
      CompletionBatch inner;  // an ensemble step run inline inside the outer delivery
      inner.AtClose([&] { log.push_back("inner"); });
    }
    EXPECT_EQ(log, (std::vector<std::string>{"inner"}));
  }
  EXPECT_EQ(log, (std::vector<std::string>{"inner", "outer"}));
}

}  // namespace
}  // namespace infera
