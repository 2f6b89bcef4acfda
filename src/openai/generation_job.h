// GenerationJob: one /v1/completions or /v1/chat/completions request in flight — its
// choices (prompts × n, each one generation through ModelVersion::Generate), their
// admissions and outputs, and the answer.
//
// Admissions (the model's prompt worker) and outputs (the model's output thread) arrive
// in any order, an output possibly before its admission, so:
//   - the answer — a stream's head, or the whole body — goes out only once every choice
//     is admitted; what a stream produced before is kept and written after the head
//     (the echoed prompts first), with the echo's text_offset shift and chat's role
//     applied when a chunk is written;
//   - the first refusal answers its error at once and cancels the siblings;
//   - a stream's `[DONE]` (after the usage chunk, with include_usage) comes once, after
//     the last choice ended; a choice that fails mid-stream sends an error event;
//   - unstreamed, the body is written when the last choice ends: the first error (a
//     failed or aborted choice) answers instead;
//   - chat with tool_choice other than none: the output is read for tool calls
//     (tool_call_parser.h) — whole for a body, through a ToolCallStream per choice for a
//     stream — and finish_reason "stop" is "tool_calls" when auto or required called;
//   - usage is summed: completion tokens over every choice, prompt and cached tokens
//     once per prompt (as vLLM).
// Several choices carry the job's own cancellation token, whose parent is the client's:
// cancelled by a refusal or when the client goes away; one choice carries the client's
// token itself.
//
// Tracing: the request's InferTrace (if sampled) gets each choice's stages from its
// final output's timings (InferTrace::Generated, infera.choice = its index), a
// serialize span for an unstreamed body, and is closed when the answer is complete;
// the answer (the stream's head, the body or the error) carries its traceparent.
//
// Lifetime: held by the callbacks it hands out (shared_ptr); it holds the version's
// handle until the answer is complete, and `tokens`' model is that version's.
//
// Thread-safe: callbacks run on any thread; one mutex guards the state and the writer.
#ifndef INFERA_OPENAI_GENERATION_JOB_H_
#define INFERA_OPENAI_GENERATION_JOB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "security/api_key_store.h"
#include "api/cancellation.h"
#include "api/generation.h"
#include "manager/model_handle.h"
#include "openai/choice_rendering.h"
#include "openai/openai_responses.h"
#include "openai/response_writer.h"
#include "openai/tool_call_parser.h"
#include "tracing/infer_trace.h"

namespace infera::openai {

class GenerationJob : public std::enable_shared_from_this<GenerationJob> {
 public:
  struct Options {
    Endpoint endpoint = Endpoint::kCompletions;
    std::string id;     // the response id (cmpl-… / chatcmpl-…)
    std::string model;  // as the client named it
    int64_t created = 0;
    bool stream = false;
    bool include_usage = false;
    bool logprobs = false;
    int n = 1;                // choices per prompt: choice i is of prompt i / n
    size_t num_choices = 1;   // prompts × n
    // The API key the request came with (null: keys off): its prompt + completion
    // tokens are charged to it once every choice has settled.
    ApiKeyGrantPtr api_key;
    // Chat: how tool calls are read from the output (tool_call_parser.h): tool_choice,
    // the model's tool-call format (auto), the named function (named).
    ToolChoiceMode tool_choice = ToolChoiceMode::kNone;
    ToolCallFormat tool_format = ToolCallFormat::kNone;
    std::string tool_name;
  };

  // `client`: cancelled when the client goes away (may be null).
  GenerationJob(Options options, TokenRenderer tokens, ModelHandle version, std::optional<InferTrace> trace,
                std::unique_ptr<ResponseWriter> writer, std::shared_ptr<const CancellationToken> client);

  // The token every choice's GenerationRequest carries.
  std::shared_ptr<const CancellationToken> cancellation() const;
  // The callbacks of choice `choice` for ModelVersion::Generate (they hold the job).
  GenerationCallbacks Callbacks(size_t choice);

 private:
  struct Choice {
    bool admitted = false;
    bool settled = false;     // refused, or its final output arrived
    bool first_chunk = true;  // chat: the first chunk carries the role
    int64_t offset = 0;       // text_offset of the next token, after the echo
    std::string echo;         // completions with echo: the prompt's text, sent first
    int64_t echo_points = 0;  // its length in code points: added to the offsets on output
    ChoiceDelta all;          // unstreamed: everything so far
    Usage usage;
    absl::Status error;
    FinishReason finish_reason = FinishReason::kNone;
    std::unique_ptr<ToolCallStream> tools;  // streamed chat with tool_choice other than none
  };
  // A stream's event produced before its head: a delta of `choice`, or a rendered event.
  struct Pending {
    size_t choice = 0;
    ChoiceDelta delta;
    std::string raw;
  };

  void OnAdmitted(size_t i, absl::Status status, std::string echo);
  void OnOutput(size_t i, GenerationOutput output);
  // A streamed chat choice's delta through its tool-call stream: content, then one chunk
  // per tool-call delta; the last carries the finish reason.
  void EmitToolDeltas(size_t i, ChoiceDelta delta, bool last) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Unstreamed: the choice's whole text split into content and tool calls.
  void SplitToolCalls(ChoiceDelta& all) const;

  // Renders choice `i`'s delta as an SSE event.
  std::string Chunk(size_t i, ChoiceDelta& delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EmitDelta(size_t i, ChoiceDelta delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Emit(std::string event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartStream() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Accumulate(Choice& c, ChoiceDelta& delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Usage TotalUsage() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Answers `status` unless an answer has begun; cancels the siblings.
  void Fail(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Completes the answer once every choice has settled and (unless an error was
  // answered) been admitted; returns the handle to release (after the lock).
  ModelHandle FinishIfComplete() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendBody() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndStream() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const TokenRenderer tokens_;
  const std::shared_ptr<const CancellationToken> client_;
  const std::shared_ptr<CancellationToken> siblings_;  // set with several choices

  absl::Mutex mu_;
  ModelHandle version_ ABSL_GUARDED_BY(mu_);
  std::optional<InferTrace> trace_ ABSL_GUARDED_BY(mu_);
  const std::unique_ptr<ResponseWriter> writer_ ABSL_PT_GUARDED_BY(mu_);
  std::vector<Choice> choices_ ABSL_GUARDED_BY(mu_);
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
  size_t num_admitted_ ABSL_GUARDED_BY(mu_) = 0;
  size_t num_settled_ ABSL_GUARDED_BY(mu_) = 0;
  bool streaming_ ABSL_GUARDED_BY(mu_) = false;  // the stream's head went out
  bool answered_ ABSL_GUARDED_BY(mu_) = false;   // an error went out: drop everything else
  bool finished_ ABSL_GUARDED_BY(mu_) = false;   // the answer is complete
};

}  // namespace infera::openai

#endif  // INFERA_OPENAI_GENERATION_JOB_H_
