// ModelVersion: one loaded, serving version of a model.
//
// Owns, in destruction order: the scheduler (which owns the instances and their worker
// threads), then the backend's LoadedModel. Request paths hold a handle while they use
// it (TF Serving's ServableHandle idea): a std::shared_ptr made by AcquireHandle(), which
// counts its holders so that a drain waits on a condition (AwaitNoHandles) instead of
// polling. A handle lets go of its reference before it is uncounted, so once the count
// is zero the manager holds the last reference. Unloading is: wait for the handles (up
// to the drain timeout; then CancelOutstandingWork() ends what still holds one), then
// Shutdown() — drain the scheduler, join its workers — then the manager drops its
// reference; so the last reference is never released on one of the version's own
// threads (a worker, an LLM's engine thread), which would make the version join itself.
//
// Request path: Infer() validates against the config (a bad request fails here, before
// it costs a queue slot), queues on the scheduler; a worker then calls RunBatch(), which
// executes on the backend instance, checks the outputs against the config, splits them
// per request, answers requested classifications (classification.h, with the label files
// read at load) and completes each callback. A batch of several requests that the
// backend refuses with InvalidArgument is rerun one request at a time, so a bad request
// fails alone (docs/scheduling.md, "Batch isolation").
//
// Thread-safe.
#ifndef INFERA_MANAGER_MODEL_VERSION_H_
#define INFERA_MANAGER_MODEL_VERSION_H_

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/infer_request.h"
#include "backend/backend.h"
#include "backend/load_timings.h"
#include "absl/synchronization/mutex.h"
#include "manager/classification.h"
#include "manager/model_statistics.h"
#include "metrics/server_metrics.h"
#include "model_config.pb.h"
#include "scheduling/scheduler.h"

namespace infera {

class ModelVersion {
 public:
  struct Options {
    std::shared_ptr<const inference::ModelConfig> config;  // validated
    int64_t version = 0;
    std::filesystem::path model_dir;
    Backend* backend = nullptr;  // outlives the version
    // Intra-op threads per instance unless the config says otherwise (the manager
    // divides the cores among all instances of all models).
    int default_intra_op_threads = 1;
    size_t max_queue_size = 1024;  // bounds every queue the config leaves unbounded
    ServerMetrics* metrics = nullptr;  // null: no Prometheus series
  };

  // How Load() runs and reports its steps (start-up loads: docs/cold_start.md).
  struct LoadHooks {
    // Runs independent tasks (one per instance: its creation, then its warm-up) and
    // returns when all are done — at start-up LoadPool::RunAll, so that the instances
    // of one version are created and warmed in parallel. Unset: one after the other on
    // the calling thread. `parallel_threads`: at most how many run at once.
    std::function<void(std::vector<std::function<void()>>)> run_parallel;
    int parallel_threads = 1;
    LoadTimings* timings = nullptr;  // receives the load's stages (load_timings.h); may be null
  };

  // Loads the backend model, creates every instance, runs the config's warmup on each,
  // and starts the scheduler. Errors name the model, version and failing step; with
  // `run_parallel` they are the ones the sequential order would have met first (the
  // lowest failing instance; for warm-up the lowest failing sample, then instance).
  static absl::StatusOr<std::shared_ptr<ModelVersion>> Load(Options options, const LoadHooks& hooks);
  static absl::StatusOr<std::shared_ptr<ModelVersion>> Load(Options options);  // no hooks

  // A version with no backend instance whose requests `scheduler` runs whole (an
  // ensemble: ensemble/ensemble_scheduler.h). Infer() validates against the config as
  // for any model; on success the scheduler answers every config output and the version
  // selects the requested ones, applies classification and records the request in its
  // statistics (queue 0, compute = end to end). `options.backend` is unused.
  static absl::StatusOr<std::shared_ptr<ModelVersion>> CreateComposite(Options options,
                                                                       std::unique_ptr<Scheduler> scheduler);

  ~ModelVersion();
  ModelVersion(const ModelVersion&) = delete;
  ModelVersion& operator=(const ModelVersion&) = delete;

  const inference::ModelConfig& config() const { return *config_; }
  const std::string& name() const { return config_->name(); }
  int64_t version() const { return version_; }
  const ModelStatistics& statistics() const { return statistics_; }
  // For frontends that serve requests outside Infer() (the OpenAI routes) to record them.
  ModelStatistics& statistics() { return statistics_; }
  // The backend's loaded model, for runtime-specific frontends (e.g. an LLM engine
  // behind the OpenAI API); callers downcast to the backend's type they know.
  LoadedModel& loaded_model() const { return *loaded_; }
  size_t QueueDepth() const;
  // The scheduler's cumulative load (busy time over all instances, instance count).
  Scheduler::Load CumulativeLoad() const;

  // Runs `request` (model name/version already resolved). `callback` is called exactly
  // once: synchronously with InvalidArgument for a request that breaks the config or
  // with a rejection, else later from a worker thread.
  void Infer(InferRequest request, InferCallback callback);

  // Updates the version's load gauges (queue depth, in flight, busy and load ratios)
  // from what happened since the previous call. Called at scrape time.
  void RefreshMetrics();

  // Requests accepted by Infer() and not yet completed.
  int64_t InFlight() const { return inflight_.load(std::memory_order_relaxed); }

  // Rejects new requests, finishes queued and running ones, joins the workers.
  // Idempotent. IMPORTANT: not from inside an Infer callback.
  void Shutdown();

  // A counted handle to `version` for one user (a request path): it keeps the version
  // alive, and AwaitNoHandles() waits until every handle is gone. Copies share the count.
  static std::shared_ptr<ModelVersion> AcquireHandle(const std::shared_ptr<ModelVersion>& version);
  // Handles alive now.
  int64_t NumHandles() const;
  // Waits until no handle is alive or `deadline` passes; true when none is.
  bool AwaitNoHandles(absl::Time deadline) const;
  // Ends the loaded model's work outside the scheduler (LoadedModel::CancelOutstandingWork,
  // e.g. an LLM's generations), so that their handles let go. For a drain whose time is up.
  void CancelOutstandingWork();

 private:
  explicit ModelVersion(Options options);
  // A version with its outputs' classification labels loaded (label_filename); the
  // load error names the model, version and file. Shared by Load and CreateComposite.
  static absl::StatusOr<std::shared_ptr<ModelVersion>> NewWithLabels(const Options& options);

  // Runs a batch the scheduler formed and answers each of its requests. IMPORTANT: when
  // a batch of several requests fails with InvalidArgument (an input's fault, see
  // backend.h) it reruns each request alone (RunEachAlone) so that one bad request
  // fails only itself; any other error fails the whole batch.
  void RunBatch(ModelInstance& instance, ScheduledRequests requests);
  // One backend execution of `requests` as one batch: gather (moving the inputs of a
  // single request, copying those of several, so each can still run alone), Execute,
  // check the outputs against the config, split them per request.
  struct BatchExecution;
  BatchExecution ExecuteBatch(ModelInstance& instance, ScheduledRequests& requests) const;
  // Runs each of `requests` (a failed batch, which left the queue at `batch_start`) as
  // an execution of its own, in order, on the same instance; a request cancelled or
  // past its queue deadline by then is answered Cancelled / DeadlineExceeded instead.
  void RunEachAlone(ModelInstance& instance, ScheduledRequests requests,
                    std::chrono::steady_clock::time_point batch_start);
  // Answers `requests` from `execution` and records it in the statistics; `left_queue`
  // ends each request's queue time.
  void Complete(ScheduledRequests& requests, BatchExecution& execution,
                std::chrono::steady_clock::time_point left_queue);
  // The success path of a composite version's request (see CreateComposite).
  absl::StatusOr<InferResponse> CompleteComposite(InferResponse response, const std::vector<RequestedOutput>& requested,
                                                  int64_t batch_size, uint64_t request_ns);

  struct HandleCount {
    mutable absl::Mutex mu;
    int64_t count ABSL_GUARDED_BY(mu) = 0;
  };
  class Handle;

  // Shared with every handle: it outlives the version when a handle outlives the drain.
  const std::shared_ptr<HandleCount> handles_ = std::make_shared<HandleCount>();
  const std::shared_ptr<const inference::ModelConfig> config_;
  const int64_t version_;
  OutputLabels labels_;  // set by Load(), immutable after
  bool composite_ = false;  // set by CreateComposite(), immutable after
  ModelStatistics statistics_;
  std::atomic<int64_t> inflight_{0};
  std::atomic<uint64_t> arrivals_{0};
  // The previous RefreshMetrics() sample.
  struct LoadSample {
    std::chrono::steady_clock::time_point time{};
    uint64_t arrivals = 0;
    Scheduler::Load load;
  };
  absl::Mutex sample_mu_;
  LoadSample last_sample_ ABSL_GUARDED_BY(sample_mu_);
  std::unique_ptr<LoadedModel> loaded_;
  std::unique_ptr<Scheduler> scheduler_;  // declared last: destroyed first
};

}  // namespace infera

#endif  // INFERA_MANAGER_MODEL_VERSION_H_
