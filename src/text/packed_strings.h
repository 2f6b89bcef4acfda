// PackedStrings: an append-only list of strings kept in one byte buffer with one end
// offset each, read back as string_views.
//
// Why: a tokenizer holds one string per token, twice (vocabulary entry and decoded
// bytes); at a 128 k-token vocabulary a std::vector<std::string> costs 32 bytes a string
// plus a heap block for every one longer than 15 bytes, about 7 MB where the bytes
// themselves are about 1 MB. Packed, a string costs its bytes and 8.
//
// Thread-safe for concurrent reads once built; views stay valid until the next Append or
// ShrinkToFit.
#ifndef INFERA_TEXT_PACKED_STRINGS_H_
#define INFERA_TEXT_PACKED_STRINGS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace infera::text {

class PackedStrings {
 public:
  void Append(std::string_view s) {
    bytes_.append(s);
    ends_.push_back(bytes_.size());
  }
  size_t size() const { return ends_.size(); }
  std::string_view operator[](size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  // Drops the slack the appends left (the builder's doublings).
  void ShrinkToFit() {
    bytes_.shrink_to_fit();
    ends_.shrink_to_fit();
  }

 private:
  std::string bytes_;
  std::vector<size_t> ends_;
};

}  // namespace infera::text

#endif  // INFERA_TEXT_PACKED_STRINGS_H_
