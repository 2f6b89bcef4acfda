// classify: the top K classes of a score vector, optionally as softmax probabilities,
// with their indices and labels (docs/pipelines.md, "classify").
//
// Ranking follows the classification extension (manager/classification.h): descending
// value, equal values keep index order (lower index first), NaN ranks below every
// number; 64-bit integers compare exactly. Softmax is computed per row in double with
// the row maximum subtracted (no overflow for any finite logits), over the non-NaN
// entries:
//   - a NaN logit gets probability 0 and ranks last;
//   - when some logits are +inf, they share probability 1 equally (the limit), the rest 0;
//   - when every non-NaN logit is -inf, they share it equally (softmax of equal values);
//   - a row of only NaN gives probability 0 everywhere.
// Without softmax the scores are the input values converted to FP32 (NaN stays NaN).
// Cost per row: O(C) to read (and normalise) plus O(C log K) for the partial sort.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "backend/processing/postprocess_parameters.h"
#include "backend/processing/processing_backends.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/label_file.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

using processing::BoolParameter;
using processing::CheckTensor;
using processing::ElementAsDouble;
using processing::IndexOutputs;
using processing::IntegerParameter;

constexpr std::string_view kName = "classify";
constexpr int64_t kMaxClasses = int64_t{1} << 24;  // 16.7 M classes per row
enum Output { kScores = 0, kIndices = 1, kLabels = 2 };

struct ClassifyOptions {
  int64_t num_classes = 0;  // C
  int64_t top_k = 0;        // K
  bool softmax = false;
  std::vector<int> output_index;  // per Output: index in the config, -1 when not declared
  std::optional<std::string> labels_file;
};

absl::StatusOr<ClassifyOptions> ParseOptions(const inference::ModelConfig& config) {
  ClassifyOptions options;
  if (config.input_size() != 1) {
    return absl::InvalidArgumentError(
        StrCat(kName, ": needs exactly 1 input (the scores); config has ", config.input_size()));
  }
  const auto& input = config.input(0);
  const DataType type = FromConfigDataType(input.data_type());
  if (type == DataType::kBytes || type == DataType::kBool || type == DataType::kInvalid) {
    return absl::InvalidArgumentError(StrCat(kName, ": input '", input.name(), "' is ",
                                             inference::DataType_Name(input.data_type()),
                                             "; must be a numeric type"));
  }
  RETURN_IF_ERROR(
      CheckTensor(kName, "input", input.name(), input.data_type(), input.dims(), {}, {-1}));
  if (input.optional()) {
    return absl::InvalidArgumentError(
        StrCat(kName, ": input '", input.name(), "' cannot be optional"));
  }
  options.num_classes = input.dims(0);
  if (options.num_classes > kMaxClasses) {
    return absl::InvalidArgumentError(StrCat(kName, ": input '", input.name(), "' has ",
                                             options.num_classes, " classes; at most ",
                                             kMaxClasses));
  }
  ASSIGN_OR_RETURN(options.output_index,
                   IndexOutputs(config, kName, {"scores", "indices", "labels"}));
  ASSIGN_OR_RETURN(std::optional<int64_t> top_k,
                   IntegerParameter(config, kName, "top_k", 1, kMaxClasses));
  if (!top_k) return absl::InvalidArgumentError(StrCat(kName, ": parameters[top_k] is required"));
  options.top_k = *top_k;
  if (options.top_k > options.num_classes) {
    return absl::InvalidArgumentError(StrCat(kName, ": parameters[top_k] ", options.top_k,
                                             " is more than the input's ", options.num_classes,
                                             " classes"));
  }
  const std::vector<inference::DataType> types = {inference::TYPE_FP32, inference::TYPE_INT64,
                                                  inference::TYPE_STRING};
  for (int k = 0; k < 3; ++k) {
    if (options.output_index[k] < 0) continue;
    const auto& output = config.output(options.output_index[k]);
    RETURN_IF_ERROR(CheckTensor(kName, "output", output.name(), output.data_type(), output.dims(),
                                {types[k]}, {options.top_k}));
  }
  ASSIGN_OR_RETURN(options.softmax, BoolParameter(config, kName, "softmax", false));
  options.labels_file = ConfigParameter(config, "labels");
  if (options.output_index[kLabels] >= 0 && !options.labels_file) {
    return absl::InvalidArgumentError(
        StrCat(kName, ": output 'labels' needs parameters[labels] (a label file)"));
  }
  return options;
}

// Strict weak order "a ranks before b" over indices of one row.
struct RankBefore {
  DataType type;
  const uint8_t* row;
  const std::vector<double>* values;

  bool operator()(int64_t a, int64_t b) const {
    const double va = (*values)[a];
    const double vb = (*values)[b];
    if (type == DataType::kInt64 || type == DataType::kUint64) {
      int64_t ia, ib;
      uint64_t ua, ub;
      std::memcpy(&ia, row + a * 8, 8);
      std::memcpy(&ib, row + b * 8, 8);
      std::memcpy(&ua, row + a * 8, 8);
      std::memcpy(&ub, row + b * 8, 8);
      const bool equal = type == DataType::kInt64 ? ia == ib : ua == ub;
      if (!equal) return type == DataType::kInt64 ? ia > ib : ua > ub;
      return a < b;
    }
    const bool na = std::isnan(va);
    const bool nb = std::isnan(vb);
    if (na != nb) return nb;  // a number ranks before NaN
    if (!na && va != vb) return va > vb;
    return a < b;
  }
};

// Softmax probabilities of `values` (see the file comment for non-finite logits).
void Softmax(const std::vector<double>& values, std::vector<double>& out) {
  out.assign(values.size(), 0.0);
  double max = -std::numeric_limits<double>::infinity();
  bool any = false;
  for (double v : values) {
    if (std::isnan(v)) continue;
    any = true;
    max = std::max(max, v);
  }
  if (!any) return;
  if (std::isinf(max)) {  // all -inf, or some +inf: the equal extreme values share 1
    size_t count = 0;
    for (double v : values) count += v == max;
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i] == max ? 1.0 / count : 0.0;
    return;
  }
  double sum = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    out[i] = std::exp(values[i] - max);  // <= 1; the max itself gives 1, so sum >= 1
    sum += out[i];
  }
  for (double& p : out) p /= sum;
}

class ClassifyInstance : public ModelInstance {
 public:
  ClassifyInstance(const inference::ModelConfig& config, const ClassifyOptions& options,
                   const std::vector<std::string>& labels)
      : config_(config), options_(options), labels_(labels) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    if (inputs.size() != 1) {
      return absl::InvalidArgumentError(StrCat(kName, " needs 1 input, got ", inputs.size()));
    }
    const Tensor& input = inputs[0];
    const bool batched = config_.max_batch_size() > 0;
    const int64_t c = options_.num_classes;
    const int64_t k = options_.top_k;
    const Shape expected = batched && !input.shape.empty() ? Shape{input.shape[0], c} : Shape{c};
    const size_t element_size = DataTypeByteSize(input.dtype);
    if (input.shape != expected || element_size == 0 ||
        input.data.size() !=
            static_cast<size_t>(ElementCount(expected).value_or(0)) * element_size) {
      return absl::InvalidArgumentError(
          StrCat(kName, ": input '", input.name, "' is ", DataTypeName(input.dtype),
                 ShapeToString(input.shape), "; expected ", ShapeToString(expected)));
    }
    const int64_t rows = batched ? input.shape[0] : 1;
    Shape out_shape = batched ? Shape{rows, k} : Shape{k};
    float* scores = nullptr;
    int64_t* indices = nullptr;
    std::string labels;
    Buffer scores_buffer, indices_buffer;
    uint8_t* bytes = nullptr;
    if (options_.output_index[kScores] >= 0) {
      scores_buffer = Buffer::Allocate(rows * k * sizeof(float), &bytes);
      scores = reinterpret_cast<float*>(bytes);
    }
    if (options_.output_index[kIndices] >= 0) {
      indices_buffer = Buffer::Allocate(rows * k * sizeof(int64_t), &bytes);
      indices = reinterpret_cast<int64_t*>(bytes);
    }
    std::vector<double> values(c), probabilities;
    std::vector<int64_t> order(c);
    for (int64_t row = 0; row < rows; ++row) {
      const uint8_t* base = input.data.data() + row * c * element_size;
      for (int64_t i = 0; i < c; ++i) values[i] = ElementAsDouble(input.dtype, base, i);
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        RankBefore{input.dtype, base, &values});
      if (options_.softmax) Softmax(values, probabilities);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t index = order[j];
        if (scores != nullptr) {
          scores[row * k + j] =
              static_cast<float>(options_.softmax ? probabilities[index] : values[index]);
        }
        if (indices != nullptr) indices[row * k + j] = index;
        if (options_.output_index[kLabels] >= 0) AppendBytesElement(labels, labels_[index]);
      }
    }
    std::vector<Tensor> outputs(config_.output_size());
    for (int out = 0; out < 3; ++out) {
      const int at = options_.output_index[out];
      if (at < 0) continue;
      Tensor& tensor = outputs[at];
      tensor.name = config_.output(at).name();
      tensor.shape = out_shape;
      if (out == kScores) {
        tensor.dtype = DataType::kFp32;
        tensor.data = std::move(scores_buffer);
      } else if (out == kIndices) {
        tensor.dtype = DataType::kInt64;
        tensor.data = std::move(indices_buffer);
      } else {
        tensor.dtype = DataType::kBytes;
        tensor.data = Buffer::FromString(std::move(labels));
      }
    }
    return outputs;
  }

 private:
  const inference::ModelConfig& config_;
  const ClassifyOptions& options_;
  const std::vector<std::string>& labels_;
};

class ClassifyModel : public LoadedModel {
 public:
  ClassifyModel(const inference::ModelConfig& config, ClassifyOptions options,
                std::vector<std::string> labels)
      : config_(config), options_(std::move(options)), labels_(std::move(labels)) {}

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<ClassifyInstance>(config_, options_, labels_);
  }

 private:
  const inference::ModelConfig& config_;
  const ClassifyOptions options_;
  const std::vector<std::string> labels_;  // one per class when a label file is given
};

class ClassifyBackend : public Backend {
 public:
  std::string_view name() const override { return kName; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    return ParseOptions(config).status();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    ASSIGN_OR_RETURN(ClassifyOptions options, ParseOptions(*context.config));
    std::vector<std::string> labels;
    if (options.labels_file) {
      ASSIGN_OR_RETURN(labels, LoadLabelFile(context.model_dir, *options.labels_file,
                                             StrCat(kName, ": parameters[labels] '",
                                                    *options.labels_file, "'")));
      if (static_cast<int64_t>(labels.size()) != options.num_classes) {
        return absl::FailedPreconditionError(
            StrCat(kName, ": parameters[labels] '", *options.labels_file, "' has ", labels.size(),
                   " lines; the input has ", options.num_classes, " classes"));
      }
    }
    return std::make_unique<ClassifyModel>(*context.config, std::move(options), std::move(labels));
  }
};

}  // namespace

std::unique_ptr<Backend> CreateClassifyBackend() { return std::make_unique<ClassifyBackend>(); }

}  // namespace infera
