// ModelVersion: one loaded, serving version of a model — the one request path of every
// model (docs/request_path.md).
//
// Owns, in destruction order: the scheduler (which owns the instances and their worker
// threads), then the backend's LoadedModel. Request paths hold a ModelHandle while they
// use it (model_handle.h: counted, so that a drain waits on a condition, AwaitNoHandles,
// instead of polling). Unloading is: wait for the handles (up to the drain deadline;
// then CancelOutstandingWork() ends what still holds one), then Shutdown(deadline) —
// drain the scheduler, join its workers — then the manager drops its reference; so the
// last reference is never released on one of the version's own threads (a worker, an
// LLM's engine thread), which would make the version join itself.
//
// Tensor requests: Infer() validates against the config (a bad request fails here,
// before it costs a queue slot), queues on the scheduler; a worker then calls RunBatch(),
// which answers requests cancelled or expired meanwhile, executes the rest on the backend
// instance with their ExecutionContext, checks the outputs against the config, splits
// them per request, answers requested classifications (classification.h, with the label
// files read at load) and completes each callback. A batch of several requests that the
// backend refuses with InvalidArgument is rerun one request at a time, so a bad request
// fails alone (docs/scheduling.md, "Batch isolation"). A decoupled model's requests go to
// ExecuteDecoupled with a ResponseSender each (decoupled_response_sink.h), which holds a
// handle to the version until the final response.
//
// Text generation: Generate() is the path of every generation of a model whose
// text_generator() is set (an LLM): it validates, counts the request, holds a handle
// until the final output and hands the caller the timings for its trace.
//
// Thread-safe.
#ifndef INFERA_MANAGER_MODEL_VERSION_H_
#define INFERA_MANAGER_MODEL_VERSION_H_

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "api/generation.h"
#include "api/infer_request.h"
#include "backend/backend.h"
#include "backend/load_timings.h"
#include "backend/text_generator.h"
#include "manager/classification.h"
#include "manager/model_handle.h"
#include "manager/model_statistics.h"
#include "manager/model_version_snapshot.h"
#include "manager/response_cache.h"
#include "metrics/server_metrics.h"
#include "model_config.pb.h"
#include "scheduling/scheduler.h"

namespace infera {

class ModelVersion : public std::enable_shared_from_this<ModelVersion> {
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
    // The server's response cache (docs/response_cache.md), used when the config enables
    // response_cache and the model is not decoupled; null: the server has none.
    ResponseCache* response_cache = nullptr;  // outlives the version
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
  // Whether the model answers a request with any number of responses (its config's
  // model_transaction_policy.decoupled, or a backend whose models always are).
  bool decoupled() const { return decoupled_; }
  // Typed capability queries (backend.h): the model's text generation (an LLM) and
  // token counting (a tokenize model); null when it has none. Valid while the version is.
  TextGenerator* text_generator() const { return loaded_->text_generator(); }
  const TokenCounter* token_counter() const { return loaded_->token_counter(); }
  // Load-time facts of the backend (LoadedModel::ReportedParameters), for the config answer.
  std::vector<std::pair<std::string, std::string>> ReportedParameters() const {
    return loaded_->ReportedParameters();
  }
  size_t QueueDepth() const;
  // The scheduler's cumulative load (busy time over all instances, instance count).
  Scheduler::Load CumulativeLoad() const;

  // Everything a reader that only looks needs, copied now (model_version_snapshot.h).
  ModelVersionSnapshot Snapshot() const;

  // Runs `request` (model name/version already resolved). `callback` receives the
  // outcome as InferCallback says (api/infer_request.h): once, final, for a model that is
  // not decoupled — synchronously with InvalidArgument for a request that breaks the
  // config or with a rejection, else later from a worker thread (or inline); a decoupled
  // model's responses arrive from whatever thread its backend sends them on.
  void Infer(InferRequest request, InferCallback callback);

  // Runs a text generation on this version's model (see the file comment). When the
  // model generates no text (text_generator() is null), or the request is invalid,
  // `callbacks.admitted` gets InvalidArgument at once. Otherwise as
  // TextGenerator::Generate: admitted once, then outputs until the final one, whose
  // `timings` the caller may trace; the version counts the request (statistics: queue =
  // the engine's queue time, compute = the rest) and stays held until the final output.
  void Generate(GenerationRequest request, GenerationCallbacks callbacks);

  // Updates the version's load gauges (queue depth, in flight, busy and load ratios)
  // from what happened since the previous call. Called at scrape time.
  void RefreshMetrics();

  // Requests accepted by Infer() and not yet completed.
  int64_t InFlight() const { return inflight_.load(std::memory_order_relaxed); }

  // Rejects new requests, finishes queued and running ones, joins the workers. Requests
  // still queued at `deadline` are answered Unavailable; executing ones are waited for
  // (an execution cannot be interrupted). Idempotent. IMPORTANT: not from inside an
  // Infer callback.
  void Shutdown(absl::Time deadline = absl::InfiniteFuture());

  // A counted handle to `version` for one user (a request path): it keeps the version
  // alive, and AwaitNoHandles() waits until every handle is gone. Copies share the count.
  static ModelHandle AcquireHandle(const std::shared_ptr<ModelVersion>& version);
  // A counted handle to this version (which the manager owns by a shared_ptr).
  ModelHandle NewHandle() { return AcquireHandle(shared_from_this()); }
  // Handles alive now.
  int64_t NumHandles() const;
  // Waits until no handle is alive or `deadline` passes; true when none is.
  bool AwaitNoHandles(absl::Time deadline) const;
  // Ends the work that still holds handles — decoupled requests (their senders report
  // IsStopped and their requests end Cancelled) and the loaded model's own
  // (LoadedModel::CancelOutstandingWork, e.g. an LLM's generations) — so that their
  // handles let go. For a drain whose time is up.
  void CancelOutstandingWork();
  // True once CancelOutstandingWork() ran (decoupled senders read it).
  bool outstanding_work_cancelled() const { return work_cancelled_.load(std::memory_order_acquire); }

 private:
  explicit ModelVersion(Options options);
  // A version with its outputs' classification labels loaded (label_filename); the
  // load error names the model, version and file. Shared by Load and CreateComposite.
  static absl::StatusOr<std::shared_ptr<ModelVersion>> NewWithLabels(const Options& options);

  // The response cache (model_version_cache.cc, docs/response_cache.md). CacheFor: the
  // cache this version uses (null: none; logs why a config's response_cache is unused).
  static ResponseCache* CacheFor(const Options& options, bool decoupled);
  // With a cache: its per-version metric series exist from the load (Triton's).
  void PrepareCacheMetrics();
  // A looked-up request that missed: its key, kept until its answer is inserted.
  struct CacheMiss {
    ResponseCacheKey key;
    uint64_t lookup_ns = 0;
  };
  // Looks `request` (validated, `rows` rows) up: on a hit answers `callback` at once and
  // returns nullopt with `answered` set; on a miss returns the key to insert under.
  std::optional<CacheMiss> LookUpInCache(const InferRequest& request, int64_t rows, InferCallback& callback,
                                         bool& answered);
  // Caches a miss's successful answer and counts the miss.
  void InsertIntoCache(CacheMiss miss, const InferResponse& response);

  // Runs a batch the scheduler formed and answers each of its requests. IMPORTANT: when
  // a batch of several requests fails with InvalidArgument (an input's fault, see
  // backend.h) it reruns each request alone (RunEachAlone) so that one bad request
  // fails only itself; any other error fails the whole batch.
  void RunBatch(ModelInstance& instance, ScheduledRequests requests, CompletionBatch& completions);
  // A decoupled model's batch: each request to ExecuteDecoupled with its sender.
  void RunDecoupled(ModelInstance& instance, ScheduledRequests requests);
  // One backend execution of `requests` as one batch: gather (moving the inputs of a
  // single request, copying those of several, so each can still run alone), Execute,
  // check the outputs against the config, split them per request.
  struct BatchExecution;
  BatchExecution ExecuteBatch(ModelInstance& instance, ScheduledRequests& requests) const;
  // Answers the requests of `requests` that were cancelled or are past their deadline
  // (Cancelled / DeadlineExceeded) and removes them: nothing is executed for them.
  void DropStopped(ScheduledRequests& requests, ResponseDelivery delivery);
  // Runs each of `requests` (a failed batch, which left the queue at `batch_start`) as
  // an execution of its own, in order, on the same instance; a request cancelled or
  // past its queue deadline by then is answered Cancelled / DeadlineExceeded instead.
  void RunEachAlone(ModelInstance& instance, ScheduledRequests requests,
                    std::chrono::steady_clock::time_point batch_start, ResponseDelivery delivery);
  // Answers `requests` from `execution` and records it in the statistics; `left_queue`
  // ends each request's queue time.
  void Complete(ScheduledRequests& requests, BatchExecution& execution,
                std::chrono::steady_clock::time_point left_queue, ResponseDelivery delivery);
  // The success path of a composite version's request (see CreateComposite).
  absl::StatusOr<InferResponse> CompleteComposite(InferResponse response, const std::vector<RequestedOutput>& requested,
                                                  int64_t batch_size, uint64_t request_ns);

  friend class DecoupledResponseSink;  // answers a decoupled request (decoupled_response_sink.h)
  class GenerationInFlight;            // one Generate() in flight (model_version_generate.cc)

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
  bool decoupled_ = false;  // set by Load(), immutable after
  ResponseCache* cache_ = nullptr;  // set by Load() / CreateComposite(), immutable after
  std::atomic<bool> work_cancelled_{false};
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
