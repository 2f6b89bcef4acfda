#include "api/buffer.h"

#include <cstdint>
#include <cstring>
#include <new>

namespace infera {
namespace {
// 64-byte alignment suits AVX-512 loads in backends that read the bytes in place.
struct alignas(64) AlignedChunk {
  uint8_t bytes[64];
};
}  // namespace

Buffer Buffer::Allocate(size_t size, uint8_t** data) {
  if (size > SIZE_MAX - sizeof(AlignedChunk)) throw std::bad_alloc();
  const size_t chunks = size == 0 ? 1 : (size + sizeof(AlignedChunk) - 1) / sizeof(AlignedChunk);
  // The bytes and the shared_ptr's control block in one (aligned) allocation; the
  // chunks are left uninitialised, as operator new[] left them.
  std::shared_ptr<AlignedChunk[]> owner = std::make_shared_for_overwrite<AlignedChunk[]>(chunks);
  uint8_t* raw = owner.get()->bytes;
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
