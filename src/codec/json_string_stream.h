// JsonStringStream: a rapidjson output stream that appends to a std::string.
//
// rapidjson's own StringBuffer owns its memory, so a response would need one more copy
// into the body string; this adapter writes straight into the caller's std::string. It
// also exposes raw reservations (Reserve / Advance), which the response encoder uses to
// format numbers with std::to_chars directly into the output.
//
// Not thread-safe; one per encoding call.
//
// Usage:
//   std::string out;
//   {
//     JsonStringStream stream(&out, /*size_hint=*/4096);
//     rapidjson::Writer<JsonStringStream> writer(stream);
//     writer.StartObject(); ...
//     stream.Finish();          // trims `out` to what was written
//   }
//
// IMPORTANT: until Finish() runs, out->size() is the stream's capacity, not the number of
// bytes written.
#ifndef INFERA_CODEC_JSON_STRING_STREAM_H_
#define INFERA_CODEC_JSON_STRING_STREAM_H_

#include <algorithm>
#include <cstddef>
#include <string>

namespace infera {

class JsonStringStream {
 public:
  using Ch = char;  // rapidjson's stream concept

  // Appends after the current contents of `*out`, which must outlive the stream.
  JsonStringStream(std::string* out, size_t size_hint) : out_(out), size_(out->size()) {
    out_->resize(size_ + std::max<size_t>(size_hint, 64));
  }
  JsonStringStream(const JsonStringStream&) = delete;
  JsonStringStream& operator=(const JsonStringStream&) = delete;

  void Put(char c) {
    if (size_ == out_->size()) Grow(1);
    (*out_)[size_++] = c;
  }
  // Makes room for `n` more bytes; PutUnsafe / the pointer from Reserve may then write them.
  char* Reserve(size_t n) {
    if (out_->size() - size_ < n) Grow(n);
    return out_->data() + size_;
  }
  void PutUnsafe(char c) { (*out_)[size_++] = c; }
  // Commits `n` bytes written through the pointer Reserve returned.
  void Advance(size_t n) { size_ += n; }
  void Append(const char* data, size_t n) {
    char* p = Reserve(n);
    std::copy(data, data + n, p);
    size_ += n;
  }
  void Flush() {}
  // Trims the string to the bytes written.
  void Finish() { out_->resize(size_); }
  size_t size() const { return size_; }

 private:
  void Grow(size_t n) { out_->resize(std::max(out_->size() * 2, size_ + n)); }

  std::string* out_;
  size_t size_;
};

// rapidjson's Writer reserves before writing numbers and strings and then writes without
// checks; found by argument-dependent lookup, these beat its generic (per-char Put) ones.
inline void PutReserve(JsonStringStream& stream, size_t count) { stream.Reserve(count); }
inline void PutUnsafe(JsonStringStream& stream, char c) { stream.PutUnsafe(c); }

}  // namespace infera

#endif  // INFERA_CODEC_JSON_STRING_STREAM_H_
