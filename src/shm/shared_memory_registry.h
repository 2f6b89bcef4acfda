// SharedMemoryRegistry: the system shared-memory regions clients registered (Triton's
// system shared-memory extension), shared by the HTTP and gRPC frontends.
//
// A client (a co-located process: a pre-processing sidecar in the same pod) creates a
// POSIX shared-memory object, e.g. `/dev/shm/img` with key "/img", and registers a range
// of it under a name:
//
//   registry.Register("input0", "/img", /*offset=*/0, /*byte_size=*/602112);
//
// Register opens the object read-write without O_CREAT (the client owns it), checks with
// fstat that [offset, offset + byte_size) lies inside it, and maps that range
// (MAP_SHARED). A request then names the region in an input's or output's parameters
// (see shared_memory_binding.h); the bytes never travel through a socket.
//
// Lifetime: each mapping is a SharedMemoryRegion held by shared_ptr. The registry holds
// one reference; every request that reads or writes the region holds another (an input
// Tensor's Buffer views the mapping and owns a reference). Unregistering only drops the
// registry's reference, so a request in flight keeps its mapping valid until its last
// user is done; the munmap happens then.
//
// Contract:
//   - Names: 1..kMaxNameLength bytes, printable ASCII, no '/', '\\' or NUL.
//     Keys: an optional leading '/', then 1..kMaxKeyLength bytes of printable ASCII with
//     no further '/' (POSIX: one path component under the shm filesystem), not "." or
//     "..". Anything else is InvalidArgument naming the problem.
//   - byte_size must be > 0; offset + byte_size is computed with checked arithmetic and
//     must not exceed the object's size (InvalidArgument naming both).
//   - A name already registered is AlreadyExists (Triton: "already in manager"); more
//     than `max_regions` regions is ResourceExhausted.
//   - Unregister of an unknown name succeeds (as Triton's); Status of an unknown name is
//     NotFound.
//   - The object must be a regular file (shm objects are); the server keeps its fd open
//     while the region is mapped, so Region::CheckStillMapped() can fstat it again.
//
// Threat model (see docs/shared_memory.md): registering is an admin action (the
// AdminGuard's shared-memory category). The client owning the object can still shrink
// it (ftruncate) after registering; Region::CheckStillMapped() is called before each
// use to turn that into an error, but a shrink racing with a read would raise SIGBUS:
// a client that may register regions is trusted like any co-located process.
//
// Thread-safe: every method may be called concurrently.
#ifndef INFERA_SHM_SHARED_MEMORY_REGISTRY_H_
#define INFERA_SHM_SHARED_MEMORY_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace infera {

inline constexpr size_t kMaxSharedMemoryNameLength = 128;
inline constexpr size_t kMaxSharedMemoryKeyLength = 250;  // NAME_MAX minus room
inline constexpr size_t kDefaultMaxSharedMemoryRegions = 1024;

// What Status lists for one region (Triton's RegionStatus fields).
struct SharedMemoryRegionInfo {
  std::string name;
  std::string key;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

// One mapped range of a shared-memory object. Unmapped (and its fd closed) when the last
// reference goes.
class SharedMemoryRegion {
 public:
  // Opens, checks and maps (see the contract above).
  static absl::StatusOr<std::shared_ptr<SharedMemoryRegion>> Map(SharedMemoryRegionInfo info);
  ~SharedMemoryRegion();
  SharedMemoryRegion(const SharedMemoryRegion&) = delete;
  SharedMemoryRegion& operator=(const SharedMemoryRegion&) = delete;

  const SharedMemoryRegionInfo& info() const { return info_; }
  // The first byte of the registered range (the object's byte `info().offset`).
  uint8_t* data() const { return data_; }
  uint64_t byte_size() const { return info_.byte_size; }

  // FailedPrecondition when the object has since shrunk below the registered range.
  absl::Status CheckStillMapped() const;

 private:
  SharedMemoryRegion(SharedMemoryRegionInfo info, int fd, void* mapping, size_t mapping_size,
                     uint8_t* data)
      : info_(std::move(info)), fd_(fd), mapping_(mapping), mapping_size_(mapping_size),
        data_(data) {}

  const SharedMemoryRegionInfo info_;
  const int fd_;
  void* const mapping_;
  const size_t mapping_size_;
  uint8_t* const data_;
};

// InvalidArgument naming the problem, or OK (the rules in the contract above).
absl::Status ValidateSharedMemoryName(std::string_view name);
absl::Status ValidateSharedMemoryKey(std::string_view key);

class SharedMemoryRegistry {
 public:
  explicit SharedMemoryRegistry(size_t max_regions = kDefaultMaxSharedMemoryRegions)
      : max_regions_(max_regions) {}

  absl::Status Register(std::string_view name, std::string_view key, uint64_t offset,
                        uint64_t byte_size) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Unregister(std::string_view name) ABSL_LOCKS_EXCLUDED(mu_);
  void UnregisterAll() ABSL_LOCKS_EXCLUDED(mu_);

  // Every region ("" as `name`) in name order, or the one named (NotFound if unknown).
  absl::StatusOr<std::vector<SharedMemoryRegionInfo>> Status(std::string_view name) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // A counted handle on a region: InvalidArgument "Unable to find shared memory region:
  // '<name>'" when unknown (what a request naming it gets, as Triton answers).
  absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> Find(std::string_view name) const
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const size_t max_regions_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<const SharedMemoryRegion>, std::less<>> regions_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace infera

#endif  // INFERA_SHM_SHARED_MEMORY_REGISTRY_H_
