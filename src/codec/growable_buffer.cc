#include "codec/growable_buffer.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace infera {

void GrowableBuffer::Grow(size_t n) {
  const size_t new_capacity = std::max({size_ + n, capacity_ * 2, size_t{64}});
  uint8_t* new_data;
  Buffer new_buffer = Buffer::Allocate(new_capacity, &new_data);
  if (size_ > 0) std::memcpy(new_data, data_, size_);
  buffer_ = std::move(new_buffer);
  data_ = new_data;
  capacity_ = new_capacity;
}

Buffer GrowableBuffer::Finish() && {
  Buffer result = size_ == 0 ? Buffer() : buffer_.Slice(0, size_);
  buffer_ = Buffer();
  data_ = nullptr;
  size_ = capacity_ = 0;
  return result;
}

}  // namespace infera
