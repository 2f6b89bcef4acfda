#include "shm/shared_memory_registry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/checked_math.h"
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

absl::StatusOr<std::shared_ptr<SharedMemoryRegion>> SharedMemoryRegion::Map(
    SharedMemoryRegionInfo info) {
  if (info.byte_size == 0) {
    return absl::InvalidArgumentError(
        StrCat("shared memory region ", Quoted(info.name), " has byte_size 0"));
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
  const int fd = shm_open(path.c_str(), O_RDWR, 0);
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
        "shared memory region ", Quoted(info.name), ": offset ", info.offset, " + byte_size ",
        info.byte_size, " = ", *end, " is past the end of ", Quoted(info.key), " (", st.st_size,
        " bytes)"));
  }
  // mmap's offset must be page-aligned: map from the page holding `offset`.
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t map_offset = info.offset - info.offset % page;
  const size_t map_size = static_cast<size_t>(static_cast<uint64_t>(*end) - map_offset);
  void* mapping = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                       static_cast<off_t>(map_offset));
  if (mapping == MAP_FAILED) {
    const int error = errno;
    close(fd);
    return absl::InvalidArgumentError(StrCat("cannot map shared memory region ", Quoted(info.name),
                                             ": ", ErrnoText(error)));
  }
  uint8_t* data = static_cast<uint8_t*>(mapping) + (info.offset - map_offset);
  return std::shared_ptr<SharedMemoryRegion>(
      new SharedMemoryRegion(std::move(info), fd, mapping, map_size, data));
}

SharedMemoryRegion::~SharedMemoryRegion() {
  munmap(mapping_, mapping_size_);
  close(fd_);
}

absl::Status SharedMemoryRegion::CheckStillMapped() const {
  struct stat st {};
  if (fstat(fd_, &st) != 0) {
    return absl::FailedPreconditionError(
        StrCat("shared memory region '", info_.name, "': ", ErrnoText(errno)));
  }
  // offset + byte_size was checked to fit in int64 at registration.
  if (static_cast<uint64_t>(st.st_size) < info_.offset + info_.byte_size) {
    return absl::FailedPreconditionError(
        StrCat("shared memory region '", info_.name, "': its object ", Quoted(info_.key),
               " shrank to ", st.st_size, " bytes, below the registered range"));
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegistry::Register(std::string_view name, std::string_view key,
                                            uint64_t offset, uint64_t byte_size) {
  if (absl::Status s = ValidateSharedMemoryName(name); !s.ok()) return s;
  if (absl::Status s = ValidateSharedMemoryKey(key); !s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    if (regions_.count(name) > 0) {
      return absl::AlreadyExistsError(
          StrCat("shared memory region '", name, "' already in manager"));
    }
    if (regions_.size() >= max_regions_) {
      return absl::ResourceExhaustedError(StrCat("cannot register shared memory region '", name,
                                                 "': ", max_regions_,
                                                 " regions are registered, the limit"));
    }
  }
  // Open and map outside the lock (system calls); the insert below re-checks.
  absl::StatusOr<std::shared_ptr<SharedMemoryRegion>> region = SharedMemoryRegion::Map(
      SharedMemoryRegionInfo{std::string(name), std::string(key), offset, byte_size});
  if (!region.ok()) return region.status();
  absl::MutexLock lock(&mu_);
  if (regions_.count(name) > 0) {
    return absl::AlreadyExistsError(StrCat("shared memory region '", name, "' already in manager"));
  }
  if (regions_.size() >= max_regions_) {
    return absl::ResourceExhaustedError(StrCat("cannot register shared memory region '", name,
                                               "': ", max_regions_,
                                               " regions are registered, the limit"));
  }
  regions_.emplace(std::string(name), *std::move(region));
  return absl::OkStatus();
}

absl::Status SharedMemoryRegistry::Unregister(std::string_view name) {
  std::shared_ptr<const SharedMemoryRegion> dropped;  // released after the lock
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(name);
  if (it == regions_.end()) return absl::OkStatus();
  dropped = std::move(it->second);
  regions_.erase(it);
  return absl::OkStatus();
}

void SharedMemoryRegistry::UnregisterAll() {
  std::map<std::string, std::shared_ptr<const SharedMemoryRegion>, std::less<>> dropped;
  absl::MutexLock lock(&mu_);
  dropped.swap(regions_);
}

absl::StatusOr<std::vector<SharedMemoryRegionInfo>> SharedMemoryRegistry::Status(
    std::string_view name) const {
  std::vector<SharedMemoryRegionInfo> out;
  absl::MutexLock lock(&mu_);
  if (name.empty()) {
    out.reserve(regions_.size());
    for (const auto& [unused, region] : regions_) out.push_back(region->info());
    return out;
  }
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::NotFoundError(
        StrCat("Unable to find system shared memory region: ", Quoted(name)));
  }
  out.push_back(it->second->info());
  return out;
}

absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> SharedMemoryRegistry::Find(
    std::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::InvalidArgumentError(
        StrCat("Unable to find shared memory region: ", Quoted(name)));
  }
  return it->second;
}

size_t SharedMemoryRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return regions_.size();
}

}  // namespace infera
