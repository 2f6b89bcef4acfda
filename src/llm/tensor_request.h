// TensorGenerationRequest: a generation asked for with Triton's vLLM-backend tensors (the
// `llm` backend's decoupled instance, llm_tensor_instance.h): what KServe infer, Triton's
// generate / generate_stream and gRPC ModelStreamInfer send an LLM.
//
//   text_input               BYTES, required: the prompt(s) — one per element; with
//                            max_batch_size > 0 one per batch row ([N, 1])
//   sampling_parameters      BYTES, optional: its first element, a JSON object of vLLM
//                            sampling fields (api/sampling_params_json.h's ParseSamplingFields;
//                            `n` must be 1), applied to every prompt; "" = defaults
//   exclude_input_in_output  BOOL, optional: false prepends the prompt to the text
//                            (default: false, or true with stream)
//   stream                   BOOL, optional: one response per piece of text (default false)
//
// Refused (InvalidArgument naming the tensor): a missing or non-BYTES text_input, a batch
// whose prompts are not one per row, sampling_parameters that are not a JSON object of
// known fields in range, a BOOL flag of another type, stream=true with several prompts
// (one stream carries one generation) or with exclude_input_in_output=false (Triton's
// vLLM backend refuses it too: the prompt is not streamed back).
//
// Thread-safe (a pure function).
#ifndef INFERA_LLM_TENSOR_REQUEST_H_
#define INFERA_LLM_TENSOR_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/sampling_params.h"
#include "api/tensor.h"

namespace infera::llm {

struct TensorGenerationRequest {
  std::vector<std::string> prompts;  // at least one
  SamplingParams sampling;
  bool exclude_input = false;  // resolved: the client's value, else `stream`
  bool stream = false;
};

// `inputs`: one request's tensors (the model version has checked them against the config).
// `batch_rows`: its rows when the model batches (max_batch_size > 0), else 0.
absl::StatusOr<TensorGenerationRequest> ParseTensorGenerationRequest(const std::vector<Tensor>& inputs,
                                                                     int64_t batch_rows);

}  // namespace infera::llm

#endif  // INFERA_LLM_TENSOR_REQUEST_H_
