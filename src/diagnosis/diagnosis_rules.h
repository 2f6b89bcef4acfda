// Diagnose: the bottleneck rules, a pure function from a window's summary to a
// diagnosis — the class, the figures that decided it and actions with their expected
// effect computed from those figures. The rules, their order and thresholds are in
// docs/diagnosis.md; every threshold is a constant below.
//
// Thread-safe (a pure function).
#ifndef INFERA_DIAGNOSIS_DIAGNOSIS_RULES_H_
#define INFERA_DIAGNOSIS_DIAGNOSIS_RULES_H_

#include <string>
#include <string_view>
#include <vector>

#include "diagnosis/window_summary.h"

namespace infera::diagnosis {

// Fewer requests than this in the window: "idle" (too little to judge); for an LLM,
// whose requests are long generations, fewer than kMinLlmRequests.
inline constexpr uint64_t kMinRequests = 20;
inline constexpr uint64_t kMinLlmRequests = 8;
// kv_cache_bound (LLM): KV-cache use at its peak at or above this with sequences waiting
// (or any preemption). max_num_seqs is worth raising only below kKvRoomForMore.
inline constexpr double kKvCacheFull = 0.90;
inline constexpr double kKvRoomForMore = 0.50;
// LLM queueing / decode_bound: the engine queue (arrival -> first scheduled) at or
// above kQueueShare of the end-to-end time and at least kMinEngineQueueMs (a tiny model's
// generations take milliseconds: a wake-up of the engine loop is no bottleneck). prefill_bound: TTFT minus the queue (the
// prompt's computation) at or above kPrefillShare of the end-to-end time.
inline constexpr double kPrefillShare = 0.40;
inline constexpr double kMinEngineQueueMs = 5.0;
// Adding instances is offered only at this utilisation (over the seconds with traffic)
// or above, and instances are called saturated only at kBusyUtilisation or above
// (CheckConsistency enforces both).
inline constexpr double kAddInstanceUtilisation = 0.50;
// client_bound: disconnects (write failures + cancellations) per request at or above
// kClientGoneRatio; or slow reads: write time's share of server + write time at or
// above kWriteShare (the client takes at least as long to read the answer as the server
// took to produce it) while writing takes at least kWriteOverEncode times as long as
// encoding the body did (a large body on a fast link writes about as fast as it was
// encoded: that is serialisation, not the client).
inline constexpr double kClientGoneRatio = 0.05;
inline constexpr double kWriteShare = 0.50;
inline constexpr double kWriteOverEncode = 2.0;
// queueing: the share of server time spent waiting for a free instance (the queue wait
// beyond the batcher's max_queue_delay) at or above kQueueShare; or rejections (queue
// full) per request at or above kRejectedRatio. compute_bound suggests more instances
// for throughput at utilisation kBusyUtilisation and above.
inline constexpr double kQueueShare = 0.30;
inline constexpr double kBusyUtilisation = 0.80;
inline constexpr double kRejectedRatio = 0.01;
// batching_ineffective: mean batch at or below kSmallBatch at a rate at or above
// kBatchingRate; a queue share of kQueueShare or more that is the batcher's delay;
// without dynamic batching, utilisation at or above kBatchWorthUtilisation.
inline constexpr double kSmallBatch = 1.5;
inline constexpr double kBatchingRate = 20.0;
inline constexpr double kBatchWorthUtilisation = 0.50;
// Below this concurrency (Little's law) clients send one request at a time.
inline constexpr double kSerialConcurrency = 1.2;
// serialisation_bound: decode + encode share of server time at or above.
inline constexpr double kSerialisationShare = 0.30;
// compute_bound: compute share of server time at or above.
inline constexpr double kComputeShare = 0.50;

struct Evidence {
  std::string name;
  double value = 0;
  std::string unit;  // "ratio", "us", "requests", "req/s", "rows", "tokens/s", ...
  std::string detail;
};

// What an action changes, where a figure could contradict it (CheckConsistency).
enum class ActionKind { kOther, kAddInstances, kRaiseMaxNumSeqs, kKeepInstances };

struct Action {
  std::string action;
  std::string expected_effect;
  ActionKind kind = ActionKind::kOther;
};

// One step of an ensemble as its own diagnosis judged it over the same window.
struct StepVerdict {
  std::string model;
  int64_t version = 0;
  uint64_t requests = 0;
  double mean_latency_us = 0;
  std::string bottleneck_class;
};

struct Diagnosis {
  // Tensor models: "idle", "client_bound", "queueing", "batching_ineffective",
  // "serialisation_bound", "compute_bound", "healthy". LLMs: "idle", "kv_cache_bound",
  // "client_bound", "decode_bound", "queueing", "prefill_bound", "healthy". An
  // ensemble: its slowest step's class.
  std::string bottleneck_class;
  std::string summary;
  std::vector<Evidence> evidence;
  std::vector<Action> actions;
  // The summary says the instances are saturated (CheckConsistency checks the figure).
  bool claims_saturation = false;
  // An ensemble's steps and which one decided the verdict (empty otherwise).
  std::vector<StepVerdict> steps;
  std::string slowest_step;
};

// The diagnosis of a window: an LLM by its engine's signals, any other model by its
// stages, instances and batches. Never returns a diagnosis CheckConsistency faults.
Diagnosis Diagnose(const WindowSummary& window);

// An ensemble judged by its slowest step: `steps` are its steps' verdicts over the same
// window, `slowest` the diagnosis of the one with the longest mean latency (its index
// in `steps`). With too few requests the ensemble is idle.
Diagnosis DiagnoseEnsemble(const WindowSummary& ensemble, std::vector<StepVerdict> steps, size_t slowest,
                           const Diagnosis& slowest_diagnosis);

// The ways `d` contradicts a figure of `w` (empty: none): instances added at a
// utilisation below kAddInstanceUtilisation or to an LLM (one engine serves all its
// instances), "saturated" below kBusyUtilisation, "keep the instance count" at
// kBusyUtilisation or above, max_num_seqs raised with the KV cache full, "healthy" or
// "idle" with preemptions.
std::vector<std::string> CheckConsistency(const WindowSummary& w, const Diagnosis& d);

// `value` with `digits` decimals (the rules' and the table's one number format).
std::string Fixed(double value, int digits);
// A ratio as a percentage with no decimals ("97 %").
std::string Percent(double ratio);

}  // namespace infera::diagnosis

#endif  // INFERA_DIAGNOSIS_DIAGNOSIS_RULES_H_
