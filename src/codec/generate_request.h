// The request body of Triton's generate extension (POST /v2/models/{m}[/versions/{v}]/
// generate and .../generate_stream; Triton's docs/protocol/extension_generate.md) and how
// it becomes an InferRequest for a model.
//
//   {"text_input": "What is Triton?",               an input of the model, by name
//    "parameters": {"stream": true, "temperature": 0.7},
//    "max_tokens": 16,                              neither: a request parameter
//    "id": "42"}                                    optional string: the request id
//
// Mapping (Triton's): every key of the top-level object and of its "parameters" object
// that names one of the model's inputs is that input's data; every other key is a request
// parameter. An input's value is a JSON scalar (one element) or a flat array of scalars;
// its elements convert by the input's datatype (BYTES: strings; BOOL: true / false;
// integers: JSON integers within the type's range; FP16/BF16/FP32/FP64: numbers within the
// type's range). Its shape is the model's (metadata) shape with the variable dimensions
// filled as Triton fills them: the fixed dimensions must divide the element count, the
// innermost variable dimension takes what is left, the others are 1 (so `simple`'s
// [-1, 16] takes 16 values as [1, 16], and the batch dimension of a batching model is 1).
// A parameter's value is a string, a boolean or a number (integers within int64); a
// fractional number is a double.
//
// Every problem is InvalidArgument naming it: a body that is not a JSON object (or over
// kMaxGenerateBodyBytes, or nested deeper than JSON's limit), "id" not a string,
// "parameters" not an object, a key given twice (at the top level and in "parameters"),
// an input's value that is an object, a nested array or null, an element of the wrong
// type or out of range, more than `max_elements` elements, a count the model's shape
// cannot take, a parameter whose value is an object, an array or null. Inputs the model
// needs and the body does not give are the model version's check (missing input).
//
// Thread-safe: a parsed body is immutable; ToInferRequest may run concurrently.
//
// Usage:
//   ASSIGN_OR_RETURN(GenerateRequestBody body, GenerateRequestBody::Parse(http_body));
//   ... choose the version, routed by RoutingKey(body.routing_parameters(), header) ...
//   ASSIGN_OR_RETURN(InferRequest request, body.ToInferRequest(version->config(), kMax));
#ifndef INFERA_CODEC_GENERATE_REQUEST_H_
#define INFERA_CODEC_GENERATE_REQUEST_H_

#include <cstddef>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "model_config.pb.h"
#include "rapidjson/document.h"

namespace infera {

// Generate bodies carry text and small tensors; a larger body is refused before it is
// parsed (a JSON document costs ~16 bytes per value in memory). /infer, with binary
// tensor data, takes large tensors.
inline constexpr size_t kMaxGenerateBodyBytes = size_t{16} << 20;

class GenerateRequestBody {
 public:
  static absl::StatusOr<GenerateRequestBody> Parse(std::string_view body);

  GenerateRequestBody(GenerateRequestBody&&) = default;
  GenerateRequestBody& operator=(GenerateRequestBody&&) = default;

  // The body's "routing_key" (top level or in "parameters", a string or an integer) as a
  // request parameter, for the canary routing that must happen before ToInferRequest
  // (protocol/model_answers.h RoutingKey); empty when there is none.
  Parameters routing_parameters() const;

  // The request for a model with `config` (see the file comment). model_name,
  // model_version, arrival_time and cancellation are left for the caller.
  absl::StatusOr<InferRequest> ToInferRequest(const inference::ModelConfig& config, size_t max_elements) const;

 private:
  GenerateRequestBody() = default;
  rapidjson::Document document_;
};

}  // namespace infera

#endif  // INFERA_CODEC_GENERATE_REQUEST_H_
