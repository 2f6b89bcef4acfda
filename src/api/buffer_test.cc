#include "api/buffer.h"

#include <cstdint>
#include <cstring>
#include <new>

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(BufferTest, AllocateIsAlignedWritableAndSized) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}, size_t{1} << 20}) {
    uint8_t* out = nullptr;
    Buffer b = Buffer::Allocate(size, &out);
    ASSERT_NE(out, nullptr) << size;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(out) % 64, 0u) << size;
    EXPECT_EQ(b.data(), out);
    EXPECT_EQ(b.size(), size);
    EXPECT_EQ(b.empty(), size == 0);
    if (size > 0) {
      std::memset(out, 0xab, size);  // every byte writable (ASan checks the bounds)
      EXPECT_EQ(b.data()[size - 1], 0xab);
    }
  }
}

TEST(BufferTest, CopiesAndSlicesKeepTheBytesAlive) {
  Buffer slice;
  Buffer copy;
  {
    uint8_t* out;
    Buffer b = Buffer::Allocate(100, &out);
    for (int i = 0; i < 100; ++i) out[i] = static_cast<uint8_t>(i);
    slice = b.Slice(10, 5);
    copy = b;
  }
  ASSERT_EQ(slice.size(), 5u);
  EXPECT_EQ(slice.data()[0], 10);
  EXPECT_EQ(slice.data()[4], 14);
  ASSERT_EQ(copy.size(), 100u);
  EXPECT_EQ(copy.data()[99], 99);
}

TEST(BufferTest, CopyAndFromString) {
  const char text[] = "hello";
  Buffer c = Buffer::Copy(text, 5);
  EXPECT_EQ(c.AsStringView(), "hello");
  EXPECT_NE(static_cast<const void*>(c.data()), static_cast<const void*>(text));
  Buffer s = Buffer::FromString(std::string(100, 'x'));
  EXPECT_EQ(s.size(), 100u);
  EXPECT_EQ(s.AsStringView(), std::string(100, 'x'));
}

TEST(BufferTest, AnImpossibleSizeThrowsBadAllocInsteadOfWrapping) {
  uint8_t* out = nullptr;
  EXPECT_THROW(Buffer::Allocate(SIZE_MAX, &out), std::bad_alloc);
  EXPECT_THROW(Buffer::Allocate(SIZE_MAX - 10, &out), std::bad_alloc);
}

}  // namespace
}  // namespace infera
