#include "tools/bench/input_data.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "absl/strings/escaping.h"
#include "api/float16.h"
#include "common/str_cat.h"
#include "tools/bench/json_tensor_data.h"

namespace infera::bench {
namespace {

template <typename T>
void AppendPod(T value, std::string* out) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

template <typename T>
void AppendRandomIntegers(int64_t n, int64_t low, int64_t high, std::mt19937_64& rng,
                          std::string* out) {
  const int64_t lo = std::max<int64_t>(low, static_cast<int64_t>(std::numeric_limits<T>::min()));
  const int64_t hi = std::min<int64_t>(
      high - 1, static_cast<int64_t>(std::min<uint64_t>(std::numeric_limits<T>::max(),
                                                         std::numeric_limits<int64_t>::max())));
  std::uniform_int_distribution<int64_t> dist(lo, std::max(lo, hi));
  for (int64_t i = 0; i < n; ++i) AppendPod(static_cast<T>(dist(rng)), out);
}

// `n` elements of `dtype`: random (rng given) or zeros (rng null).
std::string MakeElements(DataType dtype, int64_t n, std::mt19937_64* rng,
                         const InputDataOptions& options) {
  std::string out;
  if (!rng) {
    if (dtype == DataType::kBytes) {
      for (int64_t i = 0; i < n; ++i) AppendBytesElement(out, "0");
    } else {
      out.assign(static_cast<size_t>(n) * DataTypeByteSize(dtype), '\0');
    }
    return out;
  }
  out.reserve(static_cast<size_t>(n) * std::max<size_t>(1, DataTypeByteSize(dtype)));
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int64_t lo = options.int_low, hi = options.int_high;
  switch (dtype) {
    case DataType::kBool:
      for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<char>((*rng)() & 1));
      break;
    case DataType::kUint8: AppendRandomIntegers<uint8_t>(n, lo, hi, *rng, &out); break;
    case DataType::kUint16: AppendRandomIntegers<uint16_t>(n, lo, hi, *rng, &out); break;
    case DataType::kUint32: AppendRandomIntegers<uint32_t>(n, lo, hi, *rng, &out); break;
    case DataType::kUint64: AppendRandomIntegers<uint64_t>(n, lo, hi, *rng, &out); break;
    case DataType::kInt8: AppendRandomIntegers<int8_t>(n, lo, hi, *rng, &out); break;
    case DataType::kInt16: AppendRandomIntegers<int16_t>(n, lo, hi, *rng, &out); break;
    case DataType::kInt32: AppendRandomIntegers<int32_t>(n, lo, hi, *rng, &out); break;
    case DataType::kInt64: AppendRandomIntegers<int64_t>(n, lo, hi, *rng, &out); break;
    case DataType::kFp16:
      for (int64_t i = 0; i < n; ++i) AppendPod(FloatToHalf(unit(*rng)), &out);
      break;
    case DataType::kBf16:
      for (int64_t i = 0; i < n; ++i) AppendPod(FloatToBf16(unit(*rng)), &out);
      break;
    case DataType::kFp32:
      for (int64_t i = 0; i < n; ++i) AppendPod(unit(*rng), &out);
      break;
    case DataType::kFp64:
      for (int64_t i = 0; i < n; ++i) AppendPod(static_cast<double>(unit(*rng)), &out);
      break;
    case DataType::kBytes: {
      std::uniform_int_distribution<int> letter('a', 'z');
      std::string s(static_cast<size_t>(options.string_length), 'a');
      for (int64_t i = 0; i < n; ++i) {
        for (char& c : s) c = static_cast<char>(letter(*rng));
        AppendBytesElement(out, s);
      }
      break;
    }
    case DataType::kInvalid:
      break;
  }
  return out;
}

Tensor MakeTensor(const TensorSpec& spec, std::string bytes) {
  return Tensor{spec.name, spec.dtype, spec.shape, Buffer::FromString(std::move(bytes))};
}

// perf_analyzer's {"b64": "..."}: the decoded bytes are one BYTES element (an encoded
// image, say), or for a fixed-size datatype the raw little-endian elements.
absl::Status AppendBase64Data(const rapidjson::Value& b64, DataType dtype, std::string* out,
                              int64_t* count) {
  if (!b64.IsString()) return absl::InvalidArgumentError("\"b64\" must be a string");
  std::string decoded;
  if (!absl::Base64Unescape(absl::string_view(b64.GetString(), b64.GetStringLength()), &decoded)) {
    return absl::InvalidArgumentError("\"b64\" is not valid base64");
  }
  if (dtype == DataType::kBytes) {
    AppendBytesElement(*out, decoded);
    *count = 1;
    return absl::OkStatus();
  }
  const size_t size = DataTypeByteSize(dtype);
  if (size == 0 || decoded.size() % size != 0) {
    return absl::InvalidArgumentError(StrCat("\"b64\" decodes to ", decoded.size(),
                                             " bytes, not a whole number of ",
                                             DataTypeName(dtype), " elements"));
  }
  *count = static_cast<int64_t>(decoded.size() / size);
  out->append(decoded);
  return absl::OkStatus();
}

// One row (entry) of a data file for one tensor: its bytes and dimensions (without the
// batch dimension).
struct Row {
  std::string bytes;
  Shape dims;
};

// `default_dims`: the row's dimensions unless the entry gives a "shape". A single -1 in
// them is inferred from the element count (numpy's reshape(-1)); with several the shape
// is unknown and reported as {-1} (acceptable for validation data only).
absl::StatusOr<Row> ParseRow(const rapidjson::Value& value, const TensorSpec& spec,
                             const Shape& default_dims) {
  Row row;
  row.dims = default_dims;
  const rapidjson::Value* content = &value;
  const rapidjson::Value* b64 = nullptr;
  if (value.IsObject()) {
    if (value.HasMember("b64")) {
      b64 = &value["b64"];
    } else if (!value.HasMember("content")) {
      return absl::InvalidArgumentError(
          StrCat("'", spec.name, "': an object needs \"content\" or \"b64\""));
    } else {
      content = &value["content"];
    }
    if (value.HasMember("shape") && value["shape"].IsArray()) {
      row.dims.clear();
      for (const auto& d : value["shape"].GetArray()) {
        if (!d.IsInt64() || d.GetInt64() < 0) {
          return absl::InvalidArgumentError(StrCat("'", spec.name, "': bad shape"));
        }
        row.dims.push_back(d.GetInt64());
      }
    }
  }
  int64_t count = 0;
  if (b64) {
    absl::Status status = AppendBase64Data(*b64, spec.dtype, &row.bytes, &count);
    if (!status.ok()) return absl::InvalidArgumentError(StrCat("'", spec.name, "': ", status.message()));
  } else if (absl::Status status = AppendJsonTensorData(*content, spec.dtype, &row.bytes, &count);
             !status.ok()) {
    return absl::InvalidArgumentError(StrCat("'", spec.name, "': ", status.message()));
  }
  const int64_t unknown = std::count(row.dims.begin(), row.dims.end(), -1);
  if (unknown > 0) {
    int64_t known = 1;
    for (int64_t d : row.dims) known *= d < 0 ? 1 : d;
    if (unknown == 1 && known > 0 && count % known == 0) {
      *std::find(row.dims.begin(), row.dims.end(), -1) = count / known;  // as numpy's reshape(-1)
    } else {
      row.dims = {-1};
      return row;
    }
  }
  const std::optional<int64_t> expected = ElementCount(row.dims);
  if (!expected || *expected != count) {
    return absl::InvalidArgumentError(StrCat("'", spec.name, "' has ", count,
                                             " elements; its shape ", ShapeToString(row.dims),
                                             " needs ", expected.value_or(-1)));
  }
  return row;
}

// Concatenates rows first..first+rows-1 (wrapping) of `entries` for `spec` (whose shape
// includes the batch dimension when `batches`).
absl::StatusOr<Tensor> BatchRows(const rapidjson::Value& entries, size_t first, int64_t rows,
                                 const TensorSpec& spec, bool batches, const char* section) {
  const Shape default_dims(spec.shape.begin() + (batches && !spec.shape.empty() ? 1 : 0),
                           spec.shape.end());
  std::string bytes;
  Shape dims;
  for (int64_t r = 0; r < rows; ++r) {
    const size_t index = (first + static_cast<size_t>(r)) % entries.Size();
    const rapidjson::Value& entry = entries[static_cast<rapidjson::SizeType>(index)];
    if (!entry.IsObject() || !entry.HasMember(spec.name.c_str())) {
      return absl::InvalidArgumentError(
          StrCat(section, "[", index, "] has no tensor '", spec.name, "'"));
    }
    absl::StatusOr<Row> row = ParseRow(entry[spec.name.c_str()], spec, default_dims);
    if (!row.ok()) {
      return absl::InvalidArgumentError(StrCat(section, "[", index, "] ", row.status().message()));
    }
    if (r > 0 && row->dims != dims) {
      return absl::InvalidArgumentError(
          StrCat(section, "[", index, "] '", spec.name, "': rows of one batch differ in shape"));
    }
    dims = std::move(row->dims);
    bytes += row->bytes;
  }
  Tensor tensor{spec.name, spec.dtype, dims, Buffer::FromString(std::move(bytes))};
  if (batches && dims != Shape{-1}) tensor.shape.insert(tensor.shape.begin(), rows);
  return tensor;
}

}  // namespace

absl::StatusOr<std::vector<PayloadData>> ParseInputDataJson(std::string_view json,
                                                            const std::vector<TensorSpec>& inputs,
                                                            const std::vector<TensorSpec>& outputs,
                                                            bool batches, int64_t batch_size) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag | rapidjson::kParseNanAndInfFlag>(json.data(),
                                                                               json.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("data") || !doc["data"].IsArray() ||
      doc["data"].Empty()) {
    return absl::InvalidArgumentError(
        "input data must be a JSON object with a non-empty \"data\" array");
  }
  const rapidjson::Value& data = doc["data"];
  const rapidjson::Value* validation = nullptr;
  if (doc.HasMember("validation_data")) {
    validation = &doc["validation_data"];
    if (!validation->IsArray() || validation->Size() != data.Size()) {
      return absl::InvalidArgumentError("\"validation_data\" must be an array as long as \"data\"");
    }
  }
  const int64_t rows = batches ? batch_size : 1;
  const size_t count = std::max<size_t>(1, data.Size() / static_cast<size_t>(rows));
  std::vector<PayloadData> payloads(count);
  for (size_t k = 0; k < count; ++k) {
    const size_t first = k * static_cast<size_t>(rows);
    for (const TensorSpec& spec : inputs) {
      absl::StatusOr<Tensor> tensor = BatchRows(data, first, rows, spec, batches, "data");
      if (!tensor.ok()) return tensor.status();
      if (tensor->shape == Shape{-1}) {
        return absl::InvalidArgumentError(StrCat("data: input '", spec.name,
                                                 "' has several variable dimensions: give "
                                                 "\"shape\" with its \"content\""));
      }
      payloads[k].inputs.push_back(std::move(*tensor));
    }
    if (!validation) continue;
    for (const TensorSpec& spec : outputs) {
      if (!(*validation)[0].HasMember(spec.name.c_str())) continue;  // not every output checked
      absl::StatusOr<Tensor> tensor =
          BatchRows(*validation, first, rows, spec, batches, "validation_data");
      if (!tensor.ok()) return tensor.status();
      payloads[k].expected_outputs.push_back(std::move(*tensor));
    }
  }
  return payloads;
}

absl::StatusOr<std::vector<PayloadData>> MakePayloadData(const std::vector<TensorSpec>& inputs,
                                                         const std::vector<TensorSpec>& outputs,
                                                         bool batches, int64_t batch_size,
                                                         const InputDataOptions& options) {
  if (options.mode == InputDataMode::kFile) {
    std::ifstream file(options.file, std::ios::binary);
    if (!file) return absl::NotFoundError(StrCat("cannot read --input-data file ", options.file));
    std::stringstream text;
    text << file.rdbuf();
    absl::StatusOr<std::vector<PayloadData>> payloads =
        ParseInputDataJson(text.str(), inputs, outputs, batches, batch_size);
    if (!payloads.ok()) {
      return absl::InvalidArgumentError(StrCat(options.file, ": ", payloads.status().message()));
    }
    return payloads;
  }
  const bool random = options.mode == InputDataMode::kRandom;
  const int count = random ? std::max(1, options.num_random_payloads) : 1;
  std::vector<PayloadData> payloads(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    std::mt19937_64 rng(options.seed * 1000003 + static_cast<uint64_t>(k));
    for (const TensorSpec& spec : inputs) {
      const int64_t n = ElementCount(spec.shape).value_or(0);
      if (spec.dtype == DataType::kBytes && options.image_inputs.count(spec.name) && !options.images.empty()) {
        std::string bytes;
        for (int64_t i = 0; i < n; ++i) {
          AppendBytesElement(bytes, options.images[static_cast<size_t>(k * n + i) % options.images.size()]);
        }
        payloads[k].inputs.push_back(MakeTensor(spec, std::move(bytes)));
      } else if (spec.dtype == DataType::kBytes && !options.string_data.empty()) {
        std::string bytes;
        for (int64_t i = 0; i < n; ++i) AppendBytesElement(bytes, options.string_data);
        payloads[k].inputs.push_back(MakeTensor(spec, std::move(bytes)));
      } else {
        payloads[k].inputs.push_back(MakeTensor(spec, MakeElements(spec.dtype, n, random ? &rng : nullptr, options)));
      }
    }
  }
  return payloads;
}

}  // namespace infera::bench
