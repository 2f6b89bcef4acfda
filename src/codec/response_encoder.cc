#include "codec/response_encoder.h"

#include <charconv>
#include <cmath>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "api/tensor.h"
#include "codec/json_data_writer.h"
#include "codec/json_string_stream.h"
#include "common/utf8.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "rapidjson/internal/dtoa.h"

namespace infera {
namespace {

// The response's structure is fixed, so it is appended directly (no rapidjson Writer, no
// level stack): constant keys and separators as literals, strings through
// WriteJsonStringRapidJsonEscapes, integers with std::to_chars, doubles with rapidjson's
// own dtoa — the bytes rapidjson::Writer<..., kWriteNanAndInfFlag> produced, unchanged
// (response_encoder_golden_test).

template <size_t N>
void Literal(JsonStringStream& out, const char (&text)[N]) {
  out.Append(text, N - 1);
}

void String(JsonStringStream& out, std::string_view text) { WriteJsonStringRapidJsonEscapes(text, out); }

template <typename Int>
void Integer(JsonStringStream& out, Int value) {
  constexpr size_t kMaxChars = 24;  // "-9223372036854775808", "18446744073709551615"
  char* p = out.Reserve(kMaxChars);
  out.Advance(static_cast<size_t>(std::to_chars(p, p + kMaxChars, value).ptr - p));
}

// rapidjson::Writer::Double with kWriteNanAndInfFlag.
void Double(JsonStringStream& out, double value) {
  if (std::isnan(value)) return Literal(out, "NaN");
  if (std::isinf(value)) return value > 0 ? Literal(out, "Infinity") : Literal(out, "-Infinity");
  char* p = out.Reserve(32);  // rapidjson's own buffer for one number is 25 bytes
  out.Advance(static_cast<size_t>(rapidjson::internal::dtoa(value, p) - p));
}

void WriteParameters(const Parameters& parameters, JsonStringStream& out) {
  out.Put('{');
  bool first = true;
  for (const auto& [key, value] : parameters) {
    if (!first) out.Put(',');
    first = false;
    String(out, key);
    out.Put(':');
    if (const bool* b = std::get_if<bool>(&value)) {
      *b ? Literal(out, "true") : Literal(out, "false");
    } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
      Integer(out, *i);
    } else if (const double* d = std::get_if<double>(&value)) {
      Double(out, *d);
    } else {
      String(out, std::get<std::string>(value));
    }
  }
  out.Put('}');
}

bool AllElementsUtf8(const Tensor& tensor) {
  return ForEachBytesElement(tensor.data.AsStringView(),
                             [](std::string_view element) { return IsValidUtf8(element); });
}

// `{"name":…,"datatype":…,"shape":[…]`: how every output object starts.
void WriteOutputHeader(const Tensor& output, JsonStringStream& out) {
  Literal(out, "{\"name\":");
  String(out, output.name);
  Literal(out, ",\"datatype\":\"");
  const std::string_view dtype = DataTypeName(output.dtype);  // upper-case letters and digits
  out.Append(dtype.data(), dtype.size());
  Literal(out, "\",\"shape\":[");
  for (size_t d = 0; d < output.shape.size(); ++d) {
    if (d != 0) out.Put(',');
    Integer(out, output.shape[d]);
  }
  out.Put(']');
}

void WriteOutput(const Tensor& output, bool binary, JsonStringStream& out) {
  WriteOutputHeader(output, out);
  if (binary) {
    Literal(out, ",\"parameters\":{\"binary_data_size\":");
    Integer(out, static_cast<uint64_t>(output.data.size()));
    Literal(out, "}}");
  } else {
    Literal(out, ",\"data\":");
    WriteJsonData(output, out);
    out.Put('}');
  }
}

// The parameters to echo when output `i` was written into shared memory, else null.
const Parameters* SharedMemoryParameters(const InferResponse& response, size_t i) {
  if (i >= response.shared_memory_outputs.size() || !response.shared_memory_outputs[i]) {
    return nullptr;
  }
  return &*response.shared_memory_outputs[i];
}

// An output whose bytes went into a shared-memory region: no data, its parameters.
void WriteSharedMemoryOutput(const Tensor& output, const Parameters& parameters, JsonStringStream& out) {
  WriteOutputHeader(output, out);
  Literal(out, ",\"parameters\":");
  WriteParameters(parameters, out);
  out.Put('}');
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
    JsonStringStream out(&result.body, plan->json_size_hint);
    Literal(out, "{\"model_name\":");
    String(out, response.model_name);
    Literal(out, ",\"model_version\":\"");
    Integer(out, response.model_version);
    out.Put('"');
    if (!response.id.empty()) {
      Literal(out, ",\"id\":");
      String(out, response.id);
    }
    if (!response.parameters.empty()) {
      Literal(out, ",\"parameters\":");
      WriteParameters(response.parameters, out);
    }
    Literal(out, ",\"outputs\":[");
    for (size_t i = 0; i < response.outputs.size(); ++i) {
      if (i != 0) out.Put(',');
      if (const Parameters* shm = SharedMemoryParameters(response, i)) {
        WriteSharedMemoryOutput(response.outputs[i], *shm, out);
      } else {
        WriteOutput(response.outputs[i], plan->binary[i], out);
      }
    }
    Literal(out, "]}");
    out.Finish();
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
