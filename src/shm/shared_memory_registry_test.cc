#include "shm/shared_memory_registry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
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
  uint8_t byte = 0;
  ASSERT_TRUE((*region)->Read(0, 1, &byte).ok());
  EXPECT_EQ(byte, 42);  // region offsets start at the registered offset
  region->reset();      // no request holds it: unregistering removes it at once
  EXPECT_TRUE(registry.Unregister("in").ok());
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_EQ(registry.Status("in").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(registry.Unregister("in").ok());  // unknown: OK, as Triton
}

// Triton's refusals, with its texts (its qa L0_shared_memory matches them).
TEST(SharedMemoryRegistryTest, TritonKeyRulesAndRangeTexts) {
  TestShmObject object(64);
  SharedMemoryRegistry registry;
  for (const char* key : {"/", "///"}) {
    EXPECT_THAT(std::string(registry.Register("n", key, 0, 8).message()),
                HasSubstr(std::string("cannot register shared memory region 'n' - invalid shm key '") + key + "'"))
        << key;
  }
  for (const char* key : {"triton_python_backend_shm_region_x", "///triton_python_backend_shm_region_x"}) {
    EXPECT_THAT(std::string(registry.Register("n", key, 0, 8).message()),
                HasSubstr(std::string("cannot register shared memory region 'n' with key '") + key +
                          "' as the key contains the reserved prefix 'triton_python_backend_shm_region_'"))
        << key;
  }
  EXPECT_THAT(std::string(registry.Register("n", object.key(), 0, 65).message()),
              HasSubstr("failed to register shared memory region 'n': invalid args"));
  EXPECT_THAT(std::string(registry.Register("n", object.key(), 65, 0).message()),
              HasSubstr("failed to register shared memory region 'n': invalid args"));
  EXPECT_THAT(std::string(registry.Register("", object.key(), 0, 8).message()),
              HasSubstr("'region name' is necessary to register system shared memory region"));
  EXPECT_EQ(registry.size(), 0u);
}

TEST(SharedMemoryRegistryTest, ReadsAndWritesAtTheRegisteredOffset) {
  TestShmObject object(3 * 4096);
  object.data()[4096 + 5] = 7;
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 4096 + 5, 10).ok());
  auto region = *registry.Find("r");
  uint8_t got[10] = {};
  ASSERT_TRUE(region->Read(0, 10, got).ok());
  EXPECT_EQ(got[0], 7);
  const uint8_t written[3] = {1, 2, 3};
  ASSERT_TRUE(region->Write(7, written, 3).ok());
  EXPECT_EQ(std::memcmp(object.data() + 4096 + 12, written, 3), 0);
  EXPECT_EQ(object.Size(), 3u * 4096);  // nothing grew
}

TEST(SharedMemoryRegistryTest, ReadAndWriteStayInsideTheRegion) {
  TestShmObject object(4096);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 100, 200).ok());
  auto region = *registry.Find("r");
  uint8_t buffer[256] = {};
  EXPECT_TRUE(region->Read(190, 10, buffer).ok());
  EXPECT_TRUE(region->Read(200, 0, buffer).ok());
  const std::pair<uint64_t, size_t> outside[] = {{190, 11}, {201, 0}, {0, 201}, {UINT64_MAX, 1}, {1, SIZE_MAX}};
  for (auto [offset, size] : outside) {
    EXPECT_EQ(region->Read(offset, size, buffer).code(), absl::StatusCode::kInvalidArgument)
        << offset << " " << size;
    EXPECT_EQ(region->Write(offset, buffer, size).code(), absl::StatusCode::kInvalidArgument)
        << offset << " " << size;
  }
  EXPECT_THAT(std::string(region->Read(190, 11, buffer).message()),
              HasSubstr("past the end of region 'r'"));
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

TEST(SharedMemoryRegistryTest, UnregisterWhileInUseKeepsTheRegionUsable) {
  TestShmObject object(4096);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 0, 4096).ok());
  std::shared_ptr<const SharedMemoryRegion> held = *registry.Find("r");
  ASSERT_TRUE(registry.Unregister("r").ok());
  // As Triton's: still registered (listed, usable by new requests, its name taken) while
  // a request holds it.
  EXPECT_EQ(registry.Status("r")->size(), 1u);
  EXPECT_TRUE(registry.Find("r").ok());
  EXPECT_EQ(registry.Register("r", object.key(), 0, 8).code(), absl::StatusCode::kAlreadyExists);
  registry.UnregisterAll();  // the same for every region
  EXPECT_EQ(registry.size(), 1u);
  // The holder's descriptor still reads and writes the object.
  object.data()[100] = 9;
  uint8_t byte = 0;
  ASSERT_TRUE(held->Read(100, 1, &byte).ok());
  EXPECT_EQ(byte, 9);
  const uint8_t eleven = 11;
  ASSERT_TRUE(held->Write(101, &eleven, 1).ok());
  EXPECT_EQ(object.data()[101], 11);
  // The last holder lets go: the region is gone without another unregister.
  held.reset();
  EXPECT_EQ(registry.Status("r").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_TRUE(registry.Register("r", object.key(), 0, 8).ok());
  // Registered again: not awaiting anything, so a later holder keeps nothing alive.
  EXPECT_TRUE(registry.Find("r").ok());
  EXPECT_EQ(registry.Status("r")->size(), 1u);
}

// The client owns the object and may shrink it at any time: reads and writes then fail
// with an error naming the shrink, and can never fault the process (no mapping exists).
TEST(SharedMemoryRegistryTest, ShrunkObjectIsAnErrorNeverAFault) {
  TestShmObject object(8192);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 4096, 4096).ok());
  auto region = *registry.Find("r");
  std::vector<uint8_t> buffer(4096);
  EXPECT_TRUE(region->CheckObjectSize().ok());
  EXPECT_TRUE(region->Read(0, 4096, buffer.data()).ok());
  object.Resize(0);
  for (absl::Status status : {region->Read(0, 4096, buffer.data()), region->Read(4000, 1, buffer.data()),
                              region->Write(0, buffer.data(), 4096), region->CheckObjectSize()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(status.message()), HasSubstr("shrank to 0 bytes"));
  }
  EXPECT_EQ(object.Size(), 0u);  // a refused write does not grow the client's object
  object.Resize(4096 + 100);     // part of the range: a short read, a refused write
  EXPECT_EQ(region->Read(0, 200, buffer.data()).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(region->Read(0, 100, buffer.data()).ok());
  EXPECT_EQ(region->Write(0, buffer.data(), 10).code(), absl::StatusCode::kFailedPrecondition);
  object.Resize(8192);  // back: usable again (the bytes past the shrink read as zeros)
  EXPECT_TRUE(region->Read(0, 4096, buffer.data()).ok());
  EXPECT_EQ(buffer[4095], 0);
  EXPECT_TRUE(region->Write(0, buffer.data(), 4096).ok());
}

TEST(SharedMemoryRegistryTest, UnlinkedObjectStaysUsableThroughTheKeptDescriptor) {
  TestShmObject object(4096);
  object.data()[5] = 3;
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("r", object.key(), 0, 4096).ok());
  ASSERT_EQ(shm_unlink(object.key().c_str()), 0);
  uint8_t byte = 0;
  ASSERT_TRUE((*registry.Find("r"))->Read(5, 1, &byte).ok());
  EXPECT_EQ(byte, 3);
  EXPECT_EQ(registry.Register("again", object.key(), 0, 8).code(), absl::StatusCode::kInvalidArgument);
}

TEST(SharedMemoryRegistryTest, ObjectsThatAreNotRegularFilesAreRefused) {
  const std::string base = "infera_test_special_" + std::to_string(getpid());
  const std::string fifo = "/dev/shm/" + base + "_fifo";
  const std::string dir = "/dev/shm/" + base + "_dir";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0) << std::strerror(errno);
  SharedMemoryRegistry registry;
  // A FIFO opens without blocking and is refused; a directory does not open.
  absl::Status fifo_status = registry.Register("f", "/" + base + "_fifo", 0, 8);
  EXPECT_EQ(fifo_status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(fifo_status.message()), HasSubstr("not a shared-memory object"));
  EXPECT_EQ(registry.Register("d", "/" + base + "_dir", 0, 8).code(), absl::StatusCode::kInvalidArgument);
  unlink(fifo.c_str());
  rmdir(dir.c_str());
  EXPECT_EQ(registry.size(), 0u);
}

// A sparse object far larger than memory registers (nothing is mapped); a request then
// copies only what it names, bounded by max_request_bytes (shared_memory_binding_test).
TEST(SharedMemoryRegistryTest, HugeSparseObjectNeedsNoMapping) {
  TestShmObject object(4096);
  constexpr uint64_t kTiB = uint64_t{1} << 40;
  object.Resize(kTiB);
  SharedMemoryRegistry registry;
  ASSERT_TRUE(registry.Register("huge", object.key(), 0, kTiB).ok());
  uint8_t bytes[16] = {1};
  ASSERT_TRUE((*registry.Find("huge"))->Read(kTiB / 2, sizeof(bytes), bytes).ok());
  EXPECT_EQ(bytes[0], 0);  // a hole reads as zeros
  object.Resize(4096);
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
        uint8_t byte = 0;
        EXPECT_TRUE((*region)->Read(7, 1, &byte).ok());  // a held region is always readable
        EXPECT_EQ(byte, 5);
        ++found;
        EXPECT_TRUE(registry.Status("").ok());
      }
    });
  }
  // An unregistered region that a reader still holds keeps its name until the reader lets
  // go (Triton's rule): registering the name again succeeds once it has.
  const auto register_when_free = [&] {
    absl::Status registered;
    while (!(registered = registry.Register("r", object.key(), 0, 4096)).ok()) {
      ASSERT_THAT(registered.message(), HasSubstr("already in manager"));
      std::this_thread::yield();
    }
  };
  for (int i = 0; i < 500; ++i) {
    register_when_free();
    ASSERT_TRUE(registry.Unregister("r").ok());
  }
  register_when_free();
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(registry.size(), 1u);
}

}  // namespace
}  // namespace infera
