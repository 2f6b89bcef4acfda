// SharedMemoryRegistry: the system shared-memory regions clients registered (Triton's
// system shared-memory extension), shared by the HTTP and gRPC frontends.
//
// A client (a co-located process: a pre-processing sidecar in the same pod) creates a
// POSIX shared-memory object, e.g. `/dev/shm/img` with key "/img", and registers a range
// of it under a name:
//
//   registry.Register("input0", "/img", /*offset=*/0, /*byte_size=*/602112);
//
// Register opens the object read-write without O_CREAT (the client owns it) and checks
// with fstat that it is a regular file holding [offset, offset + byte_size). It keeps the
// file descriptor, and maps nothing: every byte moves with pread / pwrite on that fd
// (SharedMemoryRegion::Read / Write). A request then names the region in an input's or
// output's parameters (see shared_memory_binding.h); the bytes never travel through a
// socket.
//
// Why no mapping: the registering client owns the object and may shrink it (ftruncate)
// at any time. A mapped page past the new end raises SIGBUS in whichever server thread
// touches it — a backend, the batcher, an encoder — and kills the process. pread and
// pwrite cannot fault: a read past the end is short (FailedPrecondition naming the
// shrink), a write past it re-extends the client's own object up to the registered range
// at most. No page of a client's object is ever mapped into the server, so nothing a
// client does to it can fault the process. The cost is one copy of each input at bind
// time (docs/shared_memory.md has the measurements).
//
// Lifetime: each region is a SharedMemoryRegion held by shared_ptr. The registry holds
// one reference; a request that names the region (input or output) holds another until
// it ends (SharedMemoryOutputs). Unregistering a region no request holds removes it at
// once. Unregistering one that requests still hold succeeds too, as in Triton: the
// region stays registered — listed by Status, found by new requests — and is removed
// when the last holder lets it go (noticed by the next call on the registry, which
// erases every such released region first). The fd is closed when the last user is done.
//
// Contract:
//   - Names: 1..kMaxNameLength bytes, printable ASCII, no '/', '\\' or NUL.
//     Keys: an optional leading '/', then 1..kMaxKeyLength bytes of printable ASCII with
//     no further '/' (POSIX: one path component under the shm filesystem), not "." or
//     "..". Anything else is InvalidArgument naming the problem.
//   - byte_size must be > 0; offset + byte_size is computed with checked arithmetic and
//     must not exceed the object's size at registration (InvalidArgument naming both).
//   - A name already registered is AlreadyExists (Triton: "already in manager"); more
//     than `max_regions` regions is ResourceExhausted.
//   - Unregister of an unknown name succeeds (as Triton's); Status of an unknown name is
//     NotFound "Unable to find system shared memory region: '<name>'". An empty name to
//     Register is InvalidArgument "'region name' is necessary to register system shared
//     memory region" (Triton's texts).
//   - The object must be a regular file (shm objects are; glibc's shm_open does not
//     follow symlinks).
//
// Threat model (see docs/shared_memory.md): registering is an admin action (the
// AdminGuard's shared-memory category, closed unless the operator opens it). The
// registering client is not trusted to keep the object's size: shrinking it makes the
// requests using it fail, never the server.
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
// Bytes one request may copy out of shared memory (all its inputs together): bounds the
// memory a request naming a large (possibly sparse) region can make the server allocate.
inline constexpr uint64_t kDefaultMaxSharedMemoryRequestBytes = uint64_t{1} << 30;

// What Status lists for one region (Triton's RegionStatus fields).
struct SharedMemoryRegionInfo {
  std::string name;
  std::string key;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

// One registered range of a shared-memory object, read and written through its kept file
// descriptor (closed when the last reference goes). Offsets are relative to the range's
// start (the object's byte `info().offset`).
class SharedMemoryRegion {
 public:
  // Opens and checks (see the contract above).
  static absl::StatusOr<std::shared_ptr<SharedMemoryRegion>> Open(SharedMemoryRegionInfo info);
  ~SharedMemoryRegion();
  SharedMemoryRegion(const SharedMemoryRegion&) = delete;
  SharedMemoryRegion& operator=(const SharedMemoryRegion&) = delete;

  const SharedMemoryRegionInfo& info() const { return info_; }
  uint64_t byte_size() const { return info_.byte_size; }

  // Copies [offset, offset + size) into `out` (pread). InvalidArgument when the range is
  // outside the region; FailedPrecondition naming the shrink when the object no longer
  // holds it (a short read); FailedPrecondition with the error for a failed read.
  absl::Status Read(uint64_t offset, size_t size, uint8_t* out) const;
  // Writes `size` bytes at `offset` (pwrite), after checking with fstat that the object
  // still holds the range (FailedPrecondition naming the shrink otherwise). A shrink
  // racing with the write only re-extends the object (sparse) up to the range's end.
  absl::Status Write(uint64_t offset, const uint8_t* data, size_t size) const;
  // FailedPrecondition naming the shrink when the object no longer holds the registered
  // range (fstat); what Write checks first.
  absl::Status CheckObjectSize() const;

 private:
  SharedMemoryRegion(SharedMemoryRegionInfo info, int fd) : info_(std::move(info)), fd_(fd) {}
  absl::Status CheckRange(uint64_t offset, size_t size) const;
  absl::Status Shrunk(uint64_t object_size) const;

  const SharedMemoryRegionInfo info_;
  const int fd_;
};

// InvalidArgument naming the problem, or OK (the rules in the contract above).
absl::Status ValidateSharedMemoryName(std::string_view name);
absl::Status ValidateSharedMemoryKey(std::string_view key);

class SharedMemoryRegistry {
 public:
  explicit SharedMemoryRegistry(size_t max_regions = kDefaultMaxSharedMemoryRegions,
                                uint64_t max_request_bytes = kDefaultMaxSharedMemoryRequestBytes)
      : max_regions_(max_regions), max_request_bytes_(max_request_bytes) {}

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
  // The most input bytes one request may copy out of shared memory.
  uint64_t max_request_bytes() const { return max_request_bytes_; }

 private:
  const size_t max_regions_;
  const uint64_t max_request_bytes_;
  struct Entry {
    std::shared_ptr<const SharedMemoryRegion> region;
    bool awaiting_unregister = false;  // unregistered while requests held it
  };
  // AlreadyExists / ResourceExhausted, as Register answers.
  absl::Status CheckRegistrable(std::string_view name) const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status CheckRegistrableLocked(std::string_view name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True when `entry` may be erased now; else marks it awaiting_unregister.
  static bool ReleaseLocked(Entry& entry);
  // Erases the awaiting_unregister regions no request holds any more. Logically const:
  // they are already unregistered.
  void EraseReleasedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  mutable std::map<std::string, Entry, std::less<>> regions_ ABSL_GUARDED_BY(mu_);
};

// CUDA shared memory on this CPU-only build, answered as a CPU-only Triton answers (so
// clients that clean up with unregister_cuda_shared_memory() work): `action`
// "unregister" (any name, or "" for all) and "status" succeed, nothing being registered;
// "register" is InvalidArgument "failed to register CUDA shared memory region: '<name>',
// GPUs not supported" (SharedMemoryRegionNameRequired("cuda") without a name). Both
// transports answer with this.
absl::Status CudaSharedMemoryChange(std::string_view name, std::string_view action);

// InvalidArgument "'region name' is necessary to register <kind> shared memory region"
// (Triton's text for a register call without a name; kind "system" or "cuda").
absl::Status SharedMemoryRegionNameRequired(std::string_view kind);

}  // namespace infera

#endif  // INFERA_SHM_SHARED_MEMORY_REGISTRY_H_
