// WindowSummary: what one model version did over a window, from the cumulative samples
// of its counters taken in it (the diagnosis' input; docs/diagnosis.md).
//
// DiagnosisSample is a point-in-time copy of everything cumulative the diagnosis reads:
// the version's ModelStatistics snapshot, its scheduler's load and, for an LLM, the
// engine's metrics. Summarize() subtracts the window's first sample from its last and
// turns the differences into per-request means, shares, rates and ratios; the samples
// in between say which seconds carried traffic, so that rates and utilisation are
// judged on those seconds (a 5 s burst in a 60 s window is a burst, not 8 % load) and
// the engine's gauges (KV-cache use, running and waiting sequences) on their peaks and
// means while traffic ran, not on the idle moment the diagnosis was asked.
// Pure functions, no I/O.
//
// Thread-safe (pure functions of their arguments).
#ifndef INFERA_DIAGNOSIS_WINDOW_SUMMARY_H_
#define INFERA_DIAGNOSIS_WINDOW_SUMMARY_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/generation_metrics.h"
#include "manager/model_statistics.h"
#include "scheduling/scheduler.h"

namespace infera::diagnosis {

struct DiagnosisSample {
  std::chrono::steady_clock::time_point time{};
  StatisticsSnapshot stats;
  Scheduler::Load load;
  int64_t in_flight = 0;  // requests in the version now (a long one carries traffic)
  // An LLM's engine: cumulative counters and histograms, current gauges.
  std::optional<GenerationMetrics> llm;
};

// What the config says (the rules' actions name these settings).
struct ModelFacts {
  int64_t max_batch_size = 0;
  bool dynamic_batching = false;
  uint64_t max_queue_delay_us = 0;
  bool llm = false;
  // An LLM's engine parameters (config parameters; 0 / empty when not set).
  int64_t max_num_batched_tokens = 0;
  std::string kv_cache_memory = "";  // as written, e.g. "64MiB"
  std::string kv_cache_dtype = "";   // fp32 (default), bf16, fp16
  bool prefix_caching = false;
  // An ensemble's steps (model, version; -1 = the latest), in config order.
  struct Step {
    std::string model;
    int64_t version = -1;
  };
  std::vector<Step> ensemble_steps;
};

// A stage's mean per request (µs) and its share of server time.
struct StageFigure {
  double mean_us = 0;
  double share = 0;  // of server time (write: of server time + write)
  uint64_t count = 0;
};

struct WindowSummary {
  ModelFacts facts;
  double seconds = 0;          // the span the window covered
  double traffic_seconds = 0;  // its seconds that carried traffic (see Summarize)
  uint64_t requests = 0;  // successes + failures
  uint64_t successes = 0;
  double rate_per_second = 0;     // requests / traffic seconds
  double mean_latency_us = 0;     // successful requests, end to end in the server
  double concurrency = 0;         // Little's law: rate × mean latency
  // Per-request stage means. Server time = decode + queue + compute + encode.
  StageFigure decode, queue, compute_input, compute_infer, compute_output, encode, write;
  double server_us = 0;
  double compute_share = 0;        // input + infer + output
  double serialisation_share = 0;  // decode + encode
  // Executions by batch rows (only sizes that ran), and their mean.
  std::map<uint64_t, uint64_t> batch_sizes;
  uint64_t executions = 0;
  uint64_t rows = 0;
  double mean_batch_size = 0;  // rows / executions (0 without executions)
  // Instances.
  size_t instances = 0;
  double busy_seconds = 0;
  double utilisation = 0;  // busy / (traffic seconds × instances), 0..1
  // Failures by reason and the client's signals.
  StatisticsSnapshot::Failures failures;
  uint64_t write_failed = 0;  // answers whose client was gone
  // LLM (set for an LLM version): the engine's own signals. Latencies are per finished
  // generation (means from the histograms' sums, p90 interpolated in their buckets);
  // gauges are the peak and mean over the samples that carried traffic.
  struct Llm {
    uint64_t preemptions = 0;
    uint64_t finished = 0;               // generations ended (any reason)
    double tokens_per_second = 0;        // generated, per traffic second
    double prompt_tokens_per_request = 0;
    double output_tokens_per_request = 0;
    double ttft_ms = 0, ttft_p90_ms = 0;  // time to first token
    double tpot_ms = 0, tpot_p90_ms = 0;  // time per output token (inter-token latency)
    double queue_ms = 0;                  // arrival -> first scheduled in the engine
    double e2e_ms = 0;                    // arrival -> last token
    double prefill_ms = 0;                // TTFT - queue: computing the prompt
    double decode_ms = 0;                 // e2e - TTFT: generating the rest
    double kv_cache_usage_peak = 0, kv_cache_usage_mean = 0;  // 0..1
    int64_t num_running_peak = 0;
    double num_running_mean = 0;
    int64_t num_waiting_peak = 0;
    double num_waiting_mean = 0;
    int64_t max_num_seqs = 0;
    // The gauges when the window ended.
    double kv_cache_usage = 0;
    int64_t num_running = 0;
    int64_t num_waiting = 0;
  };
  std::optional<Llm> llm;
};

// Whether the stretch from sample `a` to the next sample `b` carried traffic: a
// request ended or ran (busy time grew), one was in the version at either end, or an
// LLM engine generated tokens or held sequences.
bool CarriedTraffic(const DiagnosisSample& a, const DiagnosisSample& b);

// The window from `older` to `newer` (`older` null: from zero counters at
// `history_start`, the version's counters' creation). `between`: the samples taken
// between them, oldest first (without them the whole window counts as traffic when
// anything happened in it).
WindowSummary Summarize(const DiagnosisSample* older, const DiagnosisSample& newer,
                        std::chrono::steady_clock::time_point history_start, const ModelFacts& facts,
                        const std::vector<const DiagnosisSample*>& between = {});

}  // namespace infera::diagnosis

#endif  // INFERA_DIAGNOSIS_WINDOW_SUMMARY_H_
