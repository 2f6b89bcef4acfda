#include "api/buffer.h"

#include <cstring>
#include <new>

namespace infera {
namespace {
// 64-byte alignment suits AVX-512 loads in backends that read the bytes in place.
constexpr std::align_val_t kAlignment{64};

struct AlignedDeleter {
  void operator()(uint8_t* p) const { ::operator delete[](p, kAlignment); }
};
}  // namespace

Buffer Buffer::Allocate(size_t size, uint8_t** data) {
  uint8_t* raw = static_cast<uint8_t*>(::operator new[](size == 0 ? 1 : size, kAlignment));
  std::shared_ptr<uint8_t> owner(raw, AlignedDeleter());
  *data = raw;
  return Buffer(std::move(owner), raw, size);
}

Buffer Buffer::Copy(const void* data, size_t size) {
  uint8_t* out;
  Buffer b = Allocate(size, &out);
  if (size > 0) std::memcpy(out, data, size);
  return b;
}

Buffer Buffer::FromString(std::string&& bytes) {
  auto owner = std::make_shared<const std::string>(std::move(bytes));
  const uint8_t* data = reinterpret_cast<const uint8_t*>(owner->data());
  const size_t size = owner->size();
  return Buffer(std::move(owner), data, size);
}

}  // namespace infera
