// LlmEngine: continuous-batching generation on one owning thread.
//
//   AddRequest (any thread) ─→ inbox ─→ engine thread, each step:
//     admit new requests, drop cancelled ones
//     Scheduler::Schedule()            [KvCacheManager → BlockPool]   → SchedulerOutput
//     ModelRunner::Execute(output)                                      → logits
//     Sampler::Sample per sampled sequence                              → tokens
//     Scheduler::Update(output, tokens)                                 → RequestUpdates
//     TextStream per request (detokenise, stop strings) → OutputCallback (RequestOutput)
//
// The scheduler, KV-cache bookkeeping, model runner and every request's state belong to
// the engine thread alone, so they need no locks; only the inbox and the metrics are
// shared. Callbacks run on the engine thread and must not block (the HTTP routes hand
// the bytes to the connection's I/O thread).
//
// Failure modes: invalid requests are refused synchronously by AddRequest (bad sampling
// parameters, empty prompt, ids outside the vocabulary, a prompt + max_tokens beyond
// max_model_len, a prompt larger than the whole KV cache, a full waiting queue →
// ResourceExhausted). A failed model step fails the requests in it (kError, with the
// status) and drops the prefix cache; the engine keeps serving. Cancelled requests
// (client gone) are dropped at the next step and their blocks freed.
//
// Thread-safe.
#ifndef INFERA_LLM_LLM_ENGINE_H_
#define INFERA_LLM_LLM_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "api/cancellation.h"
#include "api/generation.h"
#include "llm/llm_metrics.h"
#include "llm/model_runner.h"
#include "api/sampling_params.h"
#include "llm/scheduler.h"
#include "llm/text_stream.h"
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
};

// One streamed piece of a request's result (api/generation.h's GenerationOutput). Every
// request gets one or more outputs; the last has finish_reason != kNone.
using RequestOutput = infera::GenerationOutput;
using OutputCallback = absl::AnyInvocable<void(RequestOutput)>;

struct GenerateRequest {
  std::vector<int32_t> prompt_token_ids;
  SamplingParams sampling;
  int priority = 0;
  std::shared_ptr<const CancellationToken> cancellation;  // may be null
  std::chrono::steady_clock::time_point arrival_time = std::chrono::steady_clock::now();
};

class LlmEngine {
 public:
  // Starts the engine thread. `tokenizer` outlives the engine.
  static absl::StatusOr<std::unique_ptr<LlmEngine>> Create(EngineOptions options,
                                                           std::unique_ptr<ModelRunner> runner,
                                                           const Tokenizer* tokenizer);
  ~LlmEngine();
  LlmEngine(const LlmEngine&) = delete;
  LlmEngine& operator=(const LlmEngine&) = delete;

  // Queues a request; `callback` receives its outputs on the engine thread. Errors
  // (returned, callback never called): see the class comment.
  absl::Status AddRequest(GenerateRequest request, OutputCallback callback);

  // Aborts every request (their callbacks get kAbort) and joins the thread. Idempotent.
  void Shutdown();

  LlmMetricsSnapshot Metrics() const { return metrics_.Snapshot(); }
  const EngineOptions& options() const { return options_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  struct Pending {
    std::unique_ptr<LlmRequest> request;
    OutputCallback callback;
  };
  struct Stream {
    OutputCallback callback;
    std::unique_ptr<TextStream> text;
    std::chrono::steady_clock::time_point arrival, scheduled, first_token, last_token;
    int64_t num_prompt_tokens = 0;
    int64_t num_cached_tokens = -1;  // -1: not yet scheduled
    int64_t num_output_tokens = 0;
    double queue_seconds = 0;  // arrival → first scheduled
    bool logprobs = false;
    std::shared_ptr<const CancellationToken> cancellation;
  };

  LlmEngine(EngineOptions options, std::unique_ptr<ModelRunner> runner, const Tokenizer* tokenizer);
  void Loop();
  void Step();
  void Admit(std::vector<Pending> incoming);
  void SweepCancelled();
  void Deliver(const std::vector<RequestUpdate>& updates);
  // Records `s` ending now with `reason` (metrics_).
  void RecordEnded(const Stream& s, FinishReason reason, std::chrono::steady_clock::time_point now);
  void End(RequestId id, FinishReason reason, absl::Status error, bool finish_in_scheduler);
  void RecordState();

  const EngineOptions options_;
  const std::unique_ptr<ModelRunner> runner_;
  const Tokenizer* const tokenizer_;
  LlmMetrics metrics_;

  // Engine thread only.
  KvCacheManager kv_;
  Scheduler scheduler_;
  std::unordered_map<RequestId, Stream> streams_;

  mutable absl::Mutex mu_;
  std::vector<Pending> inbox_ ABSL_GUARDED_BY(mu_);
  size_t num_queued_ ABSL_GUARDED_BY(mu_) = 0;  // inbox + waiting (for admission control)
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::thread thread_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLM_ENGINE_H_
