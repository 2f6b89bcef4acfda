// Fuzz target: KServe v2 infer request bodies (codec/request_decoder.h), JSON tensors and
// Triton's binary tensor extension.
//
// Input: one byte selecting the framing, then the body.
//   byte 0 even: a plain JSON body (no Inference-Header-Content-Length).
//   byte 0 odd:  the binary extension; bytes 1-2 (big-endian) are the
//                Inference-Header-Content-Length value, the rest is the body (JSON header
//                followed by the tensors' bytes). The value is not clamped to the body: a
//                header length past the end is hostile input the decoder must reject.
// The decoded request's tensors are read end to end, so a view outside the body is an
// ASan report.
#include <cstdint>
#include <optional>
#include <string>

#include "api/infer_request.h"
#include "api/tensor.h"
#include "codec/request_decoder.h"

namespace {
constexpr size_t kMaxElements = 1 << 16;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::optional<size_t> header_length;
  size_t offset = 1;
  if (data[0] & 1) {
    if (size < 3) return 0;
    header_length = (static_cast<size_t>(data[1]) << 8) | data[2];
    offset = 3;
  }
  std::string body(reinterpret_cast<const char*>(data) + offset, size - offset);
  auto request = infera::DecodeInferRequest(std::move(body), header_length, kMaxElements);
  if (!request.ok()) return 0;
  // Touch every byte the decoder claims each input has, then check it as the request
  // validator does (BYTES elements are split on their length prefixes).
  volatile uint8_t sink = 0;
  for (const infera::Tensor& input : request->inputs) {
    const uint8_t* bytes = input.data.data();
    for (size_t i = 0; i < input.data.size(); ++i) sink ^= bytes[i];
    if (infera::ValidateTensorData(input).ok() && input.dtype == infera::DataType::kBytes) {
      (void)infera::SplitBytesElements(input.data.AsStringView());
    }
  }
  (void)sink;
  return 0;
}
