// LoadTimings: where the time of one model version's load went, for the load log line,
// the start-up summary and docs/cold_start.md.
//
// A backend reports its own stages (ModelLoadContext::timings, e.g. the pytorch
// backend's "read", "deserialise", "optimise"); ModelVersion::Load records the whole
// Backend::Load call and each instance's creation and warm-up. Durations are wall time
// (steady_clock) on the thread that ran the stage.
//
// Not thread-safe: one load fills it. Instances that are created or warmed in parallel
// write their own `instances[i]` element only (the vector is sized before they start).
#ifndef INFERA_BACKEND_LOAD_TIMINGS_H_
#define INFERA_BACKEND_LOAD_TIMINGS_H_

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace infera {

struct LoadTimings {
  using Duration = std::chrono::steady_clock::duration;
  struct Instance {
    Duration create{};
    Duration warmup{};
  };

  // The backend's stages in the order they ran, e.g. {"read", 9 ms}.
  std::vector<std::pair<std::string, Duration>> stages;
  Duration backend_load{};  // the whole Backend::Load (stages included)
  std::vector<Instance> instances;
  int instance_threads = 1;  // threads that created / warmed the instances at once (at most)
  Duration total{};          // the version's whole load, labels and scheduler included

  void AddStage(std::string name, Duration duration) { stages.emplace_back(std::move(name), duration); }
  Duration InstanceCreateSum() const;
  Duration InstanceWarmupSum() const;

  // The log fragment, e.g. "read 9 ms, deserialise 61 ms, optimise 412 ms, 2 instances:
  // create 0 ms, warm-up 392 ms (per instance 203 / 189 ms, 2 at a time)". A backend
  // without stages of its own shows "backend load N ms"; a stage below 1 ms shows 0 ms.
  std::string Describe() const;
};

// Milliseconds, rounded to the nearest.
long long RoundedMillis(LoadTimings::Duration duration);

// Times a scope: adds the wall time from construction to destruction to `*out` (if set).
class ScopedLoadTimer {
 public:
  explicit ScopedLoadTimer(LoadTimings::Duration* out)
      : out_(out), start_(std::chrono::steady_clock::now()) {}
  ~ScopedLoadTimer() {
    if (out_ != nullptr) *out_ += std::chrono::steady_clock::now() - start_;
  }
  ScopedLoadTimer(const ScopedLoadTimer&) = delete;
  ScopedLoadTimer& operator=(const ScopedLoadTimer&) = delete;

 private:
  LoadTimings::Duration* const out_;
  const std::chrono::steady_clock::time_point start_;
};

}  // namespace infera

#endif  // INFERA_BACKEND_LOAD_TIMINGS_H_
