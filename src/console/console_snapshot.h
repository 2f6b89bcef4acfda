// StatsWindow: turns per-tick readings of the server's own statistics into the web
// console's event JSON (docs/console.md, "Wire contract").
//
// Readings are cumulative (ModelStatistics snapshots, latency histograms, LLM engine
// counters). StatsWindow keeps, per model version, the samples of the last
// `quantile_window` and derives: rates over the last interval (this sample minus the
// previous one), mean queue / compute stage times over that interval, and P50/P99 over
// the window (histogram now minus histogram at the window's start). A version that
// disappears (unloaded, reloaded) has its samples dropped at the next Render().
//
//   StatsWindow window;
//   std::string json = window.Render(now, wall_ms, server, readings);
//
// Not thread-safe: one owner (ConsoleStream's ticker thread).
#ifndef INFERA_CONSOLE_CONSOLE_SNAPSHOT_H_
#define INFERA_CONSOLE_CONSOLE_SNAPSHOT_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/generation_metrics.h"
#include "manager/model_manager.h"
#include "manager/model_statistics.h"

namespace infera {

struct ConsoleServerReading {
  std::string version;
  bool ready = false;
  std::string control_mode;  // "none" | "poll" | "explicit"
  bool admin_token_required = false;
  int subscribers = 0;
};

// One row of the repository index, with the figures of a READY version.
struct ConsoleModelReading {
  struct Instances {
    std::string name;
    std::string kind;  // "KIND_CPU", ...
    int count = 1;
  };
  std::string name;
  std::optional<int64_t> version;
  std::string state;  // ModelStateName
  std::string reason;
  std::string backend;
  std::optional<CanaryStatus> canary;
  // Only for a READY version (serving = true):
  bool serving = false;
  int64_t max_batch_size = 0;
  size_t queue_depth = 0;
  std::vector<Instances> instances;
  StatisticsSnapshot stats;
  std::vector<uint64_t> latency;  // LatencyHistogram::Snapshot()
  std::optional<GenerationMetrics> llm;
};

class StatsWindow {
 public:
  explicit StatsWindow(std::chrono::milliseconds quantile_window = std::chrono::seconds(10))
      : quantile_window_(quantile_window) {}

  // Records `models` as sampled at `now` and renders one event's JSON (one line).
  // (ConsoleStream adds the subscriber's "interval_ms" in front.)
  std::string Render(std::chrono::steady_clock::time_point now, int64_t wall_ms,
                     const ConsoleServerReading& server, const std::vector<ConsoleModelReading>& models);

 private:
  struct Sample {
    std::chrono::steady_clock::time_point time;
    StatisticsSnapshot stats;
    std::vector<uint64_t> latency;
    uint64_t generation_tokens = 0;
    std::vector<uint64_t> ttft, tpot;  // LLM histogram bucket counts
  };
  std::chrono::milliseconds quantile_window_;
  std::map<std::string, std::deque<Sample>> samples_;  // key: "name/version"
};

}  // namespace infera

#endif  // INFERA_CONSOLE_CONSOLE_SNAPSHOT_H_
