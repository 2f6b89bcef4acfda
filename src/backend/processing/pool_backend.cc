// pool: token embeddings [L, D] → one sentence embedding [D] (docs/pipelines.md, "pool").
//
//   mode "mean": sum_i mask_i * e_i / sum_i mask_i, accumulated in double; mask values
//     must be 0 or 1 (anything else is a 400 naming the position); no mask input, or
//     none given by the request: every token counts; a row whose mask is all zero
//     gives the zero vector (not NaN).
//   mode "cls": the first token's embedding (the mask is not consulted).
//   normalize "true": divided by its L2 norm (computed in double); a zero vector stays
//     zero. Non-finite inputs are not hidden: NaN/inf propagate to the output.
// L may be variable (dims [-1, D] with the mask [-1]); the request's mask length must
// then equal its embeddings' L. Cost: O(L·D) per row.
#include <cmath>

#include "backend/processing/postprocess_parameters.h"
#include "backend/processing/processing_backends.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

using processing::BoolParameter;
using processing::CheckTensor;
using processing::ChoiceParameter;
using processing::IndexOutputs;

constexpr std::string_view kName = "pool";

struct PoolOptions {
  int64_t dim = 0;  // D
  bool cls = false;
  bool normalize = true;
  int embeddings_input = 0;  // index in the config's inputs
  int mask_input = -1;       // -1: no mask input declared
};

absl::StatusOr<PoolOptions> ParseOptions(const inference::ModelConfig& config) {
  PoolOptions options;
  const inference::ModelInput* embeddings = FindConfigInput(config, "token_embeddings");
  const inference::ModelInput* mask = FindConfigInput(config, "attention_mask");
  if (embeddings == nullptr || config.input_size() != (mask != nullptr ? 2 : 1)) {
    return absl::InvalidArgumentError(
        StrCat(kName, ": inputs must be 'token_embeddings' and optionally 'attention_mask'"));
  }
  RETURN_IF_ERROR(CheckTensor(kName, "input", "token_embeddings", embeddings->data_type(),
                              embeddings->dims(), {inference::TYPE_FP32}, {-2, -1}));
  if (embeddings->optional()) {
    return absl::InvalidArgumentError(
        StrCat(kName, ": input 'token_embeddings' cannot be optional"));
  }
  options.embeddings_input = embeddings == &config.input(0) ? 0 : 1;
  options.dim = embeddings->dims(1);
  if (mask != nullptr) {
    RETURN_IF_ERROR(
        CheckTensor(kName, "input", "attention_mask", mask->data_type(), mask->dims(),
                    {inference::TYPE_INT64, inference::TYPE_INT32, inference::TYPE_BOOL}, {-2}));
    if (mask->dims(0) != embeddings->dims(0)) {
      return absl::InvalidArgumentError(
          StrCat(kName, ": input 'attention_mask' has dims [", mask->dims(0),
                 "]; must be [L] with the L of 'token_embeddings' (", embeddings->dims(0), ")"));
    }
    options.mask_input = 1 - options.embeddings_input;
  }
  ASSIGN_OR_RETURN(std::vector<int> outputs, IndexOutputs(config, kName, {"embedding"}));
  (void)outputs;
  const auto& output = config.output(0);
  RETURN_IF_ERROR(CheckTensor(kName, "output", "embedding", output.data_type(), output.dims(),
                              {inference::TYPE_FP32}, {options.dim}));
  ASSIGN_OR_RETURN(std::string mode, ChoiceParameter(config, kName, "mode", {"mean", "cls"}));
  options.cls = mode == "cls";
  ASSIGN_OR_RETURN(options.normalize, BoolParameter(config, kName, "normalize", true));
  return options;
}

class PoolInstance : public ModelInstance {
 public:
  PoolInstance(const inference::ModelConfig& config, const PoolOptions& options)
      : config_(config), options_(options) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    const Tensor* embeddings = nullptr;
    const Tensor* mask = nullptr;
    for (const Tensor& input : inputs) {
      if (input.name == "token_embeddings") embeddings = &input;
      if (input.name == "attention_mask") mask = &input;
    }
    if (embeddings == nullptr) {
      return absl::InvalidArgumentError(StrCat(kName, ": input 'token_embeddings' is missing"));
    }
    const bool batched = config_.max_batch_size() > 0;
    const size_t lead = batched ? 1 : 0;
    const int64_t d = options_.dim;
    if (embeddings->dtype != DataType::kFp32 || embeddings->shape.size() != lead + 2 ||
        embeddings->shape[lead + 1] != d ||
        embeddings->data.size() !=
            static_cast<size_t>(ElementCount(embeddings->shape).value_or(0)) * sizeof(float)) {
      return absl::InvalidArgumentError(StrCat(kName, ": input 'token_embeddings' is ",
                                               DataTypeName(embeddings->dtype),
                                               ShapeToString(embeddings->shape)));
    }
    const int64_t rows = batched ? embeddings->shape[0] : 1;
    const int64_t length = embeddings->shape[lead];
    if (mask != nullptr) {
      Shape want = batched ? Shape{rows, length} : Shape{length};
      const size_t element_size = DataTypeByteSize(mask->dtype);
      if (mask->shape != want || element_size == 0 ||
          mask->data.size() != static_cast<size_t>(rows * length) * element_size) {
        return absl::InvalidArgumentError(
            StrCat(kName, ": input 'attention_mask' is ", ShapeToString(mask->shape),
                   "; 'token_embeddings' ", ShapeToString(embeddings->shape), " needs ",
                   ShapeToString(want)));
      }
    }
    uint8_t* bytes;
    Buffer buffer = Buffer::Allocate(rows * d * sizeof(float), &bytes);
    float* out = reinterpret_cast<float*>(bytes);
    std::vector<double> sum(d);
    std::vector<float> token(d);
    for (int64_t row = 0; row < rows; ++row) {
      const uint8_t* base = embeddings->data.data() + row * length * d * sizeof(float);
      std::fill(sum.begin(), sum.end(), 0.0);
      double count = 0;
      for (int64_t i = 0; i < (options_.cls ? std::min<int64_t>(length, 1) : length); ++i) {
        if (mask != nullptr && !options_.cls) {
          const size_t at = static_cast<size_t>(row * length + i);
          const size_t size = DataTypeByteSize(mask->dtype);
          int64_t value = 0;
          if (mask->dtype == DataType::kInt64) {
            std::memcpy(&value, mask->data.data() + at * size, 8);
          } else if (mask->dtype == DataType::kInt32) {
            int32_t v32;
            std::memcpy(&v32, mask->data.data() + at * size, 4);
            value = v32;
          } else {
            value = mask->data.data()[at];
          }
          if (value != 0 && value != 1) {
            return absl::InvalidArgumentError(StrCat(kName, ": attention_mask[",
                                                     batched ? StrCat(row, ",") : std::string(), i,
                                                     "] is ", value, "; must be 0 or 1"));
          }
          if (value == 0) continue;
        }
        std::memcpy(token.data(), base + i * d * sizeof(float), d * sizeof(float));
        for (int64_t j = 0; j < d; ++j) sum[j] += token[j];
        count += 1;
      }
      if (count > 1) {
        for (double& v : sum) v /= count;
      }
      if (options_.normalize) {
        double norm = 0;
        for (double v : sum) norm += v * v;
        norm = std::sqrt(norm);
        if (norm > 0) {
          for (double& v : sum) v /= norm;
        }
      }
      for (int64_t j = 0; j < d; ++j) out[row * d + j] = static_cast<float>(sum[j]);
    }
    std::vector<Tensor> outputs(1);
    outputs[0].name = config_.output(0).name();
    outputs[0].dtype = DataType::kFp32;
    outputs[0].shape = batched ? Shape{rows, d} : Shape{d};
    outputs[0].data = std::move(buffer);
    return outputs;
  }

 private:
  const inference::ModelConfig& config_;
  const PoolOptions& options_;
};

class PoolModel : public LoadedModel {
 public:
  PoolModel(const inference::ModelConfig& config, PoolOptions options)
      : config_(config), options_(options) {}
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<PoolInstance>(config_, options_);
  }

 private:
  const inference::ModelConfig& config_;
  const PoolOptions options_;
};

class PoolBackend : public Backend {
 public:
  std::string_view name() const override { return kName; }
  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    return ParseOptions(config).status();
  }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    ASSIGN_OR_RETURN(PoolOptions options, ParseOptions(*context.config));
    return std::make_unique<PoolModel>(*context.config, options);
  }
};

}  // namespace

std::unique_ptr<Backend> CreatePoolBackend() { return std::make_unique<PoolBackend>(); }

}  // namespace infera
