#include "common/huge_page_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <utility>

namespace infera {

std::optional<HugePageBuffer> HugePageBuffer::Allocate(size_t bytes) {
  const size_t pages = bytes == 0 ? 1 : (bytes - 1) / kHugePageBytes + 1;
  if (pages > (SIZE_MAX - kHugePageBytes) / kHugePageBytes) {
    errno = ENOMEM;
    return std::nullopt;
  }
  const size_t rounded = pages * kHugePageBytes;
  // mmap aligns to 4 KiB only: map one huge page more, then trim both ends to a 2 MiB-
  // aligned span.
  void* raw = mmap(nullptr, rounded + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return std::nullopt;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~uintptr_t{kHugePageBytes - 1};
  const uintptr_t end = start + rounded + kHugePageBytes;
  if (aligned > start) munmap(raw, aligned - start);
  if (end > aligned + rounded) munmap(reinterpret_cast<void*>(aligned + rounded), end - (aligned + rounded));
  uint8_t* data = reinterpret_cast<uint8_t*>(aligned);
  madvise(data, rounded, MADV_HUGEPAGE);  // fails harmlessly where THP is compiled out
  return HugePageBuffer(data, rounded);
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HugePageBuffer::~HugePageBuffer() {
  if (data_ != nullptr) munmap(data_, size_);
}

void HugePageBuffer::MakeReadOnly() { mprotect(data_, size_, PROT_READ); }

}  // namespace infera
