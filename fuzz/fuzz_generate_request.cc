// Fuzz target: Triton generate request bodies (codec/generate_request.h) mapped onto a
// model with inputs of every kind the mapping handles, and the answer encoder
// (codec/generate_response.h) on what comes out.
//
// Input: byte 0 chooses the model (bit 0: it batches, so every shape gains a variable
// batch dimension); the rest is the body. Whatever the mapping accepts must hold exactly
// the bytes its shape needs, and must encode as an answer (its tensors turned into
// outputs) without reading out of bounds.
#include <cstdint>
#include <string>

#include "api/tensor.h"
#include "codec/generate_request.h"
#include "codec/generate_response.h"
#include "google/protobuf/text_format.h"
#include "model_config.pb.h"

namespace {

constexpr size_t kMaxElements = 1 << 16;

constexpr char kInputs[] = R"pb(
  input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },
          { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] },
          { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] },
          { name: "small" data_type: TYPE_INT8 dims: [ 2, -1 ] },
          { name: "wide" data_type: TYPE_UINT64 dims: [ 4 ] },
          { name: "half" data_type: TYPE_FP16 dims: [ -1 ] },
          { name: "brain" data_type: TYPE_BF16 dims: [ -1 ] },
          { name: "f" data_type: TYPE_FP32 dims: [ -1, 3 ] },
          { name: "d" data_type: TYPE_FP64 dims: [ 1 ] } ]
)pb";

inference::ModelConfig Config(bool batching) {
  inference::ModelConfig config;
  google::protobuf::TextFormat::ParseFromString(kInputs, &config);
  config.set_name("fuzz");
  if (batching) config.set_max_batch_size(4);
  return config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const inference::ModelConfig* const configs[2] = {new inference::ModelConfig(Config(false)),
                                                           new inference::ModelConfig(Config(true))};
  const inference::ModelConfig& config = *configs[data[0] & 1];
  auto body = infera::GenerateRequestBody::Parse(
      std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  if (!body.ok()) return 0;
  (void)body->routing_parameters();
  auto request = body->ToInferRequest(config, kMaxElements);
  if (!request.ok()) return 0;
  infera::InferResponse response;
  response.model_name = "fuzz";
  response.model_version = 1;
  response.id = request->id;
  response.parameters = request->parameters;
  for (infera::Tensor& input : request->inputs) {
    // What the mapping accepts has exactly the bytes its shape needs.
    if (!infera::ValidateTensorData(input).ok()) __builtin_trap();
    response.outputs.push_back(std::move(input));
  }
  std::string out;
  if (!infera::EncodeGenerateResponse(response, &out).ok()) return 0;
  (void)infera::AppendGenerateEvent(response, &out);
  return 0;
}
