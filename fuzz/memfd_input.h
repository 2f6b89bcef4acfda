// MemfdInput: an in-memory file (memfd) that a fuzz target rewrites with each input, for
// parsers that open a path and map it (fuzz_safetensors, fuzz_gguf) exactly as they
// would a file on disk — no disk writes per input, and a path (/proc/self/fd/N) that
// Open() takes like any other.
//
// Header-only: each fuzz target is one .cc file (fuzz/CMakeLists.txt). Not thread-safe
// (libFuzzer runs one input at a time).
#ifndef INFERA_FUZZ_MEMFD_INPUT_H_
#define INFERA_FUZZ_MEMFD_INPUT_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace infera::fuzz {

class MemfdInput {
 public:
  // `name` shows in /proc/self/fd and error messages ("fuzz.gguf"). Aborts when the
  // memfd cannot be created: the target cannot run.
  explicit MemfdInput(const char* name) : fd_(memfd_create(name, 0)) {
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  MemfdInput(const MemfdInput&) = delete;
  MemfdInput& operator=(const MemfdInput&) = delete;

  // Replaces the file's bytes with data[0, size); returns its path.
  const std::string& Write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t written = 0;
    while (written < size) {
      const ssize_t n = pwrite(fd_, data + written, size - written, static_cast<off_t>(written));
      if (n <= 0) std::abort();
      written += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace infera::fuzz

#endif  // INFERA_FUZZ_MEMFD_INPUT_H_
