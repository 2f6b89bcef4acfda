// HugePageBuffer: anonymous memory that starts on a 2 MiB boundary and is advised
// MADV_HUGEPAGE, so that transparent huge pages back all of it where the kernel's THP
// mode allows (`always`, or `madvise` as on Debian; with `never` it is ordinary 4 KiB
// pages). For data streamed end to end on every step -- an LLM's weights: with 4 KiB
// pages each page is a TLB miss and a restarted hardware prefetch (docs/gguf.md,
// "Weights in memory").
//
// Move-only; unmaps on destruction. Not thread-safe while written; read-only after
// MakeReadOnly() and then safe to read from any thread.
//
// Usage:
//   std::optional<HugePageBuffer> buffer = HugePageBuffer::Allocate(bytes);
//   if (!buffer) ... errno says why;
//   std::memcpy(buffer->data(), source, bytes);
//   buffer->MakeReadOnly();
#ifndef INFERA_COMMON_HUGE_PAGE_BUFFER_H_
#define INFERA_COMMON_HUGE_PAGE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <optional>

namespace infera {

class HugePageBuffer {
 public:
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  // At least `bytes` (rounded up to a whole number of huge pages; at least one), zeroed
  // by the kernel when first touched; nullopt with errno set when it cannot be mapped.
  static std::optional<HugePageBuffer> Allocate(size_t bytes);

  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  ~HugePageBuffer();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }  // the rounded size
  // PROT_READ from here on: a stray write faults, as it would on a read-only file mapping.
  void MakeReadOnly();

 private:
  HugePageBuffer(uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace infera

#endif  // INFERA_COMMON_HUGE_PAGE_BUFFER_H_
