#include "common/huge_page_buffer.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(HugePageBufferTest, RoundsUpToWholeAlignedHugePages) {
  for (size_t bytes : {size_t{0}, size_t{1}, HugePageBuffer::kHugePageBytes, HugePageBuffer::kHugePageBytes + 1,
                       size_t{5} << 20}) {
    std::optional<HugePageBuffer> buffer = HugePageBuffer::Allocate(bytes);
    ASSERT_TRUE(buffer.has_value()) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % HugePageBuffer::kHugePageBytes, 0u) << bytes;
    EXPECT_EQ(buffer->size() % HugePageBuffer::kHugePageBytes, 0u) << bytes;
    EXPECT_GE(buffer->size(), std::max<size_t>(bytes, 1)) << bytes;
    EXPECT_LT(buffer->size(), std::max<size_t>(bytes, 1) + HugePageBuffer::kHugePageBytes) << bytes;
    // Zeroed, and writable end to end (ASan would see a write past a mapping as a SEGV).
    EXPECT_EQ(buffer->data()[0], 0);
    EXPECT_EQ(buffer->data()[buffer->size() - 1], 0);
    std::memset(buffer->data(), 0x5a, buffer->size());
    buffer->MakeReadOnly();
    EXPECT_EQ(buffer->data()[buffer->size() - 1], 0x5a);
  }
}

TEST(HugePageBufferTest, ImpossibleSizesFailWithErrno) {
  errno = 0;
  EXPECT_FALSE(HugePageBuffer::Allocate(SIZE_MAX).has_value());
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_FALSE(HugePageBuffer::Allocate(SIZE_MAX - HugePageBuffer::kHugePageBytes).has_value());
  EXPECT_EQ(errno, ENOMEM);
}

TEST(HugePageBufferTest, MovesOwnership) {
  std::optional<HugePageBuffer> a = HugePageBuffer::Allocate(1);
  ASSERT_TRUE(a.has_value());
  uint8_t* data = a->data();
  data[7] = 7;
  HugePageBuffer b = std::move(*a);
  EXPECT_EQ(a->data(), nullptr);
  EXPECT_EQ(a->size(), 0u);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.data()[7], 7);
  std::optional<HugePageBuffer> c = HugePageBuffer::Allocate(1);
  ASSERT_TRUE(c.has_value());
  *c = std::move(b);  // c's own span is unmapped, b's is now c's
  EXPECT_EQ(c->data(), data);
  EXPECT_EQ(b.data(), nullptr);
}

}  // namespace
}  // namespace infera
