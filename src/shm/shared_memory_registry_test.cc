#include "shm/shared_memory_registry.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shm/shm_test_util.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

TEST(SharedMemoryRegistryTest, RegisterStatusUnregister) {
  TestShmObject object(4096);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("in", object.key(), 16, 64).ok());
  auto all = registry.Status("");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].name, "in");
  EXPECT_EQ((*all)[0].key, object.key());
  EXPECT_EQ((*all)[0].offset, 16u);
  EXPECT_EQ((*all)[0].byte_size, 64u);
  auto region = registry.Find("in");
  ASSERT_TRUE(region.ok());
  object.data()[16] = 42;
  EXPECT_EQ((*region)->data()[0], 42);  // the mapping starts at the offset
  EXPECT_TRUE(registry.Unregister("in").ok());
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_EQ(registry.Status("in").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(registry.Unregister("in").ok());  // unknown: OK, as Triton
}

TEST(SharedMemoryRegistryTest, OffsetNotPageAlignedMapsTheRightBytes) {
  TestShmObject object(3 * 4096);
  object.data()[4096 + 5] = 7;
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 4096 + 5, 10).ok());
  EXPECT_EQ((*registry.Find("r"))->data()[0], 7);
}

TEST(SharedMemoryRegistryTest, DuplicateNameIsAlreadyExists) {
  TestShmObject object(4096);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 0, 8).ok());
  absl::Status again = registry.Register("r", object.key(), 0, 8);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(again.message()), HasSubstr("already in manager"));
}

TEST(SharedMemoryRegistryTest, RangePastTheEndIsRefused) {
  TestShmObject object(100);
  SharedMemoryRegistry registry;
  absl::Status past = registry.Register("r", object.key(), 50, 51);
  EXPECT_EQ(past.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(past.message()), HasSubstr("past the end"));
  EXPECT_TRUE(registry.Register("r", object.key(), 50, 50).ok());
}

TEST(SharedMemoryRegistryTest, OffsetOverflowIsRefused) {
  TestShmObject object(100);
  SharedMemoryRegistry registry;
  EXPECT_EQ(registry.Register("a", object.key(), UINT64_MAX, 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("b", object.key(), INT64_MAX, 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("c", object.key(), 0, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.size(), 0u);
}

TEST(SharedMemoryRegistryTest, BadNamesAndKeys) {
  for (std::string name : {std::string(""), std::string("a/b"), std::string("a\\b"),
                           std::string("a b"), std::string("a\0b", 3), std::string(200, 'x')}) {
    EXPECT_EQ(ValidateSharedMemoryName(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  for (std::string key : {std::string(""), std::string("/"), std::string("/.."), std::string(".."),
                          std::string("/a/b"), std::string("/../etc/passwd"), std::string("//a"),
                          std::string("/a\0b", 4), std::string(300, 'k')}) {
    EXPECT_EQ(ValidateSharedMemoryKey(key).code(), absl::StatusCode::kInvalidArgument) << key;
  }
  EXPECT_TRUE(ValidateSharedMemoryKey("/psm_1234").ok());
  EXPECT_TRUE(ValidateSharedMemoryKey("psm_1234").ok());
  EXPECT_TRUE(ValidateSharedMemoryName("input0_data").ok());
}

TEST(SharedMemoryRegistryTest, MissingObjectIsInvalidArgument) {
  SharedMemoryRegistry registry;
  absl::Status missing = registry.Register("r", "/infera_no_such_object_xyz", 0, 8);
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("Unable to open"));
}

TEST(SharedMemoryRegistryTest, RegionCapIsEnforced) {
  TestShmObject object(4096);
  SharedMemoryRegistry registry(/*max_regions=*/2);
  ASSERT_TRUE(registry.Register("a", object.key(), 0, 8).ok());
  ASSERT_TRUE(registry.Register("b", object.key(), 8, 8).ok());
  EXPECT_EQ(registry.Register("c", object.key(), 16, 8).code(),
            absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(registry.Unregister("a").ok());
  EXPECT_TRUE(registry.Register("c", object.key(), 16, 8).ok());
}

TEST(SharedMemoryRegistryTest, UnregisterWhileInUseKeepsTheMapping) {
  TestShmObject object(4096);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 0, 4096).ok());
  std::shared_ptr<const SharedMemoryRegion> held = *registry.Find("r");
  ASSERT_TRUE(registry.Unregister("r").ok());
  EXPECT_FALSE(registry.Find("r").ok());
  // The holder's mapping is still valid and still shared with the object.
  object.data()[100] = 9;
  EXPECT_EQ(held->data()[100], 9);
  held->data()[101] = 11;
  EXPECT_EQ(object.data()[101], 11);
  // The name is free again.
  EXPECT_TRUE(registry.Register("r", object.key(), 0, 8).ok());
}

TEST(SharedMemoryRegistryTest, ShrunkObjectIsDetected) {
  TestShmObject object(8192);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 4096, 4096).ok());
  auto region = *registry.Find("r");
  EXPECT_TRUE(region->CheckStillMapped().ok());
  object.Resize(100);
  EXPECT_EQ(region->CheckStillMapped().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SharedMemoryRegistryTest, UnregisterAll) {
  TestShmObject object(4096);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("a", object.key(), 0, 8).ok());
  ASSERT_TRUE(registry.Register("b", object.key(), 0, 8).ok());
  registry.UnregisterAll();
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_TRUE(registry.Status("")->empty());
}

TEST(SharedMemoryRegistryTest, ConcurrentUseWhileRegisteringAndUnregistering) {
  TestShmObject object(4096);
  object.data()[7] = 5;
  SharedMemoryRegistry registry;
  std::atomic<int> found{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto region = registry.Find("r");
        if (!region.ok()) continue;
        EXPECT_EQ((*region)->data()[7], 5);  // a held mapping is always readable
        ++found;
        EXPECT_TRUE(registry.Status("").ok());
      }
    });
  }
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(registry.Register("r", object.key(), 0, 4096).ok());
    ASSERT_TRUE(registry.Unregister("r").ok());
  }
  ASSERT_TRUE(registry.Register("r", object.key(), 0, 4096).ok());
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(registry.size(), 1u);
}

}  // namespace
}  // namespace infera
