// TensorSink: where a converter's tensor producer writes a tensor's bytes; and
// CountingFileSink, the one both writers (GGUF, safetensors) use: it passes the bytes to
// the output's AtomicFile and counts them, so a producer that writes a short or long
// tensor is caught against the size the writer declared.
#ifndef INFERA_LLM_CONVERT_TENSOR_SINK_H_
#define INFERA_LLM_CONVERT_TENSOR_SINK_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "llm/convert/atomic_file.h"

namespace infera::llm::convert {

// The producer must write exactly the size it declared.
class TensorSink {
 public:
  virtual ~TensorSink() = default;
  virtual absl::Status Write(const void* data, size_t size) = 0;
};

class CountingFileSink : public TensorSink {
 public:
  explicit CountingFileSink(AtomicFile& file) : file_(file) {}
  absl::Status Write(const void* data, size_t size) override {
    written += size;
    return file_.Write(data, size);
  }
  uint64_t written = 0;

 private:
  AtomicFile& file_;
};

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_TENSOR_SINK_H_
