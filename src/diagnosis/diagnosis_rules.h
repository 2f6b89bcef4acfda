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

// Fewer requests than this in the window: "idle" (too little to judge).
inline constexpr uint64_t kMinRequests = 20;
// memory_bound (LLM): KV-cache use at or above this with sequences waiting.
inline constexpr double kKvCacheFull = 0.90;
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

struct Action {
  std::string action;
  std::string expected_effect;
};

struct Diagnosis {
  // "idle", "memory_bound", "client_bound", "queueing", "batching_ineffective",
  // "serialisation_bound", "compute_bound", "healthy".
  std::string bottleneck_class;
  std::string summary;
  std::vector<Evidence> evidence;
  std::vector<Action> actions;
};

Diagnosis Diagnose(const WindowSummary& window);

// `value` with `digits` decimals (the rules' and the table's one number format).
std::string Fixed(double value, int digits);
// A ratio as a percentage with no decimals ("97 %").
std::string Percent(double ratio);

}  // namespace infera::diagnosis

#endif  // INFERA_DIAGNOSIS_DIAGNOSIS_RULES_H_
