#include "tools/bench/kserve_http_payload.h"

#include <cctype>

#include "codec/json_data_writer.h"
#include "codec/json_string_stream.h"
#include "common/json_writer.h"
#include "common/str_cat.h"
#include "rapidjson/document.h"
#include "rapidjson/writer.h"
#include "tools/bench/json_tensor_data.h"

namespace infera::bench {
namespace {

using JsonWriter = rapidjson::Writer<JsonStringStream>;

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

void WriteShmParameters(JsonWriter& w, const ShmTensorRef& ref) {
  w.Key("parameters");
  w.StartObject();
  w.Key("shared_memory_region");
  WriteString(w, ref.region);
  w.Key("shared_memory_byte_size");
  w.Uint64(ref.byte_size);
  if (ref.offset != 0) {
    w.Key("shared_memory_offset");
    w.Uint64(ref.offset);
  }
  w.EndObject();
}

std::string EncodeJsonHeader(const KServeHttpTarget& target, const std::vector<Tensor>& inputs,
                             const PayloadShm* shm) {
  std::string json;
  size_t hint = 128;
  for (const Tensor& t : inputs) hint += 96 + (target.binary_inputs ? 0 : EstimateJsonDataSize(t));
  JsonStringStream stream(&json, hint);
  JsonWriter w(stream);
  w.StartObject();
  w.Key("inputs");
  w.StartArray();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    w.StartObject();
    w.Key("name");
    WriteString(w, t.name);
    w.Key("shape");
    w.StartArray();
    for (int64_t d : t.shape) w.Int64(d);
    w.EndArray();
    w.Key("datatype");
    WriteString(w, DataTypeName(t.dtype));
    if (shm != nullptr) {
      WriteShmParameters(w, shm->inputs[i]);
    } else if (target.binary_inputs) {
      w.Key("parameters");
      w.StartObject();
      w.Key("binary_data_size");
      w.Uint64(t.data.size());
      w.EndObject();
    } else {
      w.Key("data");
      w.RawValue("", 0, rapidjson::kArrayType);  // the separator; the array goes straight in
      WriteJsonData(t, stream);
    }
    w.EndObject();
  }
  w.EndArray();
  if (shm != nullptr) {
    w.Key("outputs");
    w.StartArray();
    for (const auto& [name, ref] : shm->outputs) {
      w.StartObject();
      w.Key("name");
      WriteString(w, name);
      WriteShmParameters(w, ref);
      w.EndObject();
    }
    w.EndArray();
  } else if (target.binary_outputs) {
    w.Key("parameters");
    w.StartObject();
    w.Key("binary_data_output");
    w.Bool(true);
    w.EndObject();
  }
  w.EndObject();
  stream.Finish();
  return json;
}

}  // namespace

std::string ModelPath(const std::string& model, const std::string& version) {
  std::string path = StrCat("/v2/models/", PercentEncode(model));
  if (!version.empty()) path += StrCat("/versions/", PercentEncode(version));
  return path;
}

std::string EncodeInferHttpRequest(const KServeHttpTarget& target, const std::vector<Tensor>& inputs,
                                   const PayloadShm* shm) {
  const std::string json = EncodeJsonHeader(target, inputs, shm);
  size_t body_size = json.size();
  if (shm != nullptr) {
    // Every tensor is in shared memory: a plain JSON request.
    return StrCat("POST ", ModelPath(target.model, target.model_version), "/infer HTTP/1.1\r\nHost: ",
                  target.host, "\r\nContent-Type: application/json\r\nContent-Length: ", body_size,
                  "\r\n\r\n", json);
  }
  if (target.binary_inputs) {
    for (const Tensor& t : inputs) body_size += t.data.size();
  }
  std::string request = StrCat("POST ", ModelPath(target.model, target.model_version),
                               "/infer HTTP/1.1\r\nHost: ", target.host, "\r\n");
  if (target.binary_inputs) {
    request += StrCat("Content-Type: application/octet-stream\r\nInference-Header-Content-Length: ",
                      json.size(), "\r\n");
  } else {
    request += "Content-Type: application/json\r\n";
  }
  request += StrCat("Content-Length: ", body_size, "\r\n\r\n");
  request.reserve(request.size() + body_size);
  request += json;
  if (target.binary_inputs) {
    for (const Tensor& t : inputs) request += t.data.AsStringView();
  }
  return request;
}

absl::StatusOr<std::vector<Tensor>> DecodeInferHttpResponse(std::string_view body,
                                                            std::optional<size_t> header_length) {
  const size_t json_size = header_length.value_or(body.size());
  if (json_size > body.size()) {
    return absl::InvalidArgumentError(StrCat("Inference-Header-Content-Length ", json_size,
                                             " exceeds the body (", body.size(), " bytes)"));
  }
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag | rapidjson::kParseNanAndInfFlag>(body.data(), json_size);
  if (doc.HasParseError() || !doc.IsObject()) return absl::InvalidArgumentError("response is not a JSON object");
  auto outputs = doc.FindMember("outputs");
  if (outputs == doc.MemberEnd() || !outputs->value.IsArray()) {
    return absl::InvalidArgumentError("response has no \"outputs\" array");
  }
  std::vector<Tensor> tensors;
  size_t binary_offset = json_size;
  for (const auto& o : outputs->value.GetArray()) {
    if (!o.IsObject() || !o.HasMember("name") || !o["name"].IsString() || !o.HasMember("datatype") ||
        !o["datatype"].IsString() || !o.HasMember("shape") || !o["shape"].IsArray()) {
      return absl::InvalidArgumentError("an output lacks name, datatype or shape");
    }
    Tensor t;
    t.name = o["name"].GetString();
    std::optional<DataType> dtype = ParseDataTypeName(o["datatype"].GetString());
    if (!dtype) return absl::InvalidArgumentError(StrCat("output '", t.name, "': unknown datatype"));
    t.dtype = *dtype;
    for (const auto& d : o["shape"].GetArray()) {
      if (!d.IsInt64()) return absl::InvalidArgumentError(StrCat("output '", t.name, "': bad shape"));
      t.shape.push_back(d.GetInt64());
    }
    std::string bytes;
    if (o.HasMember("parameters") && o["parameters"].IsObject() &&
        o["parameters"].HasMember("binary_data_size")) {
      const auto& size = o["parameters"]["binary_data_size"];
      if (!size.IsUint64() || size.GetUint64() > body.size() - binary_offset) {
        return absl::InvalidArgumentError(StrCat("output '", t.name, "': bad binary_data_size"));
      }
      bytes.assign(body.substr(binary_offset, size.GetUint64()));
      binary_offset += size.GetUint64();
    } else if (o.HasMember("data")) {
      int64_t count = 0;
      if (absl::Status s = AppendJsonTensorData(o["data"], t.dtype, &bytes, &count); !s.ok()) {
        return absl::InvalidArgumentError(StrCat("output '", t.name, "': ", s.message()));
      }
    } else {
      return absl::InvalidArgumentError(StrCat("output '", t.name, "' has no data"));
    }
    t.data = Buffer::FromString(std::move(bytes));
    if (absl::Status s = ValidateTensorData(t); !s.ok()) {
      return absl::InvalidArgumentError(StrCat("output '", t.name, "': ", s.message()));
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

}  // namespace infera::bench
