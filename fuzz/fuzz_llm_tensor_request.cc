// Fuzz target: the `llm` backend's request tensors (llm/tensor_request.h) — Triton's
// vLLM-backend text_input / sampling_parameters / exclude_input_in_output / stream, as a
// KServe or gRPC client sends them to an LLM.
//
// Input: byte 0 = flags (bit 0: a `stream` tensor, bit 1: its value, bit 2: an
// `exclude_input_in_output` tensor, bit 3: its value, bit 4: the model batches, bit 5: no
// text_input), byte 1 = the batch rows; the rest, split at "\n@@@@\n": text_input's raw
// BYTES data (length-prefixed elements, taken as is), then sampling_parameters' one
// element. A request that parses must hold what the header promises (one prompt per row,
// a stream of one prompt that never echoes it, valid sampling parameters); a refusal is
// InvalidArgument with a message.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "llm/tensor_request.h"

namespace {

infera::Tensor Flag(const char* name, bool value) {
  infera::Tensor t;
  t.name = name;
  t.dtype = infera::DataType::kBool;
  t.shape = {1};
  t.data = infera::Buffer::FromString(std::string(1, value ? '\1' : '\0'));
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  const int64_t rows = (flags & 0x10) ? data[1] : 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  constexpr std::string_view kSep = "\n@@@@\n";
  const size_t sep = rest.find(kSep);
  const std::string_view text = rest.substr(0, sep);
  std::vector<infera::Tensor> inputs;
  if (!(flags & 0x20)) {
    infera::Tensor t;
    t.name = "text_input";
    t.dtype = infera::DataType::kBytes;
    t.shape = {1};
    t.data = infera::Buffer::FromString(std::string(text));
    inputs.push_back(std::move(t));
  }
  if (sep != std::string_view::npos) {
    std::string element;
    infera::AppendBytesElement(element, rest.substr(sep + kSep.size()));
    infera::Tensor t;
    t.name = "sampling_parameters";
    t.dtype = infera::DataType::kBytes;
    t.shape = {1};
    t.data = infera::Buffer::FromString(std::move(element));
    inputs.push_back(std::move(t));
  }
  if (flags & 0x01) inputs.push_back(Flag("stream", (flags & 0x02) != 0));
  if (flags & 0x04) inputs.push_back(Flag("exclude_input_in_output", (flags & 0x08) != 0));

  auto request = infera::llm::ParseTensorGenerationRequest(inputs, rows);
  if (!request.ok()) {
    if (request.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    if (request.status().message().empty()) std::abort();
    return 0;
  }
  if (request->prompts.empty()) std::abort();
  if (rows > 0 && static_cast<int64_t>(request->prompts.size()) != rows) std::abort();
  if (request->stream && (request->prompts.size() != 1 || !request->exclude_input)) std::abort();
  if (!request->sampling.Validate().ok()) std::abort();
  return 0;
}
