#include "backend/load_timings.h"

#include <thread>

#include "gtest/gtest.h"

namespace infera {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(LoadTimings, DescribesStagesAndInstances) {
  LoadTimings t;
  t.AddStage("read", milliseconds(9));
  t.AddStage("deserialise", microseconds(61400));
  t.AddStage("optimise", microseconds(411600));
  t.instances = {{microseconds(200), milliseconds(203)}, {microseconds(300), milliseconds(189)}};
  t.instance_threads = 2;
  EXPECT_EQ(t.Describe(),
            "read 9 ms, deserialise 61 ms, optimise 412 ms, 2 instances: create 1 ms, warm-up 392 ms "
            "(per instance 203 / 189 ms, 2 at a time)");
}

TEST(LoadTimings, BackendWithoutStagesAndOneInstance) {
  LoadTimings t;
  t.backend_load = microseconds(400);
  t.instances = {{milliseconds(0), milliseconds(3)}};
  EXPECT_EQ(t.Describe(), "backend load 0 ms, 1 instance: create 0 ms, warm-up 3 ms");
  LoadTimings none;
  EXPECT_EQ(none.Describe(), "backend load 0 ms");
}

TEST(LoadTimings, RoundedMillis) {
  EXPECT_EQ(RoundedMillis(microseconds(499)), 0);
  EXPECT_EQ(RoundedMillis(microseconds(500)), 1);
  EXPECT_EQ(RoundedMillis(milliseconds(1234)), 1234);
}

TEST(ScopedLoadTimer, AddsItsScopeAndToleratesNull) {
  LoadTimings::Duration d = milliseconds(5);
  {
    ScopedLoadTimer timer(&d);
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_GE(d, milliseconds(7));
  { ScopedLoadTimer timer(nullptr); }
}

}  // namespace
}  // namespace infera
