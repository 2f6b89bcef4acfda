// A POSIX shared-memory object for tests: created with a unique key, unlinked at the end.
// data() is the test's own mapping of the first `size` bytes: do not touch it after
// shrinking the object (that would fault the test, the very thing the server avoids).
#ifndef INFERA_SHM_SHM_TEST_UTIL_H_
#define INFERA_SHM_SHM_TEST_UTIL_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace infera {

class TestShmObject {
 public:
  explicit TestShmObject(size_t size) {
    static std::atomic<int> counter{0};
    key_ = "/infera_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    fd_ = shm_open(key_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd_, 0) << std::strerror(errno);
    Resize(size);
    data_ = static_cast<uint8_t*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0));
    size_ = size;
  }
  ~TestShmObject() {
    munmap(data_, size_);
    close(fd_);
    shm_unlink(key_.c_str());
  }
  void Resize(size_t size) { EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(size)), 0); }
  // The object's size now (fstat).
  uint64_t Size() const {
    struct stat st {};
    EXPECT_EQ(fstat(fd_, &st), 0);
    return static_cast<uint64_t>(st.st_size);
  }
  const std::string& key() const { return key_; }
  uint8_t* data() { return data_; }

 private:
  std::string key_;
  int fd_ = -1;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace infera

#endif  // INFERA_SHM_SHM_TEST_UTIL_H_
