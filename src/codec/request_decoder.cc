#include "codec/request_decoder.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "api/tensor.h"
#include "codec/request_json_handler.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

namespace infera {
namespace {

// Recursive (rapidjson's default), not kParseIterativeFlag: ~20 % less CPU for a small
// request (the `simple` body: 0.52 vs 0.67 µs). The recursion stays bounded: the handler
// sees every StartObject / StartArray, skipped values included, before the parser goes a
// level deeper, and stops the parse past kMaxDepth (100) levels — a hostile body cannot
// make it recurse further (request_decoder_test: the nesting limit).
constexpr unsigned kParseFlags = rapidjson::kParseInsituFlag | rapidjson::kParseNumbersAsStringsFlag |
                                 rapidjson::kParseNanAndInfFlag;

// Ends the JSON text with a NUL while it is parsed: rapidjson's in-situ stream has no
// length and stops at the first NUL. The byte after the JSON is the first binary byte (or
// std::string's terminator), so it is restored afterwards.
class ScopedTerminator {
 public:
  explicit ScopedTerminator(char* at) : at_(at), saved_(*at) { *at_ = '\0'; }
  ~ScopedTerminator() { *at_ = saved_; }
  ScopedTerminator(const ScopedTerminator&) = delete;
  ScopedTerminator& operator=(const ScopedTerminator&) = delete;

 private:
  char* at_;
  char saved_;
};

absl::Status ParseJson(char* json, size_t json_size, RequestJsonHandler& handler) {
  ScopedTerminator terminator(json + json_size);
  rapidjson::InsituStringStream stream(json);
  // One reader per thread: its parse stack keeps its capacity between requests (Parse
  // clears it on every exit, errors included).
  static thread_local rapidjson::Reader reader;
  const rapidjson::ParseResult result = reader.Parse<kParseFlags>(stream, handler);
  if (!handler.status().ok()) return handler.status();
  if (result.IsError()) {
    return absl::InvalidArgumentError(StrCat("malformed JSON at byte offset ", result.Offset(),
                                             ": ", rapidjson::GetParseError_En(result.Code())));
  }
  if (stream.Tell() != json_size) {
    return absl::InvalidArgumentError(
        StrCat("malformed JSON at byte offset ", stream.Tell(), ": NUL byte in the JSON text"));
  }
  if (!handler.done()) return absl::InternalError("JSON request parse ended early");
  return absl::OkStatus();
}

// Checks a binary input's byte count against its datatype and shape.
absl::Status CheckBinaryInput(const Tensor& input) {
  if (input.dtype == DataType::kBytes) return ValidateTensorData(input);
  // The shape's element count is at most max_elements (checked while parsing), so the
  // product cannot overflow.
  const uint64_t expected =
      static_cast<uint64_t>(*ElementCount(input.shape)) * DataTypeByteSize(input.dtype);
  if (input.data.size() != expected) {
    return absl::InvalidArgumentError(StrCat("input '", input.name, "' has binary_data_size ",
                                             input.data.size(), " but ", DataTypeName(input.dtype),
                                             " shape ", ShapeForMessage(input.shape), " needs ",
                                             expected, " bytes"));
  }
  return absl::OkStatus();
}

// Points each binary input at its bytes in the body, after the JSON.
absl::Status AttachBinaryInputs(const std::shared_ptr<const std::string>& body, size_t json_size,
                                bool has_header_length,
                                absl::Span<const std::optional<uint64_t>> sizes,
                                std::vector<Tensor>& inputs) {
  const uint64_t available = body->size() - json_size;
  uint64_t declared = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!sizes[i]) continue;
    if (!has_header_length) {
      return absl::InvalidArgumentError(
          StrCat("input '", inputs[i].name, "' has a binary_data_size parameter but the ",
                 "request has no Inference-Header-Content-Length header"));
    }
    declared = *sizes[i] > UINT64_MAX - declared ? UINT64_MAX : declared + *sizes[i];
  }
  if (declared != available) {
    return absl::InvalidArgumentError(StrCat("binary data size mismatch: inputs declare ", declared,
                                             " bytes, body has ", available));
  }
  const auto* data = reinterpret_cast<const uint8_t*>(body->data());
  size_t offset = json_size;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!sizes[i]) continue;
    inputs[i].data = Buffer::View(body, data + offset, *sizes[i]);
    offset += *sizes[i];
    RETURN_IF_ERROR(CheckBinaryInput(inputs[i]));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InferRequest> DecodeInferRequestInPlace(std::string* body,
                                                       std::optional<size_t> json_header_length,
                                                       size_t max_elements) {
  size_t json_size = body->size();
  if (json_header_length) {
    if (*json_header_length > body->size()) {
      return absl::InvalidArgumentError(StrCat("Inference-Header-Content-Length ",
                                               *json_header_length, " exceeds the body size ",
                                               body->size()));
    }
    json_size = *json_header_length;
  }
  InferRequest request;
  RequestJsonHandler handler(&request, max_elements, json_size);
  // In-situ token views point into the body only while it is parsed; what the request
  // keeps is copied out of it.
  RETURN_IF_ERROR(ParseJson(body->data(), json_size, handler));
  if (!request.input_parameters.empty()) request.input_parameters.resize(request.inputs.size());
  const absl::Span<const std::optional<uint64_t>> sizes = handler.binary_data_sizes();
  const bool any_binary = std::any_of(sizes.begin(), sizes.end(), [](const auto& s) { return s.has_value(); });
  if (!any_binary && json_size == body->size()) return request;  // JSON only: the body stays the caller's
  // Binary inputs view the body: it moves into a shared owner the request keeps.
  auto owner = std::make_shared<std::string>(std::move(*body));
  body->clear();
  RETURN_IF_ERROR(AttachBinaryInputs(owner, json_size, json_header_length.has_value(), sizes, request.inputs));
  return request;
}

absl::StatusOr<InferRequest> DecodeInferRequest(std::string body,
                                                std::optional<size_t> json_header_length,
                                                size_t max_elements) {
  return DecodeInferRequestInPlace(&body, json_header_length, max_elements);
}

}  // namespace infera
