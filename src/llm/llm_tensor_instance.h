// LlmTensorInstance: the `llm` backend's ModelInstance — decoupled (Triton's
// model_transaction_policy { decoupled: true }), so that KServe infer, Triton's generate /
// generate_stream and gRPC ModelStreamInfer reach the LLM through ModelVersion::Infer like
// any model, without a worker thread blocked per generation (docs/request_path.md).
//
// ExecuteDecoupled() maps each request's tensors (tensor_request.h: Triton's vLLM-backend
// names) to one GenerationRequest per prompt — carrying the request's cancellation and
// deadline — for TextGenerator::Generate, the call ModelVersion::Generate makes for the
// OpenAI routes, and returns at once. The outputs come back on the LLM's threads and leave
// through the request's ResponseSender as `text_output` (BYTES) responses:
//   stream=true   one response per GenerationOutput that has text; the last one final,
//                 or an empty final response (Finish()) when the last output has none;
//   stream=false  exactly one response at the end, every prompt's whole text (the prompt
//                 prepended unless exclude_input_in_output), shape [N] — [N, 1] when the
//                 model batches.
// Before the final response the request's GenerationTimings (for N prompts: earliest
// arrival, latest finish, summed output-processing time) go to
// ResponseSender::SetGenerationTimings, so that the trace shows queue / prefill / decode.
// A request of several prompts fails as a whole: the first refusal, error or abort is its
// answer, and the other prompts are cancelled (the engine drops them at its next step).
// A generation that ends kAbort answers its error (Cancelled: client gone or unload;
// DeadlineExceeded: the request's `timeout` passed). When a response cannot be sent (the
// client went away, the deadline passed) the request's generations are cancelled.
//
// Execute() is never called for a decoupled model: Internal.
//
// Not thread-safe (one per scheduler worker); the per-request state it hands to the
// generation callbacks is (they run on the prompt worker and the output thread).
#ifndef INFERA_LLM_LLM_TENSOR_INSTANCE_H_
#define INFERA_LLM_LLM_TENSOR_INSTANCE_H_

#include <vector>

#include "backend/backend.h"
#include "backend/text_generator.h"

namespace infera::llm {

class LlmTensorInstance : public ModelInstance {
 public:
  // `generator` outlives the instance and every generation it starts (the LlmModel, held
  // by the version each request's sender holds). `batched`: the config's max_batch_size > 0.
  LlmTensorInstance(TextGenerator& generator, bool batched) : generator_(generator), batched_(batched) {}

  using ModelInstance::Execute;
  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& context) override;
  void ExecuteDecoupled(std::vector<DecoupledRequest> requests) override;

 private:
  TextGenerator& generator_;
  const bool batched_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLM_TENSOR_INSTANCE_H_
