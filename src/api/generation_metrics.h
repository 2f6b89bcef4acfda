// GenerationMetrics: a snapshot of a text-generation engine's counters and latency
// histograms (vLLM's metrics, docs/metrics.md), as the diagnosis, the console and the
// Prometheus series read them. Plain data; the engine (llm/llm_metrics.h) records it.
//
// A value type; thread-safe to copy.
#ifndef INFERA_API_GENERATION_METRICS_H_
#define INFERA_API_GENERATION_METRICS_H_

#include <cstdint>
#include <vector>

namespace infera {

struct Histogram {
  std::vector<double> bounds;    // upper bounds (seconds), ascending; +Inf implicit
  std::vector<uint64_t> counts;  // bounds.size() + 1 buckets (not cumulative)
  double sum = 0;
  uint64_t count = 0;

  static Histogram WithBounds(std::vector<double> bounds);
  void Observe(double value);
  // Linear interpolation inside the bucket that holds quantile q (0..1).
  double Quantile(double q) const;
};

struct GenerationMetrics {
  Histogram time_to_first_token;
  Histogram inter_token_latency;
  Histogram e2e_request_latency;
  Histogram queue_time;
  uint64_t prompt_tokens = 0;
  uint64_t generation_tokens = 0;
  uint64_t requests_finished_stop = 0;
  uint64_t requests_finished_length = 0;
  uint64_t requests_aborted = 0;
  uint64_t requests_failed = 0;
  uint64_t preemptions = 0;
  uint64_t prefix_cache_queries = 0;
  uint64_t prefix_cache_hits = 0;
  int64_t num_running = 0;
  int64_t num_waiting = 0;
  double kv_cache_usage = 0;
  int64_t num_kv_blocks = 0;
  int64_t block_size = 0;
  int64_t max_num_seqs = 0;  // the engine's limit on running sequences
  // Speculative decoding (vLLM's spec_decode counters): draft tokens verified, accepted,
  // and tokens emitted by verification steps (accepted + one sampled per step).
  uint64_t spec_decode_num_draft_tokens = 0;
  uint64_t spec_decode_num_accepted_tokens = 0;
  uint64_t spec_decode_num_emitted_tokens = 0;
};

}  // namespace infera

#endif  // INFERA_API_GENERATION_METRICS_H_
