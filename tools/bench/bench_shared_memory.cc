#include "tools/bench/bench_shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/str_cat.h"

namespace infera::bench {
namespace {

constexpr uint64_t kAlign = 64;

uint64_t AlignUp(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

absl::Status BenchSharedMemory::MakeObject(Object& object) {
  const int fd = shm_open(object.region.key.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    return absl::UnavailableError(
        StrCat("shm_open ", object.region.key, ": ", std::strerror(errno)));
  }
  const uint64_t size = std::max<uint64_t>(object.region.byte_size, 1);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int error = errno;
    close(fd);
    shm_unlink(object.region.key.c_str());
    return absl::UnavailableError(StrCat("ftruncate ", object.region.key, ": ", std::strerror(error)));
  }
  void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED) {
    shm_unlink(object.region.key.c_str());
    return absl::UnavailableError(StrCat("mmap ", object.region.key, ": ", std::strerror(errno)));
  }
  object.mapping = mapping;
  object.size = size;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BenchSharedMemory>> BenchSharedMemory::Create(
    std::vector<PayloadData>& payloads, const std::vector<std::string>& output_names,
    uint64_t output_slot_bytes, Register register_region, Unregister unregister_region) {
  std::unique_ptr<BenchSharedMemory> shm(new BenchSharedMemory());
  shm->unregister_ = std::move(unregister_region);
  const std::string prefix = StrCat("infera_bench_", getpid(), "_");

  uint64_t input_bytes = 0;
  for (const PayloadData& p : payloads) {
    for (const Tensor& t : p.inputs) input_bytes += AlignUp(t.data.size());
  }
  shm->objects_.resize(2);
  Object& in = shm->objects_[0];
  Object& out = shm->objects_[1];
  in.region = {prefix + "in", "/" + prefix + "in", std::max<uint64_t>(input_bytes, 1)};
  out.region = {prefix + "out", "/" + prefix + "out",
                std::max<uint64_t>(AlignUp(output_slot_bytes) * output_names.size(), 1)};
  for (Object& object : shm->objects_) {
    if (absl::Status made = shm->MakeObject(object); !made.ok()) return made;
  }

  uint64_t offset = 0;
  for (PayloadData& p : payloads) {
    PayloadShm refs;
    for (const Tensor& t : p.inputs) {
      if (!t.data.empty()) std::memcpy(static_cast<uint8_t*>(in.mapping) + offset, t.data.data(), t.data.size());
      refs.inputs.push_back({in.region.name, offset, t.data.size()});
      offset += AlignUp(t.data.size());
    }
    for (size_t i = 0; i < output_names.size(); ++i) {
      refs.outputs.emplace_back(output_names[i],
                                ShmTensorRef{out.region.name, i * AlignUp(output_slot_bytes), output_slot_bytes});
    }
    p.shm = std::move(refs);
  }
  for (Object& object : shm->objects_) {
    if (absl::Status registered = register_region(object.region); !registered.ok()) {
      return absl::Status(registered.code(), StrCat("registering shared memory region ", object.region.name,
                                                    ": ", registered.message()));
    }
    object.registered = true;
  }
  return shm;
}

BenchSharedMemory::~BenchSharedMemory() {
  for (Object& object : objects_) {
    if (object.registered && unregister_) unregister_(object.region.name).IgnoreError();
    if (object.mapping != nullptr) munmap(object.mapping, object.size);
    if (object.mapping != nullptr) shm_unlink(object.region.key.c_str());
  }
}

}  // namespace infera::bench
