// LlmEngine: continuous-batching generation — the engine thread, which deals in token
// ids only, and the output thread beside it, which turns them into text (vLLM v1's
// EngineCore and OutputProcessor; docs/llm.md, "Threading").
//
//   AddRequest (any thread) ─→ inbox ─→ engine thread, each step:
//     admit new requests; free the ones the output thread finished (stop strings);
//     drop cancelled and expired ones (finish kAbort: Cancelled / DeadlineExceeded)
//     Scheduler::Schedule()            [KvCacheManager → BlockPool]   → SchedulerOutput
//     ModelRunner::Execute(output)                                      → logits
//     Sampler::Sample per sampled sequence                              → tokens
//       (with draft tokens: VerifyDraftTokens, draft_verifier.h)        → 1..k+1 tokens
//     Scheduler::Update(output, tokens)                                 → RequestUpdates
//     NgramProposer per running request, or DraftModelProposer for all of
//       them in batched draft-model steps (speculative decoding only)    → draft tokens
//     ─→ one EngineStepOutput (engine_output.h) ─→ output thread (output_thread.h):
//        OutputProcessor: TextStream per request (detokenise, stop strings), metrics,
//        GenerationOutput → the request's OutputCallback; stop-string hits ─→ Abort()
//
// The scheduler, KV-cache bookkeeping, model runner and every request's engine state
// belong to the engine thread alone: no lock inside them. The engine thread shares only
// its inbox (new requests, aborts: one mutex) and the metrics; the output thread owns the
// per-request text state. Callbacks run on the output thread and must not block (the
// HTTP routes hand the bytes to the connection's I/O thread).
//
// Failure modes: invalid requests are refused synchronously by AddRequest (bad sampling
// parameters, empty prompt, ids outside the vocabulary, a prompt + max_tokens beyond
// max_model_len, a prompt larger than the whole KV cache, a full waiting queue →
// ResourceExhausted). A failed model step fails the requests in it (kError, with the
// status) and drops the prefix cache; the engine keeps serving. A request whose
// cancellation token fires (client gone) or whose deadline passes is dropped at the next
// step (kAbort with Cancelled / DeadlineExceeded) and its blocks freed.
//
// Thread-safe.
#ifndef INFERA_LLM_LLM_ENGINE_H_
#define INFERA_LLM_LLM_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "api/cancellation.h"
#include "api/generation.h"
#include "api/sampling_params.h"
#include "llm/draft_model_proposer.h"
#include "llm/engine_output.h"
#include "llm/grammar_constraint.h"
#include "llm/llm_metrics.h"
#include "llm/model_runner.h"
#include "llm/ngram_proposer.h"
#include "llm/output_thread.h"
#include "llm/scheduler.h"
#include "llm/speculative_config.h"
#include "llm/text_imports.h"

namespace infera::llm {

struct EngineOptions {
  int32_t num_blocks = 256;
  int32_t block_size = 16;
  bool enable_prefix_caching = true;
  SchedulerConfig scheduler;       // eos_token_ids filled by the caller
  size_t max_waiting_requests = 1024;
  // The model's Prometheus series (llm_metrics_series.h); null: snapshot only.
  std::shared_ptr<LlmMetricsSeries> metrics_series;
  // Speculative decoding (docs/speculative_decoding.md); off by default.
  SpeculativeConfig speculative;
};

struct GenerateRequest {
  std::vector<int32_t> prompt_token_ids;
  SamplingParams sampling;
  int priority = 0;
  std::shared_ptr<const CancellationToken> cancellation;  // may be null
  // Past it the engine drops the request (kAbort, DeadlineExceeded); unset: none.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::chrono::steady_clock::time_point arrival_time = std::chrono::steady_clock::now();
};

class LlmEngine {
 public:
  // Starts the engine and output threads. `tokenizer` outlives the engine.
  // `draft`: the draft model's proposer, required when options.speculative names a
  // draft model (Method::kDraftModel), null otherwise.
  static absl::StatusOr<std::unique_ptr<LlmEngine>> Create(EngineOptions options,
                                                           std::unique_ptr<ModelRunner> runner,
                                                           const Tokenizer* tokenizer,
                                                           std::unique_ptr<DraftModelProposer> draft = nullptr);
  ~LlmEngine();
  LlmEngine(const LlmEngine&) = delete;
  LlmEngine& operator=(const LlmEngine&) = delete;

  // Queues a request; `callback` receives its outputs on the output thread. Errors
  // (returned, callback never called): see the class comment.
  absl::Status AddRequest(GenerateRequest request, OutputCallback callback);

  // Frees a request the output thread has finished (a stop string) at the next step; its
  // callback gets nothing more. An unknown or already finished id is ignored. Any thread.
  void Abort(RequestId id);

  // Aborts every request (their callbacks get kAbort, Cancelled), joins the engine thread,
  // then the output thread once it has delivered everything. Idempotent.
  void Shutdown();

  LlmMetricsSnapshot Metrics() const { return metrics_.Snapshot(); }
  LlmMetrics::GrammarStats GrammarMetrics() const { return metrics_.grammar_stats(); }
  const EngineOptions& options() const { return options_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  struct Pending {
    std::unique_ptr<LlmRequest> request;
    NewOutputRequest output;  // handed to the output thread when admitted
  };

  LlmEngine(EngineOptions options, std::unique_ptr<ModelRunner> runner, const Tokenizer* tokenizer,
            std::unique_ptr<DraftModelProposer> draft);
  void Loop();
  void Step();
  void Admit(std::vector<Pending> incoming);
  // Drops requests whose cancellation fired or whose deadline passed.
  void SweepStopped();
  // Ends a request in the engine: frees it and tells the output thread (kAbort / kError).
  void End(RequestId id, FinishReason reason, absl::Status error);
  // Hands the step's outputs to the output thread (when there are any).
  void HandOff();
  void RecordState();
  // Speculative decoding (docs/speculative_decoding.md). The tokens to emit for a
  // sequence scheduled with draft tokens (counted in the metrics).
  std::vector<SampledToken> VerifyDrafts(const ScheduledSequence& seq, float* logits, int64_t vocab_size,
                                         LlmRequest& request);
  // Proposes the next step's draft tokens for the requests that got tokens and still run.
  void ProposeDrafts(const std::vector<RequestUpdate>& updates);
  // The constraint of a request with a grammar (null without one); InvalidArgument for
  // a bad grammar. On the caller's thread.
  absl::StatusOr<std::shared_ptr<GrammarConstraint>> CompileConstraint(const SamplingParams& sampling);

  const EngineOptions options_;
  const std::unique_ptr<ModelRunner> runner_;
  const Tokenizer* const tokenizer_;
  LlmMetrics metrics_;
  const std::unique_ptr<NgramProposer> proposer_;  // [ngram] speculation, else null
  // Draft-model speculation, else null. Engine thread only.
  const std::unique_ptr<DraftModelProposer> draft_;
  // Structured output: the compiled grammars (thread-safe; AddRequest compiles).
  GrammarCompiler grammars_;

  // Engine thread only.
  KvCacheManager kv_;
  Scheduler scheduler_;
  EngineStepOutput step_output_;  // what this loop iteration hands off

  mutable absl::Mutex mu_;
  std::vector<Pending> inbox_ ABSL_GUARDED_BY(mu_);
  std::vector<RequestId> aborts_ ABSL_GUARDED_BY(mu_);
  size_t num_queued_ ABSL_GUARDED_BY(mu_) = 0;  // inbox + waiting (for admission control)
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;

  // Declared after what its callbacks and Abort() use; started by Create().
  std::unique_ptr<OutputThread> output_;
  std::thread thread_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLM_ENGINE_H_
