// WindowSummary: what one model version did over a window, from two cumulative samples
// of its counters (the diagnosis' input; docs/diagnosis.md).
//
// DiagnosisSample is a point-in-time copy of everything cumulative the diagnosis reads:
// the version's ModelStatistics snapshot, its scheduler's load and, for an LLM, the
// engine's counters. Summarize() subtracts two of them and turns the differences into
// per-request means, shares, rates and ratios. Pure functions, no I/O.
//
// Thread-safe (pure functions of their arguments).
#ifndef INFERA_DIAGNOSIS_WINDOW_SUMMARY_H_
#define INFERA_DIAGNOSIS_WINDOW_SUMMARY_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>

#include "manager/model_statistics.h"
#include "scheduling/scheduler.h"

namespace infera::diagnosis {

// An LLM engine's counters (cumulative ones and current gauges).
struct LlmSample {
  uint64_t preemptions = 0;        // cumulative
  uint64_t generation_tokens = 0;  // cumulative
  double kv_cache_usage = 0;       // 0..1, now
  int64_t num_running = 0;         // now
  int64_t num_waiting = 0;         // now
  int64_t max_num_seqs = 0;        // the engine's limit
};

struct DiagnosisSample {
  std::chrono::steady_clock::time_point time{};
  StatisticsSnapshot stats;
  Scheduler::Load load;
  std::optional<LlmSample> llm;
};

// What the config says (the rules' actions name these settings).
struct ModelFacts {
  int64_t max_batch_size = 0;
  bool dynamic_batching = false;
  uint64_t max_queue_delay_us = 0;
  bool llm = false;
};

// A stage's mean per request (µs) and its share of server time.
struct StageFigure {
  double mean_us = 0;
  double share = 0;  // of server time (write: of server time + write)
  uint64_t count = 0;
};

struct WindowSummary {
  ModelFacts facts;
  double seconds = 0;
  uint64_t requests = 0;  // successes + failures
  uint64_t successes = 0;
  double rate_per_second = 0;     // requests / seconds
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
  double utilisation = 0;  // busy / (seconds × instances), 0..1
  // Failures by reason and the client's signals.
  StatisticsSnapshot::Failures failures;
  uint64_t write_failed = 0;  // answers whose client was gone
  // LLM (set for an LLM version).
  struct Llm {
    uint64_t preemptions = 0;
    double tokens_per_second = 0;
    double kv_cache_usage = 0;
    int64_t num_running = 0;
    int64_t num_waiting = 0;
    int64_t max_num_seqs = 0;
  };
  std::optional<Llm> llm;
};

// The window from `older` to `newer` (`older` null: from zero counters at
// `history_start`, the version's counters' creation).
WindowSummary Summarize(const DiagnosisSample* older, const DiagnosisSample& newer,
                        std::chrono::steady_clock::time_point history_start, const ModelFacts& facts);

}  // namespace infera::diagnosis

#endif  // INFERA_DIAGNOSIS_WINDOW_SUMMARY_H_
