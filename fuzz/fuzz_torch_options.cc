// Fuzz target: the pytorch backend's parameters (backend/torch/torch_options.h), including
// PRECISION / VALIDATE_PRECISION / PRECISION_MIN_* — a model config can arrive over the
// network (repository load with a "config" override), so its parameters are untrusted.
//
// Input: the text of a config.pbtxt. When the text parses, ParseTorchModelOptions must
// either fail or give options inside their documented ranges.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <google/protobuf/text_format.h>

#include "backend/torch/torch_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  inference::ModelConfig config;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!google::protobuf::TextFormat::ParseFromString(text, &config)) return 0;
  infera::MachineLimits machine;
  machine.num_cores = 2;
  auto options = infera::ParseTorchModelOptions(config, machine);
  (void)infera::ValidateTorchConfig(config, machine);
  if (!options.ok()) return 0;
  if (!(options->min_cosine >= 0.0 && options->min_cosine <= 1.0)) std::abort();
  if (!(options->min_top1_agreement >= 0.0 && options->min_top1_agreement <= 1.0)) std::abort();
  if (options->intra_op_threads < 0 || options->intra_op_threads > machine.MaxThreads()) std::abort();
  const std::string_view name = infera::PrecisionName(options->precision);
  if (name != "fp32" && name != "bf16" && name != "fp16" && name != "int8_dynamic") std::abort();
  if (options->model_filename.empty() || options->model_filename.find('/') != std::string::npos) {
    std::abort();
  }
  return 0;
}
