#include "manager/classification.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <utility>

#include "api/float16.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/label_file.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

constexpr std::array<std::string_view, 5> kKnownOutputParameters = {
    "binary_data", "classification", "shared_memory_region", "shared_memory_byte_size",
    "shared_memory_offset"};

constexpr std::string_view kClassification = "classification";

bool Classifiable(DataType type) {
  return type != DataType::kBytes && type != DataType::kBool && type != DataType::kInvalid;
}

// One element's value, for ranking (as double) and for the answer (as text).
struct Element {
  double rank;  // NaN ranks last
  std::string text;
};

template <typename T>
T Load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

std::string FormatFloat(double value) {
  // std::to_string(float/double) is "%f"; snprintf with a size query has no fixed bound
  // to overflow (1e308 prints 309 digits).
  const int size = std::snprintf(nullptr, 0, "%f", value);
  std::string text(static_cast<size_t>(size), '\0');
  std::snprintf(text.data(), text.size() + 1, "%f", value);
  return text;
}

Element ReadElement(DataType type, const uint8_t* p) {
  switch (type) {
    case DataType::kUint8: return {static_cast<double>(p[0]), std::to_string(p[0])};
    case DataType::kUint16: { auto v = Load<uint16_t>(p); return {double(v), std::to_string(v)}; }
    case DataType::kUint32: { auto v = Load<uint32_t>(p); return {double(v), std::to_string(v)}; }
    case DataType::kUint64: { auto v = Load<uint64_t>(p); return {double(v), std::to_string(v)}; }
    case DataType::kInt8: { auto v = Load<int8_t>(p); return {double(v), std::to_string(v)}; }
    case DataType::kInt16: { auto v = Load<int16_t>(p); return {double(v), std::to_string(v)}; }
    case DataType::kInt32: { auto v = Load<int32_t>(p); return {double(v), std::to_string(v)}; }
    case DataType::kInt64: { auto v = Load<int64_t>(p); return {double(v), std::to_string(v)}; }
    case DataType::kFp16: { float v = HalfToFloat(Load<uint16_t>(p)); return {v, FormatFloat(v)}; }
    case DataType::kBf16: { float v = Bf16ToFloat(Load<uint16_t>(p)); return {v, FormatFloat(v)}; }
    case DataType::kFp32: { float v = Load<float>(p); return {v, FormatFloat(v)}; }
    case DataType::kFp64: { double v = Load<double>(p); return {v, FormatFloat(v)}; }
    default: return {std::nan(""), ""};
  }
}

// Integers wider than a double's mantissa compare exactly, not through `rank`.
bool Greater(DataType type, const uint8_t* a, const uint8_t* b, const Element& ea,
             const Element& eb) {
  if (type == DataType::kInt64) return Load<int64_t>(a) > Load<int64_t>(b);
  if (type == DataType::kUint64) return Load<uint64_t>(a) > Load<uint64_t>(b);
  if (std::isnan(eb.rank)) return !std::isnan(ea.rank);
  return ea.rank > eb.rank;  // false when ea is NaN
}

}  // namespace

absl::StatusOr<OutputLabels> LoadOutputLabels(const inference::ModelConfig& config,
                                              const std::filesystem::path& model_dir) {
  OutputLabels labels;
  for (const inference::ModelOutput& output : config.output()) {
    if (output.label_filename().empty()) continue;
    ASSIGN_OR_RETURN(
        labels[output.name()],
        LoadLabelFile(model_dir, output.label_filename(),
                      StrCat("output '", output.name(), "' label_filename '",
                             output.label_filename(), "'")));
  }
  return labels;
}

absl::StatusOr<int64_t> CheckRequestedOutputParameters(const inference::ModelConfig& config,
                                                       const RequestedOutput& output) {
  int64_t k = 0;
  for (const auto& [key, value] : output.parameters) {
    if (std::find(kKnownOutputParameters.begin(), kKnownOutputParameters.end(), key) ==
        kKnownOutputParameters.end()) {
      return absl::InvalidArgumentError(
          StrCat("output '", output.name, "' has unknown parameter '", key,
                 "' (known: ", StrJoin(kKnownOutputParameters, ", "), ")"));
    }
    if (key != kClassification) continue;
    const int64_t* count = std::get_if<int64_t>(&value);
    if (count == nullptr || *count < 1) {
      return absl::InvalidArgumentError(StrCat("output '", output.name,
                                               "' parameter 'classification' must be an integer "
                                               ">= 1 (the number of classes to return)"));
    }
    k = *count;
  }
  if (k > 0) {
    const inference::ModelOutput* spec = FindConfigOutput(config, output.name);
    const DataType type = spec ? FromConfigDataType(spec->data_type()) : DataType::kInvalid;
    if (!Classifiable(type)) {
      return absl::InvalidArgumentError(
          StrCat("output '", output.name, "' is ", DataTypeName(type),
                 "; classification needs a numeric output"));
    }
  }
  return k;
}

absl::StatusOr<Tensor> Classify(const Tensor& output, int64_t k, bool batched,
                                const std::vector<std::string>& labels) {
  if (!Classifiable(output.dtype)) {
    return absl::InvalidArgumentError(StrCat("output '", output.name, "' is ",
                                             DataTypeName(output.dtype),
                                             "; classification needs a numeric output"));
  }
  absl::Status valid = ValidateTensorData(output);
  if (!valid.ok()) return absl::InternalError(valid.message());
  int64_t rows = 1;
  if (batched) {
    if (output.shape.empty()) {
      return absl::InternalError(StrCat("output '", output.name, "' has no batch dimension"));
    }
    rows = output.shape[0];
  }
  // Classes per row: the dimensions after the batch (valid data: no overflow).
  const int64_t per_row =
      *ElementCount(Shape(output.shape.begin() + (batched ? 1 : 0), output.shape.end()));
  const int64_t count = std::min(k, per_row);
  const size_t element_size = DataTypeByteSize(output.dtype);
  const uint8_t* data = output.data.data();

  std::string serialized;
  std::vector<Element> elements(static_cast<size_t>(per_row));
  std::vector<int64_t> order(static_cast<size_t>(per_row));
  for (int64_t row = 0; row < rows; ++row) {
    const uint8_t* base = data + static_cast<size_t>(row * per_row) * element_size;
    for (int64_t i = 0; i < per_row; ++i) {
      elements[i] = ReadElement(output.dtype, base + i * element_size);
    }
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return Greater(output.dtype, base + a * element_size, base + b * element_size, elements[a],
                     elements[b]);
    });
    for (int64_t j = 0; j < count; ++j) {
      const int64_t index = order[j];
      std::string text = StrCat(elements[index].text, ":", index);
      if (static_cast<size_t>(index) < labels.size() && !labels[index].empty()) {
        text += ":";
        text += labels[index];
      }
      AppendBytesElement(serialized, text);
    }
  }
  Tensor result;
  result.name = output.name;
  result.dtype = DataType::kBytes;
  if (batched) result.shape.push_back(rows);
  result.shape.push_back(count);
  result.data = Buffer::FromString(std::move(serialized));
  return result;
}

absl::Status ApplyClassification(const inference::ModelConfig& config, const OutputLabels& labels,
                                 const std::vector<RequestedOutput>& requested,
                                 std::vector<Tensor>& outputs) {
  static const std::vector<std::string> kNoLabels;
  for (size_t i = 0; i < requested.size() && i < outputs.size(); ++i) {
    const auto it = requested[i].parameters.find(kClassification);
    if (it == requested[i].parameters.end()) continue;
    if (outputs[i].name != requested[i].name) {
      return absl::InternalError(StrCat("output ", i, " is '", outputs[i].name, "', not the requested '",
                                        requested[i].name, "'"));
    }
    const int64_t* k = std::get_if<int64_t>(&it->second);
    if (k == nullptr || *k < 1) {
      return absl::InvalidArgumentError(
          StrCat("output '", requested[i].name, "' parameter 'classification' must be an integer >= 1"));
    }
    const auto found = labels.find(outputs[i].name);
    ASSIGN_OR_RETURN(outputs[i], Classify(outputs[i], *k, config.max_batch_size() > 0,
                                          found == labels.end() ? kNoLabels : found->second));
  }
  return absl::OkStatus();
}

}  // namespace infera
