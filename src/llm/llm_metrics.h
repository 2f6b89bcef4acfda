// LlmMetrics: what the engine measures. Every Record*() updates an in-process snapshot
// (Snapshot(): the engine's tests, debugging) and, when the model has them, its
// Prometheus series (llm_metrics_series.h; names in docs/metrics.md, after vLLM's).
//
// Histograms (seconds, vLLM's bounds: metrics/llm_metrics.h): time to first token,
// inter-token latency, end-to-end request latency, queue time (arrival → first
// scheduled). Counters: prompt and generation tokens, finished requests by reason,
// preemptions, prefix-cache queries and hits (in tokens); structured output's time per
// constrained token in its grammar (histogram) and constrained requests by kind. Gauges: running and waiting
// requests, KV-cache usage (fraction of blocks in use). The Prometheus series add
// per-request prompt/generation token and prefill/decode/inference time histograms (no
// snapshot counterpart).
//
// Thread-safe: the engine thread records the scheduling side (queue time, preemptions,
// state after each step), the output thread the tokens and ended requests (one short lock
// per call; the Prometheus side is lock-free); anyone may take a Snapshot().
#ifndef INFERA_LLM_LLM_METRICS_H_
#define INFERA_LLM_LLM_METRICS_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/generation_metrics.h"
#include "llm/llm_metrics_series.h"
#include "llm/llm_request.h"

namespace infera::llm {

// The snapshot type is the transport-neutral api/generation_metrics.h's.
using infera::Histogram;
using LlmMetricsSnapshot = infera::GenerationMetrics;

struct EndedRequest {
  FinishReason reason = FinishReason::kNone;
  double e2e_seconds = 0;  // arrival → ended
  int64_t prompt_tokens = 0;
  int64_t generation_tokens = 0;
  // When it produced a token (generation_tokens > 0): first scheduled → first token,
  // first token → last token, first scheduled → last token (vLLM's prefill, decode and
  // inference times; preemptions count where they happened).
  double prefill_seconds = 0, decode_seconds = 0, inference_seconds = 0;
};

class LlmMetrics {
 public:
  // `series`: the model's Prometheus series; null records only the snapshot.
  explicit LlmMetrics(std::shared_ptr<LlmMetricsSeries> series = nullptr);
  // Takes this engine's share out of the shared gauges.
  ~LlmMetrics();
  LlmMetrics(const LlmMetrics&) = delete;
  LlmMetrics& operator=(const LlmMetrics&) = delete;

  LlmMetricsSnapshot Snapshot() const;

  void SetKvCacheShape(int64_t num_blocks, int64_t block_size);
  // A request's first step (its wait in the queue).
  void RecordScheduled(double queue_seconds);
  // Each output token: the first one carries TTFT and the prompt's size, later ones
  // the gap since the previous token.
  void RecordFirstToken(double ttft_seconds, int64_t prompt_tokens);
  void RecordNextToken(double inter_token_seconds);
  // A request ended (any reason, aborts and errors included).
  void RecordFinished(const EndedRequest& ended);
  void RecordPreemptions(int64_t n);
  // One speculative verification of a sequence: drafts scheduled, accepted, and tokens
  // emitted (accepted + 1).
  void RecordSpecDecode(int64_t num_draft, int64_t num_accepted, int64_t num_emitted);
  // Structured output: one constrained token's time in its grammar (engine thread), a
  // request admitted with a grammar from `kind` (SamplingParams::constraint_kind).
  void RecordGrammarTime(double seconds);
  void RecordConstrainedRequest(std::string_view kind);
  // What those recorded (for tests; the Prometheus series are the operators').
  struct GrammarStats {
    Histogram mask_time;  // seconds per constrained token
    uint64_t constrained_requests = 0;
  };
  GrammarStats grammar_stats() const;
  // The engine's state after a step: cumulative prefix-cache counters (tokens) and the
  // current gauges.
  void RecordState(int64_t prefix_queries_total, int64_t prefix_hits_total, int64_t running, int64_t waiting,
                   int64_t used_blocks);

 private:
  const std::shared_ptr<LlmMetricsSeries> series_;
  mutable absl::Mutex mu_;
  LlmMetricsSnapshot data_ ABSL_GUARDED_BY(mu_);
  GrammarStats grammar_ ABSL_GUARDED_BY(mu_);
  // This engine's last contributions to the shared gauges (engine thread only).
  int64_t last_running_ = 0, last_waiting_ = 0, last_used_blocks_ = 0;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLM_METRICS_H_
