#include "tools/bench/bench_shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/kserve_http_payload.h"

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

std::string ReadObject(const std::string& key, uint64_t offset, uint64_t size) {
  const int fd = shm_open(key.c_str(), O_RDONLY, 0);
  EXPECT_GE(fd, 0);
  std::string out(size, '\0');
  EXPECT_EQ(pread(fd, out.data(), size, static_cast<off_t>(offset)), static_cast<ssize_t>(size));
  close(fd);
  return out;
}

std::vector<PayloadData> TwoPayloads() {
  std::vector<PayloadData> payloads(2);
  payloads[0].inputs.push_back(Tensor{"a", DataType::kFp32, {3}, Buffer::Copy("0123456789ab", 12)});
  payloads[0].inputs.push_back(Tensor{"b", DataType::kInt8, {1}, Buffer::Copy("z", 1)});
  payloads[1].inputs.push_back(Tensor{"a", DataType::kFp32, {3}, Buffer::Copy("ABCDEFGHIJKL", 12)});
  payloads[1].inputs.push_back(Tensor{"b", DataType::kInt8, {1}, Buffer::Copy("y", 1)});
  return payloads;
}

TEST(BenchSharedMemoryTest, InputsAreCopiedAlignedAndRegionsRegisteredThenRemoved) {
  std::vector<PayloadData> payloads = TwoPayloads();
  std::vector<BenchSharedMemory::Region> registered;
  std::vector<std::string> unregistered;
  std::string in_key;
  {
    auto shm = BenchSharedMemory::Create(
        payloads, {"y"}, 100,
        [&](const BenchSharedMemory::Region& r) {
          registered.push_back(r);
          return absl::OkStatus();
        },
        [&](const std::string& name) {
          unregistered.push_back(name);
          return absl::OkStatus();
        });
    ASSERT_TRUE(shm.ok()) << shm.status();
    ASSERT_EQ(registered.size(), 2u);
    in_key = registered[0].key;
    ASSERT_TRUE(payloads[1].shm.has_value());
    const ShmTensorRef& ref = payloads[1].shm->inputs[0];
    EXPECT_EQ(ref.region, registered[0].name);
    EXPECT_EQ(ref.offset % 64, 0u);
    EXPECT_EQ(ref.byte_size, 12u);
    EXPECT_EQ(ReadObject(in_key, ref.offset, 12), "ABCDEFGHIJKL");
    EXPECT_EQ(ReadObject(in_key, payloads[0].shm->inputs[1].offset, 1), "z");
    ASSERT_EQ(payloads[0].shm->outputs.size(), 1u);
    EXPECT_EQ(payloads[0].shm->outputs[0].first, "y");
    EXPECT_EQ(payloads[0].shm->outputs[0].second.byte_size, 100u);

    KServeHttpTarget target{"h:1", "m", "", false, false};
    const std::string request = EncodeInferHttpRequest(target, payloads[1].inputs, &*payloads[1].shm);
    EXPECT_THAT(request, HasSubstr("\"shared_memory_region\":\"" + registered[0].name + "\""));
    EXPECT_THAT(request, HasSubstr("\"outputs\":[{\"name\":\"y\",\"parameters\":{\"shared_memory_region\":\"" +
                                   registered[1].name + "\",\"shared_memory_byte_size\":100}}]"));
    EXPECT_THAT(request, ::testing::Not(HasSubstr("\"data\"")));
  }
  EXPECT_EQ(unregistered.size(), 2u);
  EXPECT_LT(shm_open(in_key.c_str(), O_RDONLY, 0), 0);  // unlinked
}

TEST(BenchSharedMemoryTest, RegisterFailureIsReportedAndCleansUp) {
  std::vector<PayloadData> payloads = TwoPayloads();
  std::string key;
  auto shm = BenchSharedMemory::Create(
      payloads, {"y"}, 16,
      [&](const BenchSharedMemory::Region& r) {
        key = r.key;
        return absl::PermissionDeniedError("no");
      },
      [](const std::string&) { return absl::OkStatus(); });
  EXPECT_EQ(shm.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_LT(shm_open(key.c_str(), O_RDONLY, 0), 0);
}

}  // namespace
}  // namespace infera::bench
