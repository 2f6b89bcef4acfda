#include "shm/shared_memory_registry.h"

#include <fcntl.h>
#include <sys/mman.h>  // shm_open
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/checked_math.h"
#include "common/read_fully.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

bool IsPrintableAscii(char c) { return c > 0x20 && c < 0x7f; }

// "'<text>'" for messages, truncated so a hostile name cannot flood the log.
std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 64;
  std::string out = "'";
  for (char c : text.substr(0, kShown)) out += IsPrintableAscii(c) ? c : '?';
  out += text.size() > kShown ? "...'" : "'";
  return out;
}

std::string ErrnoText(int error) { return std::strerror(error); }

// The prefix Triton reserves for its Python backend's regions; refused as Triton does
// (its qa registers such keys and expects the refusal).
constexpr std::string_view kReservedKeyPrefix = "triton_python_backend_shm_region_";

// Triton's key refusals, with its texts: a key of slashes only, a reserved key.
absl::Status CheckTritonKeyRules(std::string_view name, std::string_view key) {
  const size_t first = key.find_first_not_of('/');
  if (first == std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("cannot register shared memory region ", Quoted(name),
                                             " - invalid shm key ", Quoted(key)));
  }
  if (key.substr(first).starts_with(kReservedKeyPrefix)) {
    return absl::InvalidArgumentError(StrCat("cannot register shared memory region ", Quoted(name),
                                             " with key ", Quoted(key),
                                             " as the key contains the reserved prefix '",
                                             kReservedKeyPrefix, "'"));
  }
  return absl::OkStatus();
}

// Triton's words for a range the object cannot hold, then infera's detail.
std::string InvalidArgs(const SharedMemoryRegionInfo& info) {
  return StrCat("failed to register shared memory region ", Quoted(info.name), ": invalid args");
}

}  // namespace

absl::Status ValidateSharedMemoryName(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("shared memory region name is empty");
  if (name.size() > kMaxSharedMemoryNameLength) {
    return absl::InvalidArgumentError(StrCat("shared memory region name ", Quoted(name), " is ",
                                             name.size(), " bytes, more than the limit of ",
                                             kMaxSharedMemoryNameLength));
  }
  for (char c : name) {
    if (!IsPrintableAscii(c) || c == '/' || c == '\\') {
      return absl::InvalidArgumentError(
          StrCat("shared memory region name ", Quoted(name),
                 " may hold only printable ASCII without '/', '\\', spaces or control bytes"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSharedMemoryKey(std::string_view key) {
  std::string_view component = key;
  if (!component.empty() && component.front() == '/') component.remove_prefix(1);
  if (component.empty()) {
    return absl::InvalidArgumentError(
        StrCat("shared memory key ", Quoted(key), " names no object (expected e.g. '/my_region')"));
  }
  if (component.size() > kMaxSharedMemoryKeyLength) {
    return absl::InvalidArgumentError(StrCat("shared memory key ", Quoted(key), " is longer than ",
                                             kMaxSharedMemoryKeyLength, " bytes"));
  }
  if (component == "." || component == "..") {
    return absl::InvalidArgumentError(StrCat("shared memory key ", Quoted(key), " is not an object name"));
  }
  for (char c : component) {
    if (!IsPrintableAscii(c) || c == '/' || c == '\\') {
      return absl::InvalidArgumentError(
          StrCat("shared memory key ", Quoted(key),
                 " must be one name (an optional leading '/', then printable ASCII without "
                 "'/', '\\', spaces or control bytes)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<SharedMemoryRegion>> SharedMemoryRegion::Open(
    SharedMemoryRegionInfo info) {
  if (info.byte_size == 0) {
    return absl::InvalidArgumentError(StrCat(InvalidArgs(info), " (byte_size 0)"));
  }
  if (info.offset > INT64_MAX || info.byte_size > INT64_MAX) {
    return absl::InvalidArgumentError(StrCat("shared memory region ", Quoted(info.name),
                                             ": offset or byte_size above the int64 range"));
  }
  const std::optional<int64_t> end =
      CheckedAdd(static_cast<int64_t>(info.offset), static_cast<int64_t>(info.byte_size));
  if (!end) {
    return absl::InvalidArgumentError(StrCat("shared memory region ", Quoted(info.name), ": offset ",
                                             info.offset, " + byte_size ", info.byte_size,
                                             " overflows"));
  }
  const std::string path = info.key.front() == '/' ? info.key : StrCat("/", info.key);
  // O_NONBLOCK: a FIFO someone placed in /dev/shm must not block the opening thread (it
  // is refused below); pread/pwrite on a regular file ignore the flag.
  const int fd = shm_open(path.c_str(), O_RDWR | O_NONBLOCK, 0);
  if (fd < 0) {
    const int error = errno;
    return absl::InvalidArgumentError(StrCat("Unable to open shared memory region ", Quoted(info.name),
                                             ": key ", Quoted(info.key), ": ", ErrnoText(error)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        StrCat("shared memory key ", Quoted(info.key), " is not a shared-memory object"));
  }
  if (*end > static_cast<int64_t>(st.st_size)) {
    close(fd);
    return absl::InvalidArgumentError(StrCat(
        InvalidArgs(info), " (offset ", info.offset, " + byte_size ", info.byte_size, " = ", *end,
        " is past the end of ", Quoted(info.key), ", ", st.st_size, " bytes)"));
  }
  return std::shared_ptr<SharedMemoryRegion>(new SharedMemoryRegion(std::move(info), fd));
}

SharedMemoryRegion::~SharedMemoryRegion() { close(fd_); }

absl::Status SharedMemoryRegion::CheckRange(uint64_t offset, size_t size) const {
  // offset <= byte_size first, so the subtraction cannot wrap.
  if (offset > info_.byte_size || size > info_.byte_size - offset) {
    return absl::InvalidArgumentError(StrCat("shared memory offset ", offset, " + byte_size ", size,
                                             " is past the end of region ", Quoted(info_.name),
                                             " (", info_.byte_size, " bytes)"));
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegion::Shrunk(uint64_t object_size) const {
  return absl::FailedPreconditionError(
      StrCat("shared memory region ", Quoted(info_.name), ": its object ", Quoted(info_.key),
             " shrank to ", object_size, " bytes, below the registered range"));
}

absl::Status SharedMemoryRegion::Read(uint64_t offset, size_t size, uint8_t* out) const {
  if (absl::Status range = CheckRange(offset, size); !range.ok()) return range;
  // The object's bytes: the region starts at info_.offset; both fit int64 (checked when
  // the region was opened).
  const uint64_t position = info_.offset + offset;
  const ReadFullyResult r = ReadFully(fd_, out, size, position);
  if (r.error != 0) {
    return absl::FailedPreconditionError(StrCat("cannot read shared memory region ",
                                                Quoted(info_.name), ": ", ErrnoText(r.error)));
  }
  if (r.done < size) {  // end of file: the object shrank below the range
    struct stat st {};
    return Shrunk(fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : position + r.done);
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegion::CheckObjectSize() const {
  struct stat st {};
  if (fstat(fd_, &st) != 0) {
    const int error = errno;
    return absl::FailedPreconditionError(
        StrCat("shared memory region ", Quoted(info_.name), ": ", ErrnoText(error)));
  }
  // A write must not grow the client's object: refuse when it no longer holds the whole
  // registered range (offset + byte_size fits int64: checked at Open).
  if (static_cast<uint64_t>(st.st_size) < info_.offset + info_.byte_size) {
    return Shrunk(static_cast<uint64_t>(st.st_size));
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegion::Write(uint64_t offset, const uint8_t* data, size_t size) const {
  if (absl::Status range = CheckRange(offset, size); !range.ok()) return range;
  if (absl::Status held = CheckObjectSize(); !held.ok()) return held;
  uint64_t position = info_.offset + offset;
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(position));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      return absl::FailedPreconditionError(StrCat("cannot write shared memory region ",
                                                  Quoted(info_.name), ": ", ErrnoText(error)));
    }
    done += static_cast<size_t>(n);
    position += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegistry::Register(std::string_view name, std::string_view key,
                                            uint64_t offset, uint64_t byte_size) {
  if (name.empty()) return SharedMemoryRegionNameRequired("system");
  if (absl::Status s = ValidateSharedMemoryName(name); !s.ok()) return s;
  RETURN_IF_ERROR(CheckTritonKeyRules(name, key));
  if (absl::Status s = ValidateSharedMemoryKey(key); !s.ok()) return s;
  RETURN_IF_ERROR(CheckRegistrable(name));
  // Open outside the lock (system calls); the insert re-checks.
  absl::StatusOr<std::shared_ptr<SharedMemoryRegion>> region = SharedMemoryRegion::Open(
      SharedMemoryRegionInfo{std::string(name), std::string(key), offset, byte_size});
  if (!region.ok()) return region.status();
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckRegistrableLocked(name));
  regions_.emplace(std::string(name), Entry{*std::move(region), false});
  return absl::OkStatus();
}

absl::Status SharedMemoryRegistry::CheckRegistrable(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  return CheckRegistrableLocked(name);
}

absl::Status SharedMemoryRegistry::CheckRegistrableLocked(std::string_view name) const {
  EraseReleasedLocked();
  if (regions_.count(name) > 0) {
    return absl::AlreadyExistsError(StrCat("shared memory region '", name, "' already in manager"));
  }
  if (regions_.size() >= max_regions_) {
    return absl::ResourceExhaustedError(StrCat("cannot register shared memory region '", name, "': ",
                                               max_regions_, " regions are registered, the limit"));
  }
  return absl::OkStatus();
}

bool SharedMemoryRegistry::ReleaseLocked(Entry& entry) {
  // Only the registry holds it: gone now. Else requests still use it: kept (listed, and
  // usable by new requests, as Triton's) until the last of them lets it go.
  if (entry.region.use_count() <= 1) return true;
  entry.awaiting_unregister = true;
  return false;
}

void SharedMemoryRegistry::EraseReleasedLocked() const {
  for (auto it = regions_.begin(); it != regions_.end();) {
    // use_count() == 1 under the lock is exact: only Find (under the lock) adds holders.
    it = it->second.awaiting_unregister && it->second.region.use_count() <= 1 ? regions_.erase(it) : std::next(it);
  }
}

absl::Status SharedMemoryRegistry::Unregister(std::string_view name) {
  std::shared_ptr<const SharedMemoryRegion> dropped;  // released after the lock
  absl::MutexLock lock(&mu_);
  EraseReleasedLocked();
  auto it = regions_.find(name);
  if (it == regions_.end()) return absl::OkStatus();
  if (ReleaseLocked(it->second)) {
    dropped = std::move(it->second.region);
    regions_.erase(it);
  }
  return absl::OkStatus();
}

void SharedMemoryRegistry::UnregisterAll() {
  std::vector<std::shared_ptr<const SharedMemoryRegion>> dropped;  // released after the lock
  absl::MutexLock lock(&mu_);
  EraseReleasedLocked();
  for (auto it = regions_.begin(); it != regions_.end();) {
    if (ReleaseLocked(it->second)) {
      dropped.push_back(std::move(it->second.region));
      it = regions_.erase(it);
    } else {
      ++it;
    }
  }
}

absl::StatusOr<std::vector<SharedMemoryRegionInfo>> SharedMemoryRegistry::Status(
    std::string_view name) const {
  std::vector<SharedMemoryRegionInfo> out;
  absl::MutexLock lock(&mu_);
  EraseReleasedLocked();
  if (name.empty()) {
    out.reserve(regions_.size());
    for (const auto& [unused, entry] : regions_) out.push_back(entry.region->info());
    return out;
  }
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::NotFoundError(
        StrCat("Unable to find system shared memory region: ", Quoted(name)));
  }
  out.push_back(it->second.region->info());
  return out;
}

absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> SharedMemoryRegistry::Find(
    std::string_view name) const {
  absl::MutexLock lock(&mu_);
  EraseReleasedLocked();
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::InvalidArgumentError(
        StrCat("Unable to find shared memory region: ", Quoted(name)));
  }
  return it->second.region;
}

size_t SharedMemoryRegistry::size() const {
  absl::MutexLock lock(&mu_);
  EraseReleasedLocked();
  return regions_.size();
}

absl::Status SharedMemoryRegionNameRequired(std::string_view kind) {
  return absl::InvalidArgumentError(
      StrCat("'region name' is necessary to register ", kind, " shared memory region"));
}

absl::Status CudaSharedMemoryChange(std::string_view name, std::string_view action) {
  if (action != "register") return absl::OkStatus();
  if (name.empty()) return SharedMemoryRegionNameRequired("cuda");
  return absl::InvalidArgumentError(StrCat("failed to register CUDA shared memory region: ",
                                           Quoted(name), ", GPUs not supported"));
}

}  // namespace infera
