#include "llm/llm_tensor_instance.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/cancellation.h"
#include "api/token_meter.h"
#include "common/str_cat.h"
#include "llm/tensor_request.h"

namespace infera::llm {
namespace {

using TimePoint = std::chrono::steady_clock::time_point;

// The earlier of two time points, an unset one (never reached) ignored.
TimePoint EarliestSet(TimePoint a, TimePoint b) {
  if (a == TimePoint{}) return b;
  if (b == TimePoint{}) return a;
  return std::min(a, b);
}

// What the trace of a request of several generations shows: from the first arrival to the
// last finish, the output processing of all.
GenerationTimings Merge(const std::vector<GenerationTimings>& rows) {
  GenerationTimings merged = rows.front();
  for (size_t i = 1; i < rows.size(); ++i) {
    const GenerationTimings& t = rows[i];
    merged.arrival = EarliestSet(merged.arrival, t.arrival);
    merged.queued = EarliestSet(merged.queued, t.queued);
    merged.scheduled = EarliestSet(merged.scheduled, t.scheduled);
    merged.first_token = EarliestSet(merged.first_token, t.first_token);
    merged.finished = std::max(merged.finished, t.finished);
    merged.detokenize += t.detokenize;
  }
  return merged;
}

// The status a generation that did not end normally answers.
absl::Status EndStatus(const GenerationOutput& out) {
  if (!out.error.ok()) return out.error;
  return out.finish_reason == FinishReason::kError ? absl::InternalError("the generation failed")
                                                   : absl::CancelledError("the generation was aborted");
}

// One tensor request's generations: its sender, and what it collects until the end.
// Admitted() runs on the prompt worker (or inline in Generate), Output() on the LLM's
// output thread; one generation's callbacks never overlap, different prompts' may.
//
// Thread-safe.
class TensorGeneration {
 public:
  TensorGeneration(ResponseSender sender, TensorGenerationRequest request, bool batched,
                   std::shared_ptr<CancellationToken> cancel, std::shared_ptr<TokenMeter> token_meter)
      : token_meter_(std::move(token_meter)),
        stream_(request.stream),
        exclude_input_(request.exclude_input),
        batched_(batched),
        cancel_(std::move(cancel)),
        sender_(std::move(sender)),
        prompts_(std::move(request.prompts)),
        texts_(prompts_.size()),
        timings_(prompts_.size()),
        pending_(prompts_.size()) {}

  const std::vector<std::string>& prompts() const { return prompts_; }

  // Whether the request is answered (failed, or ended): no more generations are needed.
  bool Answered() const {
    absl::MutexLock lock(&mu_);
    return sender_.finished();
  }

  void Admitted(absl::Status status) {
    if (status.ok()) return;  // outputs follow
    absl::MutexLock lock(&mu_);
    Fail(std::move(status));
  }

  void Output(size_t row, GenerationOutput out) {
    const bool last = out.finish_reason != FinishReason::kNone;
    // Every generation's tokens are charged as it ends, whatever the answer became.
    if (last && token_meter_) token_meter_->Charge(out.num_prompt_tokens, out.num_output_tokens);
    absl::MutexLock lock(&mu_);
    if (sender_.finished()) return;  // answered already (a failure): the rest is dropped
    if (last && (out.finish_reason == FinishReason::kAbort || out.finish_reason == FinishReason::kError)) {
      return Fail(EndStatus(out));
    }
    if (stream_) return Stream(std::move(out), last);
    texts_[row] += out.text;
    if (!last) return;
    timings_[row] = out.timings;
    if (--pending_ > 0) return;
    sender_.SetGenerationTimings(Merge(timings_));
    std::vector<std::string> texts;
    texts.reserve(texts_.size());
    for (size_t i = 0; i < texts_.size(); ++i) {
      texts.push_back(exclude_input_ ? std::move(texts_[i]) : StrCat(prompts_[i], texts_[i]));
    }
    Send(TextOutput(texts), /*final=*/true);
  }

 private:
  // stream=true (one prompt): each piece of text as it comes.
  void Stream(GenerationOutput out, bool last) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (last) sender_.SetGenerationTimings(out.timings);
    if (!out.text.empty()) return Send(TextOutput({std::move(out.text)}), last);
    if (last) sender_.Finish();  // Triton's empty final response
  }

  void Send(std::vector<Tensor> outputs, bool final) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    // Refused: the client went away, the deadline passed, or the outputs broke the config
    // (the request is answered with that error): nobody wants more tokens.
    if (!sender_.Send(std::move(outputs), final).ok()) cancel_->Cancel();
  }

  void Fail(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    cancel_->Cancel();  // first: the other prompts (or this one) stop at the engine's next step
    sender_.Finish(std::move(status));
  }

  std::vector<Tensor> TextOutput(const std::vector<std::string>& texts) const {
    std::string data;
    for (const std::string& text : texts) AppendBytesElement(data, text);
    Tensor t;
    t.name = "text_output";
    t.dtype = DataType::kBytes;
    const auto n = static_cast<int64_t>(texts.size());
    t.shape = batched_ ? Shape{n, 1} : Shape{n};
    t.data = Buffer::FromString(std::move(data));
    std::vector<Tensor> outputs;
    outputs.push_back(std::move(t));
    return outputs;
  }

  const std::shared_ptr<TokenMeter> token_meter_;  // may be null
  const bool stream_, exclude_input_, batched_;
  const std::shared_ptr<CancellationToken> cancel_;
  mutable absl::Mutex mu_;
  ResponseSender sender_ ABSL_GUARDED_BY(mu_);
  const std::vector<std::string> prompts_;
  std::vector<std::string> texts_ ABSL_GUARDED_BY(mu_);            // stream=false: each prompt's text so far
  std::vector<GenerationTimings> timings_ ABSL_GUARDED_BY(mu_);     // of the ended generations
  size_t pending_ ABSL_GUARDED_BY(mu_);                             // generations not ended
};

}  // namespace

absl::StatusOr<std::vector<Tensor>> LlmTensorInstance::Execute(std::vector<Tensor> /*inputs*/,
                                                               const ExecutionContext& /*context*/) {
  return absl::InternalError("the llm backend's models are decoupled: requests go to ExecuteDecoupled");
}

void LlmTensorInstance::ExecuteDecoupled(std::vector<DecoupledRequest> requests) {
  for (DecoupledRequest& r : requests) {
    absl::StatusOr<TensorGenerationRequest> parsed =
        ParseTensorGenerationRequest(r.inputs, batched_ ? r.context.rows : 0);
    if (!parsed.ok()) {
      r.sender.Finish(parsed.status());
      continue;
    }
    const SamplingParams sampling = parsed->sampling;
    // Ours, under the client's: cancelled when the client goes or when this request is
    // answered early, so that its generations stop.
    auto cancel = std::make_shared<CancellationToken>(r.context.cancellation);
    auto state = std::make_shared<TensorGeneration>(std::move(r.sender), *std::move(parsed), batched_, cancel,
                                                    r.context.token_meter);
    for (size_t i = 0; i < state->prompts().size() && !state->Answered(); ++i) {
      GenerationRequest generation;
      generation.prompt_text = state->prompts()[i];
      generation.sampling = sampling;
      generation.max_tokens_set = true;
      generation.cancellation = cancel;
      generation.deadline = r.context.deadline;
      generator_.Generate(std::move(generation),
                          GenerationCallbacks{[state](absl::Status status, std::string /*echo*/) {
                                                state->Admitted(std::move(status));
                                              },
                                              [state, i](GenerationOutput out) { state->Output(i, std::move(out)); }});
    }
  }
}

}  // namespace infera::llm
