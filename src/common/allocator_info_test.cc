#include "common/allocator_info.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace infera {
namespace {

// The unit test binary links no allocator: glibc serves malloc unless one is preloaded
// (INFERA_EXPECT_ALLOCATOR lets a run under LD_PRELOAD say which).
TEST(AllocatorInfoTest, NamesTheObjectThatServesMalloc) {
  const AllocatorInfo info = ActiveAllocator();
  const char* expected = std::getenv("INFERA_EXPECT_ALLOCATOR");
  EXPECT_EQ(info.name, expected != nullptr ? expected : "glibc") << info.Describe();
  EXPECT_FALSE(info.version.empty()) << info.Describe();
  EXPECT_NE(info.library.find(info.name == "glibc" ? "libc.so" : info.name), std::string::npos) << info.Describe();
  EXPECT_NE(info.Describe().find(info.library), std::string::npos);
}

}  // namespace
}  // namespace infera
