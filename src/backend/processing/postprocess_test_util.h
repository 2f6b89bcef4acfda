// Test helpers for the post-processing backends: build a config from text, load it and
// run one execution the way the scheduler does.
#ifndef INFERA_BACKEND_PROCESSING_POSTPROCESS_TEST_UTIL_H_
#define INFERA_BACKEND_PROCESSING_POSTPROCESS_TEST_UTIL_H_

#include <google/protobuf/text_format.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "backend/backend.h"
#include "common/status.h"
#include "model_config.pb.h"

namespace infera::testing {

inline inference::ModelConfig ParseConfig(const std::string& text) {
  inference::ModelConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(text, &config)) std::abort();
  return config;
}

// Validates and loads `config` with `backend` (the config must outlive the model).
inline absl::StatusOr<std::unique_ptr<LoadedModel>> LoadModel(
    Backend& backend, const inference::ModelConfig& config,
    const std::filesystem::path& model_dir = std::filesystem::temp_directory_path()) {
  RETURN_IF_ERROR(backend.ValidateConfig(config));
  ModelLoadContext context;
  context.config = &config;
  context.version = 1;
  context.model_dir = model_dir;
  context.version_dir = model_dir / "1";
  return backend.Load(context);
}

inline absl::StatusOr<std::vector<Tensor>> RunOnce(Backend& backend,
                                                   const inference::ModelConfig& config,
                                                   std::vector<Tensor> inputs) {
  ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> model, LoadModel(backend, config));
  ASSIGN_OR_RETURN(std::unique_ptr<ModelInstance> instance, model->CreateInstance({}));
  return instance->Execute(std::move(inputs));
}

template <typename T>
Tensor MakeTensor(std::string name, DataType dtype, Shape shape, const std::vector<T>& values) {
  uint8_t* data;
  Buffer buffer = Buffer::Allocate(values.size() * sizeof(T), &data);
  if (!values.empty()) std::memcpy(data, values.data(), values.size() * sizeof(T));
  return Tensor{std::move(name), dtype, std::move(shape), std::move(buffer)};
}

inline Tensor Fp32(std::string name, Shape shape, const std::vector<float>& values) {
  return MakeTensor(std::move(name), DataType::kFp32, std::move(shape), values);
}

inline Tensor Int64(std::string name, Shape shape, const std::vector<int64_t>& values) {
  return MakeTensor(std::move(name), DataType::kInt64, std::move(shape), values);
}

template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  std::vector<T> values(tensor.data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

}  // namespace infera::testing

#endif  // INFERA_BACKEND_PROCESSING_POSTPROCESS_TEST_UTIL_H_
