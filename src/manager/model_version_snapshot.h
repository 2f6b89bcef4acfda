// ModelVersionSnapshot: what a reader that only looks at a serving version (the
// statistics extension, the diagnosis sampler, the web console, the metrics scrape) gets
// instead of the version itself — a copy taken at one moment, holding nothing alive but
// the (immutable, shared) config. Taken by ModelVersion::Snapshot(), handed out by
// ModelManager::Snapshots().
//
// A value type; thread-safe to copy.
#ifndef INFERA_MANAGER_MODEL_VERSION_SNAPSHOT_H_
#define INFERA_MANAGER_MODEL_VERSION_SNAPSHOT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/generation_metrics.h"
#include "manager/model_statistics.h"
#include "model_config.pb.h"
#include "scheduling/scheduler.h"

namespace infera {

struct ModelVersionSnapshot {
  std::string name;
  int64_t version = 0;
  std::shared_ptr<const inference::ModelConfig> config;  // the config the version serves
  std::chrono::steady_clock::time_point taken{};
  // When the version's counters started (all zero then): the start of its history.
  std::chrono::steady_clock::time_point created{};
  StatisticsSnapshot statistics;
  std::vector<uint64_t> latency;  // LatencyHistogram::Snapshot(): cumulative bucket counts
  Scheduler::Load load;           // cumulative busy time, executions, instances
  size_t queue_depth = 0;
  int64_t in_flight = 0;
  // An LLM's engine (its text_generator()): counters and histograms; unset otherwise.
  std::optional<GenerationMetrics> generation;
};

}  // namespace infera

#endif  // INFERA_MANAGER_MODEL_VERSION_SNAPSHOT_H_
