#include "llm/convert/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "common/str_cat.h"

namespace infera::llm::convert {
namespace {

absl::Status Errno(std::string_view what, const std::filesystem::path& path) {
  return absl::InvalidArgumentError(StrCat("cannot ", what, " ", path.string(), ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::filesystem::path& path, bool overwrite) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(StrCat("output ", path.string(), " is a directory"));
  }
  if (!overwrite && std::filesystem::exists(path, ec)) {
    return absl::InvalidArgumentError(StrCat("output ", path.string(), " exists (pass --force to replace it)"));
  }
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(parent, ec)) {
    return absl::InvalidArgumentError(StrCat("output directory ", parent.string(), " does not exist"));
  }
  std::unique_ptr<AtomicFile> f(new AtomicFile());
  f->path_ = path;
  f->temp_ = path;
  f->temp_ += StrCat(".tmp-", getpid());
  f->file_ = std::fopen(f->temp_.c_str(), "wb");
  if (f->file_ == nullptr) return Errno("create", f->temp_);
  return f;
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

absl::Status AtomicFile::Write(const void* data, size_t size) {
  if (size == 0) return absl::OkStatus();
  if (std::fwrite(data, 1, size, file_) != size) return Errno("write", temp_);
  written_ += size;
  return absl::OkStatus();
}

absl::Status AtomicFile::WriteZeros(size_t size) {
  static const char kZeros[64] = {};
  while (size > 0) {
    const size_t n = size < sizeof(kZeros) ? size : sizeof(kZeros);
    if (absl::Status s = Write(kZeros, n); !s.ok()) return s;
    size -= n;
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  if (std::fflush(file_) != 0 || fsync(fileno(file_)) != 0) return Errno("write", temp_);
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) return Errno("close", temp_);
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (absl::Status s = Close(); !s.ok()) return s;
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) return Errno("rename onto", path_);
  committed_ = true;
  return absl::OkStatus();
}

}  // namespace infera::llm::convert
