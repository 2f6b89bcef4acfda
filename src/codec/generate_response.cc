#include "codec/generate_response.h"

#include <charconv>
#include <variant>

#include "codec/json_data_writer.h"
#include "codec/json_string_stream.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "common/utf8.h"

namespace infera {
namespace {

constexpr std::string_view kReserved[] = {"id", "model_name", "model_version"};

bool IsReserved(std::string_view key) {
  for (std::string_view reserved : kReserved) {
    if (key == reserved) return true;
  }
  return false;
}

bool IsOutput(const InferResponse& response, std::string_view name) {
  for (const Tensor& output : response.outputs) {
    if (output.name == name) return true;
  }
  return false;
}

void Key(std::string_view key, bool& first, JsonStringStream& out) {
  if (!first) out.Put(',');
  first = false;
  WriteJsonStringRapidJsonEscapes(key, out);
  out.Put(':');
}

void Parameter(const ParameterValue& value, JsonStringStream& out) {
  if (const bool* b = std::get_if<bool>(&value)) {
    const std::string_view text = *b ? "true" : "false";
    out.Append(text.data(), text.size());
  } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
    char* p = out.Reserve(24);
    out.Advance(static_cast<size_t>(std::to_chars(p, p + 24, *i).ptr - p));
  } else if (const double* d = std::get_if<double>(&value)) {
    WriteJsonDouble(*d, out);
  } else {
    WriteJsonStringRapidJsonEscapes(std::get<std::string>(value), out);
  }
}

absl::Status CheckOutput(const Tensor& output) {
  if (IsReserved(output.name)) {
    return absl::InternalError(StrCat("output '", output.name, "' has the name of a key generate reserves ",
                                      "(id, model_name, model_version); use /infer for this model"));
  }
  if (absl::Status valid = ValidateTensorData(output); !valid.ok()) {
    return absl::InternalError(StrCat("output '", output.name, "': ", valid.message()));
  }
  if (output.dtype == DataType::kBytes &&
      !ForEachBytesElement(output.data.AsStringView(), [](std::string_view e) { return IsValidUtf8(e); })) {
    return absl::InternalError(StrCat("output '", output.name, "' holds bytes that are not valid UTF-8, which ",
                                      "JSON cannot carry; use /infer with binary_data for this model"));
  }
  return absl::OkStatus();
}

// An output's value: its only element, or a flat array of them.
void OutputValue(const Tensor& output, JsonStringStream& out) {
  const std::optional<int64_t> count = ElementCount(output.shape);
  if (count != 1) return WriteJsonData(output, out);
  std::string array;
  {
    JsonStringStream scratch(&array, EstimateJsonDataSize(output));
    WriteJsonData(output, scratch);
    scratch.Finish();
  }
  // "[x]" → "x"
  out.Append(array.data() + 1, array.size() - 2);
}

absl::Status WriteObject(const InferResponse& response, JsonStringStream& out) {
  for (const Tensor& output : response.outputs) RETURN_IF_ERROR(CheckOutput(output));
  out.Put('{');
  bool first = true;
  if (!response.id.empty()) {
    Key("id", first, out);
    WriteJsonStringRapidJsonEscapes(response.id, out);
  }
  Key("model_name", first, out);
  WriteJsonStringRapidJsonEscapes(response.model_name, out);
  Key("model_version", first, out);
  WriteJsonStringRapidJsonEscapes(std::to_string(response.model_version), out);
  for (const auto& [name, value] : response.parameters) {
    if (IsReserved(name) || IsOutput(response, name)) continue;
    Key(name, first, out);
    Parameter(value, out);
  }
  for (const Tensor& output : response.outputs) {
    Key(output.name, first, out);
    OutputValue(output, out);
  }
  out.Put('}');
  return absl::OkStatus();
}

}  // namespace

absl::Status EncodeGenerateResponse(const InferResponse& response, std::string* out) {
  out->clear();
  JsonStringStream stream(out, 256);
  absl::Status written = WriteObject(response, stream);
  stream.Finish();
  return written;
}

absl::Status AppendGenerateEvent(const InferResponse& response, std::string* out) {
  const size_t start = out->size();
  out->append("data: ");
  {
    JsonStringStream stream(out, 256);
    absl::Status written = WriteObject(response, stream);
    stream.Finish();
    if (!written.ok()) {
      out->resize(start);
      return written;
    }
  }
  out->append("\n\n");
  return absl::OkStatus();
}

std::string GenerateErrorEvent(std::string_view message) {
  std::string event = "data: {\"error\":";
  {
    JsonStringStream stream(&event, message.size() + 16);
    // Messages echo client bytes (names, values); JSON text must be UTF-8.
    WriteJsonStringRapidJsonEscapes(ReplaceInvalidUtf8(message), stream);
    stream.Finish();
  }
  event.append("}\n\n");
  return event;
}

}  // namespace infera
