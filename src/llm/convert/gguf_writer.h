// GgufWriter: writes a GGUF version 3 file (docs/gguf.md) whose tensor data is produced
// one tensor at a time, so a conversion holds at most one tensor's output in memory.
//
// Layout written: "GGUF", version 3, tensor count, metadata count; the metadata pairs in
// the order added; the tensor infos (ggml dims order: dims[0] is the row length); zero
// padding to `general.alignment` (kAlignment, also written as that key); each tensor's
// bytes at an offset that is a multiple of the alignment, zero padding between them.
// The file is written through AtomicFile (temporary + rename).
//
// Not thread-safe (one writer).
//
// Usage:
//   GgufWriter w;
//   w.AddString("general.architecture", "llama");
//   w.AddTensor("token_embd.weight", quant::BlockType::kF16, {hidden, vocab}, bytes);
//   RETURN_IF_ERROR(w.Write(path, overwrite, [&](size_t i, TensorSink& out) { ... }));
#ifndef INFERA_LLM_CONVERT_GGUF_WRITER_H_
#define INFERA_LLM_CONVERT_GGUF_WRITER_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "llm/convert/tensor_sink.h"
#include "quant/block_types.h"

namespace infera::llm::convert {

inline constexpr uint32_t kAlignment = 32;

class GgufWriter {
 public:
  GgufWriter();
  void AddString(std::string_view key, std::string_view value);
  void AddUint32(std::string_view key, uint32_t value);
  void AddInt32(std::string_view key, int32_t value);
  void AddFloat32(std::string_view key, float value);
  void AddBool(std::string_view key, bool value);
  void AddStringArray(std::string_view key, const std::vector<std::string>& values);
  void AddInt32Array(std::string_view key, const std::vector<int32_t>& values);
  void AddFloat32Array(std::string_view key, const std::vector<float>& values);
  bool HasKey(std::string_view key) const;

  // `dims` in ggml order (row length first); `num_bytes` what the producer will write.
  void AddTensor(std::string_view name, quant::BlockType type, std::vector<int64_t> dims, uint64_t num_bytes);
  size_t num_tensors() const { return tensors_.size(); }

  // Writes the file; `produce(i, sink)` writes tensor i's bytes (in the order added).
  // `verify`, when given, reads the finished temporary file before it is renamed onto
  // `path`; an error there leaves `path` untouched.
  absl::Status Write(const std::filesystem::path& path, bool overwrite,
                     const std::function<absl::Status(size_t, TensorSink&)>& produce,
                     const std::function<absl::Status(const std::filesystem::path&)>& verify = nullptr) const;

 private:
  struct Tensor {
    std::string name;
    quant::BlockType type;
    std::vector<int64_t> dims;
    uint64_t num_bytes;
  };
  void Key(std::string_view key, uint32_t value_type);
  std::string kv_;  // the serialised metadata pairs
  uint64_t kv_count_ = 0;
  std::vector<std::string> keys_;
  std::vector<Tensor> tensors_;
};

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_GGUF_WRITER_H_
