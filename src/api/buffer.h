// Buffer: an immutable, cheaply copyable view of bytes with shared ownership.
//
// Tensor data moves through infera without copies where it can: a binary tensor in an
// HTTP body is a Buffer viewing the body (the body stays alive as the owner); a backend
// output can be a Buffer owning the runtime's tensor. Copies of a Buffer share the bytes.
//
// Thread-safe for concurrent readers (the bytes are never written once shared).
//
// Usage:
//   uint8_t* out;
//   Buffer b = Buffer::Allocate(n, &out);   // fill `out` before sharing `b`
//   Buffer v = Buffer::View(owner, ptr, n);  // bytes owned by `owner`
#ifndef INFERA_API_BUFFER_H_
#define INFERA_API_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace infera {

class Buffer {
 public:
  Buffer() = default;

  // Allocates `size` bytes aligned to 64 (any element type, AVX-512 loads); `*data`
  // receives the writable pointer, valid until the Buffer is shared with readers. One heap
  // allocation: the bytes share it with the ownership count.
  static Buffer Allocate(size_t size, uint8_t** data);
  // Copies `size` bytes from `data`.
  static Buffer Copy(const void* data, size_t size);
  // Takes ownership of a string's bytes.
  static Buffer FromString(std::string&& bytes);
  // Views bytes kept alive by `owner`.
  static Buffer View(std::shared_ptr<const void> owner, const uint8_t* data, size_t size) {
    return Buffer(std::move(owner), data, size);
  }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view AsStringView() const {
    return {reinterpret_cast<const char*>(data_), size_};
  }
  // A sub-range sharing ownership. REQUIRES: offset + length <= size().
  Buffer Slice(size_t offset, size_t length) const {
    return Buffer(owner_, data_ + offset, length);
  }

 private:
  Buffer(std::shared_ptr<const void> owner, const uint8_t* data, size_t size)
      : owner_(std::move(owner)), data_(data), size_(size) {}

  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace infera

#endif  // INFERA_API_BUFFER_H_
