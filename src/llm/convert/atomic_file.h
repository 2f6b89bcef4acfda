// AtomicFile: a file written under a temporary name beside its destination and renamed
// onto it only when complete, so a failed or interrupted conversion never leaves a
// truncated model where a reader (the server, llama.cpp) would pick it up.
//
// The temporary is `<path>.tmp-<pid>` in the same directory (rename(2) is atomic within
// one file system). Commit() flushes, fsyncs, closes and renames; destroying an
// uncommitted AtomicFile removes the temporary. Close() first lets a caller read the
// finished temporary back (temp_path()) and refuse it before it replaces anything.
// Errors name the path and errno's text.
//
// Not thread-safe (one writer).
#ifndef INFERA_LLM_CONVERT_ATOMIC_FILE_H_
#define INFERA_LLM_CONVERT_ATOMIC_FILE_H_

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "absl/status/statusor.h"

namespace infera::llm::convert {

class AtomicFile {
 public:
  // Refuses an existing destination unless `overwrite`, and a missing parent directory.
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Create(const std::filesystem::path& path, bool overwrite);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  absl::Status Write(const void* data, size_t size);
  absl::Status WriteZeros(size_t size);
  uint64_t bytes_written() const { return written_; }
  const std::filesystem::path& temp_path() const { return temp_; }
  // Flushes, fsyncs and closes the temporary (Commit does it when not done).
  absl::Status Close();
  absl::Status Commit();

 private:
  AtomicFile() = default;
  std::filesystem::path path_, temp_;
  std::FILE* file_ = nullptr;
  uint64_t written_ = 0;
  bool committed_ = false;
};

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_ATOMIC_FILE_H_
