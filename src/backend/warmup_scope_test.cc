#include "backend/warmup_scope.h"

#include <thread>

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(WarmupScopeTest, ActiveOnlyInsideAndOnlyOnItsThread) {
  EXPECT_FALSE(WarmupScope::Active());
  {
    WarmupScope warming;
    EXPECT_TRUE(WarmupScope::Active());
    {
      WarmupScope nested;
      EXPECT_TRUE(WarmupScope::Active());
    }
    EXPECT_TRUE(WarmupScope::Active());  // the outer scope is still open
    bool other_thread = true;
    std::thread([&] { other_thread = WarmupScope::Active(); }).join();
    EXPECT_FALSE(other_thread);
  }
  EXPECT_FALSE(WarmupScope::Active());
}

}  // namespace
}  // namespace infera
