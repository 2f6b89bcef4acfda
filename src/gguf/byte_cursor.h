// ByteCursor: a bounds-checked little-endian reader over untrusted bytes (a GGUF
// file's header, metadata and tensor infos).
//
// Every read checks the bytes left before it touches them and fails with an
// InvalidArgument naming the file, the field being read and its byte offset:
//   "model.gguf: tensor 'x' dims at byte 1234: needs 8 bytes, only 3 left"
//
// Not thread-safe; one per parse.
#ifndef INFERA_GGUF_BYTE_CURSOR_H_
#define INFERA_GGUF_BYTE_CURSOR_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/str_cat.h"

namespace infera::gguf {

class ByteCursor {
 public:
  ByteCursor(const uint8_t* data, size_t size, std::string_view where)
      : data_(data), size_(size), where_(where) {}

  size_t pos() const { return pos_; }
  size_t size() const { return size_; }
  size_t remaining() const { return size_ - pos_; }
  const uint8_t* data() const { return data_; }
  std::string_view where() const { return where_; }

  // An InvalidArgument "<where>: <field> at byte <pos>: <what>".
  absl::Status Error(std::string_view field, std::string_view what) const {
    return absl::InvalidArgumentError(StrCat(where_, ": ", field, " at byte ", pos_, ": ", what));
  }
  absl::Status Need(uint64_t n, std::string_view field) const {
    if (n <= remaining()) return absl::OkStatus();
    return Error(field, StrCat("needs ", n, " bytes, only ", remaining(), " left in the file"));
  }
  // Advances past `n` bytes (checked) and returns where they start.
  absl::StatusOr<const uint8_t*> Take(uint64_t n, std::string_view field) {
    if (absl::Status s = Need(n, field); !s.ok()) return s;
    const uint8_t* p = data_ + pos_;
    pos_ += static_cast<size_t>(n);
    return p;
  }
  template <typename T>
  absl::StatusOr<T> Read(std::string_view field) {
    absl::StatusOr<const uint8_t*> p = Take(sizeof(T), field);
    if (!p.ok()) return p.status();
    T v;
    std::memcpy(&v, *p, sizeof(T));  // little-endian hosts only
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string_view where_;
};

}  // namespace infera::gguf

#endif  // INFERA_GGUF_BYTE_CURSOR_H_
