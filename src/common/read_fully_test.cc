// ReadFully: whole reads in chunks of any size, from an offset, short at the end of the
// file, and errno on a failed pread.
#include "common/read_fully.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

namespace infera {
namespace {

class ReadFullyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/infera-read-fully-XXXXXX";
    fd_ = mkstemp(name);
    ASSERT_GE(fd_, 0);
    unlink(name);
    for (int i = 0; i < 1000; ++i) bytes_.push_back(static_cast<uint8_t>(i * 7));
    ASSERT_EQ(write(fd_, bytes_.data(), bytes_.size()), static_cast<ssize_t>(bytes_.size()));
  }
  void TearDown() override { close(fd_); }
  int fd_ = -1;
  std::vector<uint8_t> bytes_;
};

TEST_F(ReadFullyTest, ReadsEverythingInAnyChunkSize) {
  for (size_t chunk : {size_t{1}, size_t{3}, size_t{64}, size_t{1000}, size_t{0}}) {  // 0: one byte a call
    std::vector<uint8_t> out(990, 0);
    const ReadFullyResult r = ReadFully(fd_, out.data(), out.size(), 10, chunk);
    EXPECT_EQ(r.error, 0) << chunk;
    ASSERT_EQ(r.done, out.size()) << chunk;
    EXPECT_EQ(out, std::vector<uint8_t>(bytes_.begin() + 10, bytes_.end())) << chunk;
  }
}

TEST_F(ReadFullyTest, StopsAtTheEndOfTheFile) {
  std::vector<uint8_t> out(100, 0);
  ReadFullyResult r = ReadFully(fd_, out.data(), out.size(), 950, 16);
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.done, 50u);
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + 50),
            std::vector<uint8_t>(bytes_.begin() + 950, bytes_.end()));
  r = ReadFully(fd_, out.data(), out.size(), 5000);  // past the end
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.done, 0u);
  r = ReadFully(fd_, out.data(), 0, 0);  // nothing asked
  EXPECT_EQ(r.done, 0u);
}

TEST_F(ReadFullyTest, ReportsErrno) {
  std::vector<uint8_t> out(10, 0);
  ReadFullyResult r = ReadFully(-1, out.data(), out.size(), 0);
  EXPECT_EQ(r.error, EBADF);
  EXPECT_EQ(r.done, 0u);
  char dir[] = "/tmp/infera-read-fully-dir-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const int d = open(dir, O_RDONLY | O_DIRECTORY);
  ASSERT_GE(d, 0);
  r = ReadFully(d, out.data(), out.size(), 0);
  EXPECT_EQ(r.error, EISDIR);
  close(d);
  rmdir(dir);
}

}  // namespace
}  // namespace infera
