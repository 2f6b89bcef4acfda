// Fuzz target: the post-processing backends (backend/processing: classify,
// detect_postprocess, pool) — their config parameter parsing and their execution on
// arbitrary tensor bytes, shapes and non-finite values.
//
// Input layout: byte 0 picks the backend, bytes 1..3 the sizes, byte 4 the flags, bytes
// 5.. a parameter value (up to the first NUL) for one parameter of the backend, then the
// tensor bytes (floats / mask values; cycled when short). A run that succeeds is checked
// against the contract: indices in range and ranked, detections sorted by descending
// score with rows past num_detections zero, embeddings of dimension D.
#include <google/protobuf/text_format.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/processing/processing_backends.h"

namespace {

using infera::Buffer;
using infera::DataType;
using infera::Shape;
using infera::Tensor;

std::string Param(const std::string& key, const std::string& value) {
  std::string escaped;
  for (char ch : value) {
    if (ch == '"' || ch == '\\') escaped += '\\';
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) continue;
    escaped += ch;
  }
  return "parameters { key: \"" + key + "\" value { string_value: \"" + escaped + "\" } } ";
}

Tensor Filled(const std::string& name, DataType dtype, Shape shape, size_t element_size,
              const uint8_t* bytes, size_t size) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  uint8_t* out;
  Buffer buffer = Buffer::Allocate(count * element_size, &out);
  for (int64_t i = 0; i < count * static_cast<int64_t>(element_size); ++i) {
    out[i] = size == 0 ? 0 : bytes[i % size];
  }
  return Tensor{name, dtype, std::move(shape), std::move(buffer)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6) return 0;
  const int which = data[0] % 3;
  const int64_t a = 1 + data[1] % 12, b = 1 + data[2] % 6, k = 1 + data[3] % 6;
  const uint8_t flags = data[4];
  const bool batched = flags & 1;
  const int64_t rows = (flags >> 1) & 3;  // 0..3 (0: an empty batch)
  size_t at = 5;
  std::string value;
  while (at < size && data[at] != 0 && value.size() < 32) value += static_cast<char>(data[at++]);
  if (at < size) ++at;
  const uint8_t* tensor_bytes = data + at;
  const size_t tensor_size = size - at;

  std::string text = "max_batch_size: " + std::string(batched ? "4 " : "0 ");
  std::unique_ptr<infera::Backend> backend;
  std::vector<Tensor> inputs;
  auto shape = [&](Shape s) {
    if (batched) s.insert(s.begin(), rows);
    return s;
  };
  const std::string A = std::to_string(a), B = std::to_string(b), K = std::to_string(k);
  if (which == 0) {
    backend = infera::CreateClassifyBackend();
    text += "input { name: \"x\" data_type: TYPE_FP32 dims: [" + A +
            "] } "
            "output { name: \"scores\" data_type: TYPE_FP32 dims: [" +
            K +
            "] } "
            "output { name: \"indices\" data_type: TYPE_INT64 dims: [" +
            K + "] } " + Param("top_k", K) + Param("softmax", (flags & 8) ? value : "true");
    inputs.push_back(Filled("x", DataType::kFp32, shape({a}), 4, tensor_bytes, tensor_size));
  } else if (which == 1) {
    backend = infera::CreateDetectPostprocessBackend();
    const char* keys[] = {"score_threshold", "iou_threshold", "box_format", "class_agnostic"};
    text += "input { name: \"boxes\" data_type: TYPE_FP32 dims: [" + A +
            ", 4] } "
            "input { name: \"scores\" data_type: TYPE_FP32 dims: [" +
            A + ", " + B +
            "] } "
            "output { name: \"det_boxes\" data_type: TYPE_FP32 dims: [" +
            K +
            ", 4] } "
            "output { name: \"det_scores\" data_type: TYPE_FP32 dims: [" +
            K +
            "] } "
            "output { name: \"num_detections\" data_type: TYPE_INT64 dims: [1] } " +
            Param("max_detections", K) + Param(keys[(flags >> 3) & 3], value) +
            ((flags & 32) ? Param("box_format", "cxcywh") : "") +
            ((flags & 64) ? Param("class_agnostic", "true") : "");
    inputs.push_back(Filled("boxes", DataType::kFp32, shape({a, 4}), 4, tensor_bytes, tensor_size));
    inputs.push_back(Filled("scores", DataType::kFp32, shape({a, b}), 4,
                            tensor_bytes + tensor_size / 2, tensor_size - tensor_size / 2));
  } else {
    backend = infera::CreatePoolBackend();
    text += "input { name: \"token_embeddings\" data_type: TYPE_FP32 dims: [-1, " + B +
            "] } "
            "input { name: \"attention_mask\" data_type: TYPE_INT64 dims: [-1] } "
            "output { name: \"embedding\" data_type: TYPE_FP32 dims: [" +
            B + "] } " + Param((flags & 8) ? "mode" : "normalize", value);
    inputs.push_back(
        Filled("token_embeddings", DataType::kFp32, shape({a, b}), 4, tensor_bytes, tensor_size));
    // Mask bytes: mostly 0/1, sometimes other values (must be refused, not crash).
    std::vector<uint8_t> mask(static_cast<size_t>(a) * 8 * std::max<int64_t>(rows, 1), 0);
    for (size_t i = 0; i < mask.size(); i += 8) {
      const uint8_t byte = tensor_size ? tensor_bytes[(i / 8) % tensor_size] : 1;
      mask[i] = (flags & 16) ? byte : byte & 1;
    }
    inputs.push_back(Filled("attention_mask", DataType::kInt64, shape({(flags & 128) ? a + 1 : a}),
                            8, mask.data(), mask.size()));
  }

  inference::ModelConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(text, &config)) return 0;
  config.set_backend(std::string(backend->name()));
  if (!backend->ValidateConfig(config).ok()) return 0;
  infera::ModelLoadContext context;
  context.config = &config;
  context.model_dir = "/nonexistent";
  auto model = backend->Load(context);
  if (!model.ok()) return 0;
  auto instance = (*model)->CreateInstance({});
  if (!instance.ok()) std::abort();
  auto outputs = (*instance)->Execute(std::move(inputs));
  if (!outputs.ok()) {
    if (outputs.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  const int64_t out_rows = batched ? rows : 1;
  for (const Tensor& t : *outputs) {
    if (!infera::ValidateTensorData(t).ok()) std::abort();
  }
  if (which == 0) {
    const auto* indices = reinterpret_cast<const int64_t*>((*outputs)[1].data.data());
    for (int64_t i = 0; i < out_rows * k; ++i) {
      if (indices[i] < 0 || indices[i] >= a) std::abort();
    }
  } else if (which == 1) {
    const auto* scores = reinterpret_cast<const float*>((*outputs)[1].data.data());
    const auto* count = reinterpret_cast<const int64_t*>((*outputs)[2].data.data());
    for (int64_t r = 0; r < out_rows; ++r) {
      if (count[r] < 0 || count[r] > k) std::abort();
      for (int64_t j = 1; j < k; ++j) {
        const float prev = scores[r * k + j - 1], cur = scores[r * k + j];
        if (j < count[r] && !(prev >= cur)) std::abort();
        if (j >= count[r] && cur != 0) std::abort();
      }
    }
  } else {
    if ((*outputs)[0].data.size() != static_cast<size_t>(out_rows * b) * sizeof(float))
      std::abort();
  }
  return 0;
}
