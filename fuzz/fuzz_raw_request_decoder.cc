// Fuzz target: raw binary infer request bodies (codec/request_decoder_raw.h,
// Inference-Header-Content-Length: 0), against model configs the input also chooses.
//
// Input:
//   byte 0: the input's datatype (TYPE_* value, taken modulo the enum's range, so invalid
//           and BYTES ones come up too);
//   byte 1: number of config inputs (modulo 3: 0, 1 or 2; only 1 may decode);
//   byte 2: low 2 bits: number of dims (0-3); bit 2: the model batches;
//   next `dims` bytes: each dimension, as a signed byte: negative -> -1 (variable),
//           127 -> 2^62 (overflow checks), else the value;
//   the rest: the body.
// The decoded input is read end to end and checked as the request validator would, so a
// view outside the body or a wrong byte count is a report.
#include <cstdint>
#include <string>

#include "api/infer_request.h"
#include "api/tensor.h"
#include "codec/request_decoder_raw.h"
#include "model_config.pb.h"

namespace {
constexpr size_t kMaxElements = 1 << 16;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  inference::ModelConfig config;
  config.set_name("fuzz");
  const int num_dims = data[2] & 3;
  if (data[2] & 4) config.set_max_batch_size(8);
  if (size < 3 + static_cast<size_t>(num_dims)) return 0;
  for (int i = 0; i < data[1] % 3; ++i) {
    inference::ModelInput* input = config.add_input();
    input->set_name(i == 0 ? "INPUT0" : "INPUT1");
    input->set_data_type(static_cast<inference::DataType>(data[0] % (inference::DataType_MAX + 1)));
    for (int d = 0; d < num_dims; ++d) {
      const int8_t dim = static_cast<int8_t>(data[3 + d]);
      input->add_dims(dim < 0 ? -1 : dim == 127 ? (int64_t{1} << 62) : dim);
    }
  }
  const size_t offset = 3 + static_cast<size_t>(num_dims);
  std::string body(reinterpret_cast<const char*>(data) + offset, size - offset);
  auto request = infera::DecodeRawInferRequest(std::move(body), config, kMaxElements);
  if (!request.ok()) return 0;
  volatile uint8_t sink = 0;
  for (const infera::Tensor& input : request->inputs) {
    const uint8_t* bytes = input.data.data();
    for (size_t i = 0; i < input.data.size(); ++i) sink ^= bytes[i];
    // What the decoder accepts has exactly the bytes its shape needs.
    if (!infera::ValidateTensorData(input).ok()) __builtin_trap();
  }
  (void)sink;
  return 0;
}
