// GrowableBuffer: builds a Buffer whose final size is not known up front.
//
// The request decoder converts JSON data elements straight into one of these. When the
// shape is known before the data (the usual key order) the caller reserves the exact size,
// so the bytes are written once into a single Buffer::Allocate'd block (64-byte aligned)
// and Finish() hands that block over without a copy.
//
// Not thread-safe; owned by one decoding call.
//
// Usage:
//   GrowableBuffer out;
//   out.Reserve(n * sizeof(float));
//   std::memcpy(out.Append(sizeof(float)), &value, sizeof(float));
//   Buffer data = std::move(out).Finish();
#ifndef INFERA_CODEC_GROWABLE_BUFFER_H_
#define INFERA_CODEC_GROWABLE_BUFFER_H_

#include <cstddef>
#include <cstdint>

#include "api/buffer.h"

namespace infera {

class GrowableBuffer {
 public:
  GrowableBuffer() = default;
  GrowableBuffer(GrowableBuffer&&) = default;
  GrowableBuffer& operator=(GrowableBuffer&&) = default;

  // Ensures room for `n` more bytes without reallocation.
  void Reserve(size_t n) {
    if (capacity_ - size_ < n) Grow(n);
  }
  // Returns a pointer to `n` new bytes at the end, which the caller must fill.
  uint8_t* Append(size_t n) {
    if (capacity_ - size_ < n) Grow(n);
    uint8_t* p = data_ + size_;
    size_ += n;
    return p;
  }
  size_t size() const { return size_; }

  // The bytes written so far; the GrowableBuffer is left empty.
  Buffer Finish() &&;

 private:
  void Grow(size_t n);

  Buffer buffer_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace infera

#endif  // INFERA_CODEC_GROWABLE_BUFFER_H_
