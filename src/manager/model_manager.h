// ModelManager: which models exist, which versions serve, and the handle a request
// uses to reach one (docs/lifecycle.md).
//
// Control modes (Triton's): kNone loads every model at start; kPoll also rescans the
// repository every poll interval and loads, reloads or unloads what changed; kExplicit
// loads only the named models at start and then what the repository API asks for.
//
// A model's versions are replaced as a unit: new versions load and warm up beside the
// serving ones, the version map is swapped under one lock, and each retired version is
// drained (after no request holds it) before it is freed — so a reload never fails a
// request. A bad config or version fails alone and leaves what serves untouched; the
// reason is kept for the index.
//
// Thread-safe. GetModelVersion() and ChooseVersion() (HTTP infer: the lookup before
// decoding, version_choice.h) are on the request path: one shared lock and a counted
// ModelHandle (one allocation, one short lock). The manager owns each serving version by
// a std::shared_ptr nobody else sees; request paths get ModelHandles, readers snapshots. Loads and unloads of one model are serialised; different models load
// in parallel.
//
// Usage:
//   ASSIGN_OR_RETURN(auto manager, ModelManager::Create(options));
//   manager->LoadAll();
//   ASSIGN_OR_RETURN(ModelHandle model, manager->GetModelVersion("resnet18", std::nullopt, key));
//   model->Infer(std::move(request), std::move(callback));  // then let go of `model`
#ifndef INFERA_MANAGER_MODEL_MANAGER_H_
#define INFERA_MANAGER_MODEL_MANAGER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "backend/backend_registry.h"
#include "backend/load_timings.h"
#include "ensemble/ensemble_nesting.h"
#include "ensemble/ensemble_scheduler.h"
#include "manager/canary.h"
#include "manager/model_version.h"
#include "manager/version_choice.h"
#include "repository/model_repository.h"

namespace infera {

enum class ModelState { kLoading, kReady, kUnavailable, kUnloading };
std::string_view ModelStateName(ModelState state);  // "LOADING", "READY", ...

// Triton's wording, which Triton's clients and tests match on. Lookups answer:
//   unknown model          NotFound     "Request for unknown model: 'X' is not found"
//   unknown version        NotFound     "Request for unknown model: 'X' version N is not found (...)"
//   version not ready      Unavailable  "Request for unknown model: 'X' version N is not at ready state (...)"
//   no ready version       Unavailable  "Request for unknown model: 'X' has no available versions..."
absl::Status UnknownModelError(std::string_view name);

enum class ModelControlMode { kNone, kPoll, kExplicit };

// One row of the repository index.
struct ModelIndexEntry {
  std::string name;
  std::optional<int64_t> version;  // unset when the model failed before versions were known
  ModelState state = ModelState::kUnavailable;
  std::string reason;  // why it is not ready (or why its last reload failed); may be empty
  std::string backend;  // the config's backend once a load has read it (e.g. "llm"); may be empty
};

struct CanaryStatus {
  std::string model;
  int64_t canary_version = 0;
  int64_t baseline_version = 0;
  double weight_percent = 0;
  CanaryState state = CanaryState::kActive;
  std::string reason;
};

class ModelManager {
 public:
  struct Options {
    std::filesystem::path repository;
    const BackendRegistry* backends = nullptr;  // outlives the manager
    // Cores shared by the instances of every compute backend: each instance's default
    // intra-op thread budget is num_cores / (their total), at least 1.
    int num_cores = 1;
    size_t max_queue_size = 1024;  // per model version
    int max_parallel_loads = 2;  // start-up loader threads (LoadAll)
    ServerMetrics* metrics = nullptr;  // null: no Prometheus series
    // The response cache (docs/response_cache.md) of the versions whose config enables
    // it; null: the server has none (--cache-config). Outlives the manager.
    ResponseCache* response_cache = nullptr;
    ModelControlMode mode = ModelControlMode::kNone;
    std::vector<std::string> startup_models = {};  // kExplicit: models to load at start ("*": all)
    std::chrono::seconds poll_interval{15};   // kPoll
    // How long a retired version waits for requests still holding a handle to it (on a
    // condition); past it, the model's outstanding work is cancelled
    // (LoadedModel::CancelOutstandingWork) and the version drains anyway.
    std::chrono::seconds drain_timeout{30};
  };

  // NotFound/FailedPrecondition when the repository cannot be opened.
  static absl::StatusOr<std::unique_ptr<ModelManager>> Create(Options options);
  ~ModelManager();

  // One version loaded (or failed) by LoadAll, for the start-up summary.
  struct VersionLoadRecord {
    std::string model;
    int64_t version = 0;
    bool ok = false;
    bool ensemble = false;
    // From LoadAll's start to this load's start and end (the load's own wall time is
    // end - start; timings.total also counts the labels and the scheduler).
    std::chrono::steady_clock::duration start{}, end{};
    LoadTimings timings;
  };
  struct StartupLoads {
    int threads = 1;                          // loader threads
    std::chrono::steady_clock::duration wall{};  // LoadAll from start to return
    std::vector<VersionLoadRecord> versions;  // in the order they finished
    // The longest load of a non-ensemble version (ensembles take a few ms, after all
    // others): the part of the start no number of loader threads can shorten; null when
    // nothing loaded.
    const VersionLoadRecord* CriticalPath() const;
  };

  // Loads the models the mode asks for at start, `max_parallel_loads` at a time (the
  // largest first: bytes of their version folders; ensembles after all others, one at
  // a time), each version's instances created and warmed in parallel on the same
  // threads; returns when all have loaded or failed, with what each took
  // (docs/cold_start.md). Failures are recorded per model (Index()), not returned.
  StartupLoads LoadAll();

  // Starts the background thread: canary judging every second and, in poll mode, the
  // repository poll.
  void StartBackgroundTasks();

  // (Re)loads `name` from the repository, or from `config_override` (a full config, as
  // Triton's load API takes). Blocks until the new versions serve or failed. An ensemble
  // first loads its step models that do not serve (nested ensembles included, in an
  // order where each comes after its steps, without recursion); a config whose ensembles
  // would nest in a cycle or more than kMaxEnsembleDepth deep, counting the ensembles
  // that serve now, is refused. Errors: InvalidArgument for a config refused (the
  // config's fault: its text, its nesting, its plan, a file it names, a version that
  // failed for such a reason); NotFound for a name not in the repository; Unavailable
  // when a version failed for another reason.
  absl::Status LoadModel(const std::string& name,
                         std::optional<inference::ModelConfig> config_override = std::nullopt);
  // Stops serving `name`, draining its versions first. NotFound when not loaded.
  absl::Status UnloadModel(const std::string& name);
  // One poll pass: load new models, reload changed ones, unload removed ones.
  void PollRepository();

  // The version to serve: `version`, or when unset the canary or baseline (by
  // `routing_key`, see canary.h) or else the highest READY version.
  // NotFound for an unknown model or version, Unavailable when not ready (with why).
  // The result is a counted handle (model_handle.h): a reload or unload waits until it is
  // released (up to its drain deadline), so hold it exactly as long as the request path
  // uses the version (ModelVersion::Infer and Generate keep what they need themselves).
  absl::StatusOr<ModelHandle> GetModelVersion(std::string_view name, std::optional<int64_t> version,
                                              std::string_view routing_key = {}) const;

  // The same choice for a request whose routing key is known only once its body has been
  // decoded, with one lookup (version_choice.h): NotFound for an unknown model at once;
  // every other answer of GetModelVersion (the handle or its error) from
  // VersionChoice::Resolve(routing_key), which routes a canary split then.
  absl::StatusOr<VersionChoice> ChooseVersion(std::string_view name, std::optional<int64_t> version) const;

  // Snapshots of the versions a statistics request names (Triton's statistics extension),
  // for readers that only look (statistics, diagnosis, console, metrics): `version` of
  // `name`, every READY version of `name`, or (empty name) every READY version of every
  // model. InvalidArgument for a version without a name; GetModelVersion's errors for an
  // unknown or unready one. Holds no version once it returns.
  absl::StatusOr<std::vector<ModelVersionSnapshot>> Snapshots(std::string_view name,
                                                              std::optional<int64_t> version) const;

  // Versions of `name` that are READY, ascending. NotFound for an unknown model.
  absl::StatusOr<std::vector<int64_t>> ReadyVersions(std::string_view name) const;

  // Every model of the repository and every known version with its state, sorted by
  // name then version (models never loaded show as UNAVAILABLE "not loaded").
  std::vector<ModelIndexEntry> Index() const;

  std::vector<CanaryStatus> Canaries() const;
  // Sends all unversioned traffic of `name` to its canary. NotFound without a canary.
  absl::Status PromoteCanary(std::string_view name);
  // Feeds each canary controller the current samples of both sides (once a second).
  void EvaluateCanaries() const;

  // True when every model that must serve (loaded at start or by the API, not unloaded
  // since) is READY — Triton's strict readiness.
  bool AllModelsReady() const;

  ModelControlMode mode() const { return options_.mode; }

  // Updates every version's load gauges (see ModelVersion::RefreshMetrics).
  void RefreshMetrics() const;

  // Stops the background thread, drains and unloads every version (at shutdown). Waits
  // for handles still held until `drain_deadline` (the server passes the end of its exit
  // timeout; by default not at all), then cancels the models' outstanding work (an LLM's
  // generations end with an abort).
  void UnloadAll(absl::Time drain_deadline = absl::Now());

 private:
  struct VersionSlot {
    ModelState state = ModelState::kLoading;
    std::string reason;
    std::shared_ptr<ModelVersion> model;
    uint64_t fingerprint = 0;  // config text + version folder, when it loaded
  };
  struct ModelEntry {
    ModelState state = ModelState::kLoading;  // of the model as a whole (config stage)
    std::string reason;
    bool required = true;  // counts for readiness (false once unloaded)
    std::map<int64_t, VersionSlot> versions;
    std::shared_ptr<CanaryController> canary;
    uint64_t fingerprint = 0;  // of config and version folders, for polling
    std::string backend;       // of the config last (being) loaded
  };
  struct LoadPlan;
  struct LoadRun;  // a start-up load's pool and records

  ModelManager(Options options, ModelRepository repository);

  // GetModelVersion's choice within `entry` (the model `name`); `routing_key` is read only
  // when the model has a canary and `version` is unset.
  absl::StatusOr<ModelHandle> SelectVersionLocked(std::string_view name, const ModelEntry& entry,
                                                                    std::optional<int64_t> version,
                                                                    std::string_view routing_key) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // Loading (model_manager_loading.cc). LoadModelWith: an ensemble's steps first, then
  // LoadOneModel: `name` alone, under its model lock (LoadModelLocked). No thread holds
  // two model locks, so loads of models that name each other cannot deadlock.
  absl::Status LoadModelWith(const std::string& name, std::optional<inference::ModelConfig> override,
                             LoadRun* run);
  absl::Status LoadOneModel(const std::string& name, std::optional<inference::ModelConfig> override,
                            LoadRun* run);
  absl::Status LoadModelLocked(const std::string& name, std::optional<inference::ModelConfig> override,
                               LoadRun* run);
  // What a refused load puts back (an override refused after its versions were built).
  struct LoadUndo {
    bool existed = false;  // the entry was there before the load
    ModelState state = ModelState::kLoading;
    std::string reason;
    std::string backend;
  };
  // Serves `next` (the versions of a load of `plan`); returns the versions it retires.
  std::vector<std::shared_ptr<ModelVersion>> SwapInLocked(const std::string& name, const LoadPlan& plan,
                                                          std::map<int64_t, VersionSlot> next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A refused load: the versions of `next` not in `current` never serve (returned, to be
  // retired); an override's entry is put back as `undo` says.
  std::vector<std::shared_ptr<ModelVersion>> UndoLoadLocked(const std::string& name, const LoadUndo& undo,
                                                            bool from_override,
                                                            const std::map<int64_t, VersionSlot>& current,
                                                            const std::map<int64_t, VersionSlot>& next)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Loads the versions `plan` wants beside `current` (reusing unchanged ones); failures
  // are appended to `failures`.
  std::map<int64_t, VersionSlot> LoadVersions(const std::string& name, const LoadPlan& plan,
                                              const std::map<int64_t, VersionSlot>& current, LoadRun* run,
                                              std::vector<absl::Status>& failures);
  // What a load of `name` is expected to cost, for the start-up order: the bytes under
  // its version folders.
  uint64_t LoadCostEstimate(const std::string& name) const;
  absl::StatusOr<LoadPlan> PlanLoad(const std::string& name,
                                    std::optional<inference::ModelConfig> override);
  absl::Status RecordModelFailure(const std::string& name, const absl::Status& status);
  // Drains `retired`: waits for their handles until `deadline`, then cancels what is
  // left, then shuts each down (see Options::drain_timeout).
  void RetireVersions(std::vector<std::shared_ptr<ModelVersion>> retired, absl::Time deadline);
  uint64_t ModelFingerprint(const std::string& name) const;
  // Ensembles (platform "ensemble"; ensemble/ensemble_scheduler.h), in
  // model_manager_ensembles.cc.
  static bool IsEnsemble(const inference::ModelConfig& config);
  // Before `name` (with `override`, else its config.pbtxt) loads: walks its nesting (the
  // serving configs of the models that serve, the repository's of the others) and loads
  // the step models that do not serve, each after its own steps. InvalidArgument naming
  // the chain when the ensembles would nest in a cycle or too deep; nothing is loaded then.
  absl::Status LoadEnsembleStepsFirst(const std::string& name, const std::optional<inference::ModelConfig>& override,
                                      LoadRun* run);
  // The walk's view of `model`: its serving ensemble steps, or (when it does not serve)
  // its config.pbtxt's; nullopt for anything else.
  std::optional<std::vector<std::string>> NestingOf(const std::string& model) const;
  // Whether `name` serving with `steps` keeps the ensembles that serve free of cycles and
  // within kMaxEnsembleDepth (InvalidArgument naming the chain otherwise).
  absl::Status CheckNestingLocked(const std::string& name, const std::vector<std::string>& steps) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The distinct step models of the ensemble versions in `versions`.
  static std::vector<std::string> ServingSteps(const std::map<int64_t, VersionSlot>& versions);
  // True when a start-up load (`run`, may be null) has already tried `name`.
  static bool Attempted(LoadRun* run, const std::string& name);
  StepResolver EnsembleStepResolver();
  absl::StatusOr<std::shared_ptr<ModelVersion>> LoadEnsembleVersion(const LoadPlan& plan, const std::string& name,
                                                                    int64_t version);
  int ComputeThreadBudget(const std::vector<std::string>& names);
  std::shared_ptr<absl::Mutex> ModelLock(const std::string& name);
  void BackgroundLoop();

  const Options options_;
  const ModelRepository repository_;
  std::atomic<int> default_intra_op_threads_{1};

  mutable absl::Mutex mu_;
  std::map<std::string, ModelEntry, std::less<>> models_ ABSL_GUARDED_BY(mu_);
  // How the serving ensembles nest: changed with each version swap under mu_, so that
  // every swap is checked against all the others (no cycle, kMaxEnsembleDepth).
  EnsembleGraph ensemble_graph_ ABSL_GUARDED_BY(mu_);

  absl::Mutex locks_mu_;
  std::map<std::string, std::shared_ptr<absl::Mutex>> model_locks_ ABSL_GUARDED_BY(locks_mu_);

  absl::Mutex background_mu_;
  bool stopping_ ABSL_GUARDED_BY(background_mu_) = false;
  std::thread background_;
};

}  // namespace infera

#endif  // INFERA_MANAGER_MODEL_MANAGER_H_
