// SafetensorsWriter: writes one `.safetensors` file (the format llm/safetensors.h reads)
// whose tensor data is produced one tensor at a time.
//
// Layout: 8-byte little-endian header length N; N bytes of JSON {"<name>": {"dtype",
// "shape", "data_offsets": [begin, end]}, ..., "__metadata__": {"format": "pt"}} padded
// with spaces so the data starts 8-byte aligned; the tensors' bytes back to back in the
// order added. Written through AtomicFile (temporary + rename).
//
// Not thread-safe (one writer).
#ifndef INFERA_LLM_CONVERT_SAFETENSORS_WRITER_H_
#define INFERA_LLM_CONVERT_SAFETENSORS_WRITER_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "llm/convert/gguf_writer.h"
#include "llm/safetensors.h"

namespace infera::llm::convert {

class SafetensorsWriter {
 public:
  // `shape` row-major (PyTorch order).
  void AddTensor(std::string name, WeightType dtype, std::vector<int64_t> shape);
  absl::Status Write(const std::filesystem::path& path, bool overwrite,
                     const std::function<absl::Status(size_t, TensorSink&)>& produce) const;

 private:
  struct Tensor {
    std::string name;
    WeightType dtype;
    std::vector<int64_t> shape;
    uint64_t num_bytes;
  };
  std::vector<Tensor> tensors_;
};

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_SAFETENSORS_WRITER_H_
