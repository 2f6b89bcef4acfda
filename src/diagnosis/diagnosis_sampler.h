// DiagnosisSampler: keeps, for every READY model version, a ring of per-second samples
// of its cumulative counters, and diagnoses a version over a recent window from them
// (docs/diagnosis.md).
//
// One thread for all models: every `period` it takes a snapshot of every READY version
// (ModelManager::Snapshots: relaxed loads; the hot path does nothing for it), makes each
// one's DiagnosisSample and appends it
// to that version's ring (`depth` samples). A version seen for the first time gets a
// zero sample dated at its counters' creation, so a window covers its whole life until
// the ring is older than the window. A reload (same name and version, new counters) is
// recognised by its counters' creation time and starts a new ring. Diagnose() takes a
// fresh sample of the version it names and subtracts the oldest sample of the ring that
// lies inside the window.
//
// Thread-safe. The destructor stops and joins the thread.
#ifndef INFERA_DIAGNOSIS_DIAGNOSIS_SAMPLER_H_
#define INFERA_DIAGNOSIS_DIAGNOSIS_SAMPLER_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "diagnosis/diagnosis_rules.h"
#include "diagnosis/window_summary.h"
#include "manager/model_manager.h"

namespace infera::diagnosis {

// Longest window a request may ask for, and the default one (seconds).
inline constexpr int kMaxWindowSeconds = 300;
inline constexpr int kDefaultWindowSeconds = 60;

class DiagnosisSampler {
 public:
  struct Options {
    std::chrono::milliseconds period{1000};
    size_t depth = kMaxWindowSeconds + 1;
    bool start_thread = true;
    std::function<void()> after_pass;  // called after each of the thread's passes (tests); may be empty
  };
  struct Answer {
    std::string model;
    int64_t version = 0;
    WindowSummary window;
    Diagnosis diagnosis;
  };

  // `manager` outlives the sampler.
  DiagnosisSampler(const ModelManager& manager, Options options);
  ~DiagnosisSampler();
  DiagnosisSampler(const DiagnosisSampler&) = delete;
  DiagnosisSampler& operator=(const DiagnosisSampler&) = delete;

  // The diagnosis of `name` (`version`, or the version an unversioned infer would get)
  // over the last `window_seconds` (1..kMaxWindowSeconds); an ensemble's is its slowest
  // step's. The manager's errors for an unknown or unready model; InvalidArgument for a
  // window out of range.
  absl::StatusOr<Answer> Diagnose(const std::string& name, std::optional<int64_t> version,
                                  int window_seconds) const ABSL_LOCKS_EXCLUDED(mu_);

  // One sampling pass over every READY version (the thread's body).
  void SampleAll() ABSL_LOCKS_EXCLUDED(mu_);

  // The facts of a version's config the rules use.
  static ModelFacts FactsOf(const ModelVersionSnapshot& version);
  // A version's counters (an LLM's engine figures from its generation metrics).
  static DiagnosisSample Sample(const ModelVersionSnapshot& version);

 private:
  struct Ring {
    std::chrono::steady_clock::time_point created{};  // the counters' creation
    std::deque<DiagnosisSample> samples;               // oldest first
  };
  using Key = std::pair<std::string, int64_t>;
  // Appends `sample` to `key`'s ring, starting the ring (zero sample) when new.
  void Append(const Key& key, std::chrono::steady_clock::time_point created, DiagnosisSample sample)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // Diagnose() at ensemble nesting `depth` (steps of steps, up to kMaxEnsembleDepth).
  absl::StatusOr<Answer> DiagnoseAt(const std::string& name, std::optional<int64_t> version, int window_seconds,
                                    int depth) const ABSL_LOCKS_EXCLUDED(mu_);
  static constexpr int kMaxEnsembleDepth = 4;

  const ModelManager& manager_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::map<Key, Ring> rings_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started last, joined by the destructor
};

}  // namespace infera::diagnosis

#endif  // INFERA_DIAGNOSIS_DIAGNOSIS_SAMPLER_H_
