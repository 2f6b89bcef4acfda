#include "common/allocator_info.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace infera {
namespace {

// The unit test binary links no allocator: glibc serves malloc unless one is preloaded
// (INFERA_EXPECT_ALLOCATOR lets a run under LD_PRELOAD say which).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INFERA_SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define INFERA_SANITIZER_BUILD 1
#endif
#endif

TEST(AllocatorInfoTest, NamesTheObjectThatServesMalloc) {
  const AllocatorInfo info = ActiveAllocator();
#ifdef INFERA_SANITIZER_BUILD
  // make test's ASan stage: the sanitizer's runtime serves malloc.
  EXPECT_TRUE(info.name == "asan" || info.name == "tsan") << info.Describe();
  return;
#endif
  const char* expected = std::getenv("INFERA_EXPECT_ALLOCATOR");
  EXPECT_EQ(info.name, expected != nullptr ? expected : "glibc") << info.Describe();
  EXPECT_FALSE(info.version.empty()) << info.Describe();
  EXPECT_NE(info.library.find(info.name == "glibc" ? "libc.so" : info.name), std::string::npos) << info.Describe();
  EXPECT_NE(info.Describe().find(info.library), std::string::npos);
}

}  // namespace
}  // namespace infera
