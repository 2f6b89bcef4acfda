#include "codec/response_encoder.h"

#include <charconv>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "api/tensor.h"
#include "codec/json_data_writer.h"
#include "codec/json_string_stream.h"
#include "common/json_writer.h"
#include "common/utf8.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using JsonWriter = rapidjson::Writer<JsonStringStream, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                     rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

// A constant key, given already quoted (and needing no escapes): written as is, without
// rapidjson's per-character escaping. RawValue with kStringType makes the writer emit the
// separator and count the key exactly as Key() does.
template <size_t N>
void WriteKey(JsonWriter& writer, const char (&quoted)[N]) {
  writer.RawValue(quoted, N - 1, rapidjson::kStringType);
}

bool AllElementsUtf8(const Tensor& tensor) {
  return ForEachBytesElement(tensor.data.AsStringView(),
                             [](std::string_view element) { return IsValidUtf8(element); });
}

void WriteParameters(const Parameters& parameters, JsonWriter& writer) {
  writer.StartObject();
  for (const auto& [key, value] : parameters) {
    WriteString(writer, key);
    if (const bool* b = std::get_if<bool>(&value)) {
      writer.Bool(*b);
    } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
      writer.Int64(*i);
    } else if (const double* d = std::get_if<double>(&value)) {
      writer.Double(*d);
    } else {
      WriteString(writer, std::get<std::string>(value));
    }
  }
  writer.EndObject();
}

// The "name", "datatype" and "shape" members every output object starts with.
void WriteOutputHeader(const Tensor& output, JsonWriter& writer) {
  WriteKey(writer, "\"name\"");
  WriteString(writer, output.name);
  WriteKey(writer, "\"datatype\"");
  WriteString(writer, DataTypeName(output.dtype));
  WriteKey(writer, "\"shape\"");
  writer.StartArray();
  for (int64_t dim : output.shape) writer.Int64(dim);
  writer.EndArray();
}

void WriteOutput(const Tensor& output, bool binary, JsonWriter& writer, JsonStringStream& stream) {
  writer.StartObject();
  WriteOutputHeader(output, writer);
  if (binary) {
    WriteKey(writer, "\"parameters\"");
    writer.StartObject();
    WriteKey(writer, "\"binary_data_size\"");
    writer.Uint64(output.data.size());
    writer.EndObject();
  } else {
    WriteKey(writer, "\"data\"");
    // An empty raw value makes the Writer emit the separator and count the value; the
    // array itself is then formatted straight into the stream.
    writer.RawValue("", 0, rapidjson::kArrayType);
    WriteJsonData(output, stream);
  }
  writer.EndObject();
}

// The parameters to echo when output `i` was written into shared memory, else null.
const Parameters* SharedMemoryParameters(const InferResponse& response, size_t i) {
  if (i >= response.shared_memory_outputs.size() || !response.shared_memory_outputs[i]) {
    return nullptr;
  }
  return &*response.shared_memory_outputs[i];
}

// An output whose bytes went into a shared-memory region: no data, its parameters.
void WriteSharedMemoryOutput(const Tensor& output, const Parameters& parameters,
                             JsonWriter& writer) {
  writer.StartObject();
  WriteOutputHeader(output, writer);
  WriteKey(writer, "\"parameters\"");
  WriteParameters(parameters, writer);
  writer.EndObject();
}

// Checks the outputs, decides which are binary, and sizes the body.
struct EncodingPlan {
  absl::InlinedVector<char, 8> binary;  // per output
  bool any_binary = false;
  size_t json_size_hint = 0;
  size_t binary_size = 0;
};

absl::StatusOr<EncodingPlan> PlanEncoding(const InferResponse& response,
                                          const OutputEncoding& encoding) {
  EncodingPlan plan;
  plan.binary.resize(response.outputs.size());
  plan.json_size_hint =
      128 + response.model_name.size() + response.id.size() + 64 * response.parameters.size();
  for (size_t i = 0; i < response.outputs.size(); ++i) {
    const Tensor& output = response.outputs[i];
    if (SharedMemoryParameters(response, i) != nullptr) {  // no data to send
      plan.json_size_hint += 192 + output.name.size() + 21 * output.shape.size();
      continue;
    }
    if (absl::Status status = ValidateTensorData(output); !status.ok()) {
      return absl::InternalError(StrCat("cannot encode output '", output.name, "' of model '",
                                        response.model_name, "': ", status.message()));
    }
    const bool binary = encoding.IsBinary(output.name) ||
                        (output.dtype == DataType::kBytes && !AllElementsUtf8(output));
    plan.binary[i] = binary;
    plan.any_binary |= binary;
    plan.json_size_hint += 96 + output.name.size() + 21 * output.shape.size();
    if (binary) {
      plan.binary_size += output.data.size();
    } else {
      plan.json_size_hint += EstimateJsonDataSize(output);
    }
  }
  return plan;
}

}  // namespace

absl::StatusOr<EncodedInferResponse> EncodeInferResponse(const InferResponse& response,
                                                         const OutputEncoding& encoding) {
  EncodedInferResponse result;
  RETURN_IF_ERROR(EncodeInferResponse(response, encoding, &result));
  return result;
}

absl::Status EncodeInferResponse(const InferResponse& response, const OutputEncoding& encoding,
                                 EncodedInferResponse* out) {
  absl::StatusOr<EncodingPlan> plan = PlanEncoding(response, encoding);
  if (!plan.ok()) return plan.status();

  EncodedInferResponse& result = *out;
  result.body.clear();
  result.json_header_length.reset();
  result.body.reserve(plan->json_size_hint + plan->binary_size);
  {
    JsonStringStream stream(&result.body, plan->json_size_hint);
    // One writer per thread: its level stack keeps its capacity (Reset clears it).
    static thread_local JsonWriter writer;
    writer.Reset(stream);
    writer.StartObject();
    WriteKey(writer, "\"model_name\"");
    WriteString(writer, response.model_name);
    WriteKey(writer, "\"model_version\"");
    char version[24];
    const auto [end, ec] =
        std::to_chars(version, version + sizeof(version), response.model_version);
    WriteString(writer, std::string_view(version, static_cast<size_t>(end - version)));
    if (!response.id.empty()) {
      WriteKey(writer, "\"id\"");
      WriteString(writer, response.id);
    }
    if (!response.parameters.empty()) {
      WriteKey(writer, "\"parameters\"");
      WriteParameters(response.parameters, writer);
    }
    WriteKey(writer, "\"outputs\"");
    writer.StartArray();
    for (size_t i = 0; i < response.outputs.size(); ++i) {
      if (const Parameters* shm = SharedMemoryParameters(response, i)) {
        WriteSharedMemoryOutput(response.outputs[i], *shm, writer);
      } else {
        WriteOutput(response.outputs[i], plan->binary[i], writer, stream);
      }
    }
    writer.EndArray();
    writer.EndObject();
    stream.Finish();
  }
  if (plan->any_binary) {
    result.json_header_length = result.body.size();
    for (size_t i = 0; i < response.outputs.size(); ++i) {
      if (plan->binary[i]) result.body.append(response.outputs[i].data.AsStringView());
    }
  }
  return absl::OkStatus();
}

}  // namespace infera
