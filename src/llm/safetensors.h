// SafetensorsFile / SafetensorsModel: read-only access to Hugging Face `.safetensors`
// weight files, single or sharded (`model.safetensors.index.json`).
//
// Format (https://huggingface.co/docs/safetensors): 8-byte little-endian header length
// N, N bytes of JSON {"<name>": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]},
// "__metadata__": {...}}, then the raw little-endian tensor bytes; offsets are relative
// to the end of the header. The file is memory-mapped; views point into the mapping and
// stay valid while the SafetensorsFile lives.
//
// LibTorch-free: the model runner widens these bytes into its own tensors.
//
// Thread-safe after construction (read-only).
//
// Usage:
//   ASSIGN_OR_RETURN(auto model, SafetensorsModel::Open(version_dir));
//   ASSIGN_OR_RETURN(TensorView w, model->Get("model.norm.weight"));
#ifndef INFERA_LLM_SAFETENSORS_H_
#define INFERA_LLM_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::llm {

enum class WeightType { kF32, kF16, kBF16 };
std::string_view WeightTypeName(WeightType type);  // "F32", "F16", "BF16"
size_t WeightTypeSize(WeightType type);

// A tensor inside a mapped file. `data` may be unaligned.
struct TensorView {
  WeightType dtype = WeightType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t num_bytes = 0;
  int64_t NumElements() const;
};

class SafetensorsFile {
 public:
  // Maps and parses `path`. InvalidArgument naming the file for a malformed header,
  // an unsupported dtype, or offsets outside the file.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::map<std::string, TensorView, std::less<>>& tensors() const { return tensors_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  SafetensorsFile() = default;
  std::filesystem::path path_;
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  std::map<std::string, TensorView, std::less<>> tensors_;
};

// All weights of one model folder: `model.safetensors`, or the shards named by
// `model.safetensors.index.json` (its "weight_map").
class SafetensorsModel {
 public:
  static absl::StatusOr<std::unique_ptr<SafetensorsModel>> Open(const std::filesystem::path& dir);

  // NotFound naming the tensor and the folder.
  absl::StatusOr<TensorView> Get(std::string_view name) const;
  bool Has(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::filesystem::path dir_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorView*, std::less<>> index_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_SAFETENSORS_H_
