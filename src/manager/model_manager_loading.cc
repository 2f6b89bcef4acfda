// ModelManager: loading, reloading, unloading and polling (docs/lifecycle.md).
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <set>

#include "common/cpu_placement.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "ensemble/ensemble_scheduler.h"
#include "manager/load_pool.h"
#include "manager/model_manager.h"
#include "repository/fingerprint.h"
#include "repository/model_config_loader.h"
#include "repository/version_policy.h"

namespace infera {

// What a (re)load will do, decided before anything is loaded.
struct ModelManager::LoadPlan {
  std::shared_ptr<const inference::ModelConfig> config;
  Backend* backend = nullptr;
  std::vector<int64_t> versions;
  std::map<int64_t, uint64_t> version_fingerprints;
  std::optional<CanaryConfig> canary;
  uint64_t model_fingerprint = 0;
};

// A start-up load (LoadAll): the pool its versions' instances use and where each
// version's timings go.
struct ModelManager::LoadRun {
  LoadPool* pool = nullptr;
  std::chrono::steady_clock::time_point start;
  absl::Mutex mu;
  std::vector<VersionLoadRecord> records ABSL_GUARDED_BY(mu);
};

const ModelManager::VersionLoadRecord* ModelManager::StartupLoads::CriticalPath() const {
  const VersionLoadRecord* last = nullptr;
  for (const VersionLoadRecord& r : versions) {
    if (!r.ensemble && (last == nullptr || r.end - r.start > last->end - last->start)) last = &r;
  }
  return last;
}

uint64_t ModelManager::LoadCostEstimate(const std::string& name) const {
  uint64_t bytes = 0;
  const auto dir = repository_.ModelDir(name);
  for (int64_t v : repository_.ListVersions(name).value_or(std::vector<int64_t>{})) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir / std::to_string(v), ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code size_ec;
      if (it->is_regular_file(size_ec)) bytes += it->file_size(size_ec);
    }
  }
  return bytes;
}

std::shared_ptr<absl::Mutex> ModelManager::ModelLock(const std::string& name) {
  absl::MutexLock lock(&locks_mu_);
  auto& slot = model_locks_[name];
  if (!slot) slot = std::make_shared<absl::Mutex>();
  return slot;
}

uint64_t ModelManager::ModelFingerprint(const std::string& name) const {
  const auto dir = repository_.ModelDir(name);
  uint64_t hash = HashText(ReadModelConfigText(dir).value_or(""));
  for (int64_t v : repository_.ListVersions(name).value_or(std::vector<int64_t>{})) {
    hash = HashText(std::to_string(DirectoryFingerprint(dir / std::to_string(v))), hash);
  }
  return hash;
}

int ModelManager::ComputeThreadBudget(const std::vector<std::string>& names) {
  int compute_instances = 0;
  for (const std::string& name : names) {
    auto config = LoadModelConfig(repository_.ModelDir(name));
    if (!config.ok()) continue;
    auto backend = options_.backends->Find(*config);
    if (!backend.ok() || !(*backend)->UsesIntraOpThreads()) continue;
    const int versions = config->version_policy().has_latest()
                             ? static_cast<int>(config->version_policy().latest().num_versions())
                             : 1;
    for (const auto& group : config->instance_group()) compute_instances += group.count() * std::max(1, versions);
  }
  const int threads = std::max(1, options_.num_cores / std::max(1, compute_instances));
  INFERA_LOG(INFO) << compute_instances << " compute instance(s) on " << options_.num_cores
                   << " core(s): " << threads << " intra-op thread(s) each by default";
  return threads;
}

ModelManager::StartupLoads ModelManager::LoadAll() {
  auto all = repository_.ListModels();
  if (!all.ok()) {
    INFERA_LOG(ERROR) << all.status().message();
    return {};
  }
  std::vector<std::string> names;
  if (options_.mode == ModelControlMode::kExplicit &&
      std::find(options_.startup_models.begin(), options_.startup_models.end(), "*") ==
          options_.startup_models.end()) {
    // A --load-model name the repository lacks fails at start (strict readiness); the
    // API's loads of such names are refused without a trace (LoadModel).
    for (const std::string& name : options_.startup_models) {
      if (std::find(all->begin(), all->end(), name) == all->end()) {
        RecordModelFailure(name, absl::NotFoundError(StrCat("model '", name, "' is not in the repository")))
            .IgnoreError();
      } else {
        names.push_back(name);
      }
    }
  } else {
    names = *all;
  }
  // The thread budget divides the cores among every compute instance of every model,
  // so that instances x threads <= cores unless a config sets its own count.
  default_intra_op_threads_ = ComputeThreadBudget(names);
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& name : names) models_[name];  // LOADING until done
  }
  // Ensembles load after every other model (their steps must serve first), one at a
  // time (an ensemble loads the steps it lacks, nested ensembles included).
  std::vector<std::string> ensembles;
  {
    std::vector<std::string> models;
    for (const std::string& name : names) {
      auto config = LoadModelConfig(repository_.ModelDir(name));
      (config.ok() && IsEnsemble(*config) ? ensembles : models).push_back(name);
    }
    names = std::move(models);
  }
  // Loading is CPU-bound (deserialising, graph optimisation, warm-up): the largest model
  // first, so that the longest load starts at once (longest-processing-time-first), on
  // a pool whose idle threads also create and warm the instances of the loads running.
  std::vector<std::pair<uint64_t, std::string>> by_cost;
  for (const std::string& name : names) by_cost.emplace_back(LoadCostEstimate(name), name);
  std::stable_sort(by_cost.begin(), by_cost.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  StartupLoads result;
  result.threads = std::max(1, options_.max_parallel_loads);
  LoadRun run;
  run.start = std::chrono::steady_clock::now();
  {
    LoadPool pool(result.threads);
    run.pool = &pool;
    for (const auto& [cost, name] : by_cost) {
      pool.Submit([this, &run, name = name] { LoadModelWith(name, std::nullopt, &run).IgnoreError(); });
    }
    pool.Wait();
  }
  run.pool = nullptr;
  for (const std::string& name : ensembles) LoadModelWith(name, std::nullopt, &run).IgnoreError();
  result.wall = std::chrono::steady_clock::now() - run.start;
  absl::MutexLock lock(&run.mu);
  result.versions = std::move(run.records);
  return result;
}

absl::Status ModelManager::RecordModelFailure(const std::string& name, const absl::Status& status) {
  INFERA_LOG(ERROR) << "model '" << name << "' failed to load: " << status.message();
  absl::MutexLock lock(&mu_);
  ModelEntry& entry = models_[name];
  entry.required = true;
  if (entry.versions.empty()) {
    entry.state = ModelState::kUnavailable;
    entry.reason = std::string(status.message());
  } else {
    entry.reason = StrCat("reload failed, previous versions still serve: ", status.message());
  }
  return status;
}

bool ModelManager::IsEnsemble(const inference::ModelConfig& config) { return config.platform() == "ensemble"; }

absl::Status ModelManager::CheckEnsembleNesting(const std::string& name, const inference::ModelConfig& config) const {
  // Depth-first over the repository's configs: an ensemble that reaches itself through
  // nested ensembles could never load (each waits for the other), so it is a load error.
  std::vector<std::string> path = {name};
  std::set<std::string> done;
  std::function<absl::Status(const inference::ModelConfig&)> visit =
      [&](const inference::ModelConfig& ensemble) -> absl::Status {
    for (const auto& step : ensemble.ensemble_scheduling().step()) {
      const std::string& child = step.model_name();
      if (std::find(path.begin(), path.end(), child) != path.end()) {
        return absl::InvalidArgumentError(StrCat("ensemble '", name, "': step model '", child,
                                                 "' leads back to ensemble '", child, "' (", StrJoin(path, " -> "),
                                                 " -> ", child, ")"));
      }
      if (done.count(child) || !ModelRepository::IsValidModelName(child)) continue;
      auto child_config = LoadModelConfig(repository_.ModelDir(child));
      if (!child_config.ok() || !IsEnsemble(*child_config)) continue;
      path.push_back(child);
      RETURN_IF_ERROR(visit(*child_config));
      path.pop_back();
      done.insert(child);
    }
    return absl::OkStatus();
  };
  return visit(config);
}

StepResolver ModelManager::EnsembleStepResolver() {
  return [this](const std::string& name, std::optional<int64_t> version) -> absl::StatusOr<StepModel> {
    ASSIGN_OR_RETURN(ModelHandle handle, GetModelVersion(name, version));
    ModelVersion* raw = handle.get();
    if (raw->decoupled()) {
      return absl::InvalidArgumentError(StrCat("model '", name, "' is decoupled (several responses per request); "
                                               "an ensemble step must answer once"));
    }
    StepModel step;
    step.config = &raw->config();
    step.infer = [raw](InferRequest request, InferCallback callback) {
      raw->Infer(std::move(request), std::move(callback));
    };
    step.handle = std::make_shared<ModelHandle>(std::move(handle));
    return step;
  };
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelManager::LoadEnsembleVersion(const LoadPlan& plan,
                                                                                 const std::string& name,
                                                                                 int64_t version) {
  ASSIGN_OR_RETURN(std::unique_ptr<EnsembleScheduler> scheduler,
                   EnsembleScheduler::Create(*plan.config, EnsembleStepResolver()));
  return ModelVersion::CreateComposite({plan.config, version, repository_.ModelDir(name), nullptr,
                                        default_intra_op_threads_.load(), options_.max_queue_size, options_.metrics},
                                       std::move(scheduler));
}

void ModelManager::LoadEnsembleSteps(const inference::ModelConfig& config) {
  // Triton: loading an ensemble loads its steps first (those not serving). Nested
  // ensembles recurse; CheckEnsembleNesting has ruled out cycles, so the model locks
  // taken on the way are always in one order.
  std::set<std::string> seen;
  for (const auto& step : config.ensemble_scheduling().step()) {
    if (!seen.insert(step.model_name()).second) continue;
    auto ready = ReadyVersions(step.model_name());
    if (ready.ok() && !ready->empty()) continue;
    absl::Status loaded = LoadModel(step.model_name());
    if (!loaded.ok()) {
      INFERA_LOG(WARNING) << "ensemble '" << config.name() << "': step model '" << step.model_name()
                          << "' did not load: " << loaded.message();
    }
  }
}

absl::StatusOr<ModelManager::LoadPlan> ModelManager::PlanLoad(
    const std::string& name, std::optional<inference::ModelConfig> override) {
  const auto dir = repository_.ModelDir(name);
  const std::string source = (dir / kModelConfigFilename).string();
  LoadPlan plan;
  inference::ModelConfig config;
  uint64_t config_hash;
  if (override) {
    config = std::move(*override);
    RETURN_IF_ERROR(ValidateModelConfig("config override", name, config));
    config_hash = HashText(config.SerializeAsString());
  } else {
    ASSIGN_OR_RETURN(std::string text, ReadModelConfigText(dir));
    ASSIGN_OR_RETURN(config, ParseModelConfig(text, source));
    RETURN_IF_ERROR(ValidateModelConfig(source, name, config));
    config_hash = HashText(text);
  }
  absl::StatusOr<Backend*> backend = static_cast<Backend*>(nullptr);
  if (IsEnsemble(config)) {
    RETURN_IF_ERROR(CheckEnsembleNesting(name, config));
  } else {
    backend = options_.backends->Find(config);
    if (!backend.ok()) return absl::InvalidArgumentError(StrCat(source, ": ", backend.status().message()));
    absl::Status valid = (*backend)->ValidateConfig(config);
    if (!valid.ok()) return absl::InvalidArgumentError(StrCat(source, ": ", valid.message()));
  }
  auto canary = CanaryConfigFromModelConfig(config);
  if (!canary.ok()) return absl::InvalidArgumentError(StrCat(source, ": ", canary.status().message()));
  ASSIGN_OR_RETURN(std::vector<int64_t> available, repository_.ListVersions(name));
  auto versions = SelectVersions(config.version_policy(), available);
  if (!versions.ok()) {
    return absl::Status(versions.status().code(), StrCat("model '", name, "': ", versions.status().message()));
  }
  if (*canary && std::find(versions->begin(), versions->end(), (*canary)->canary_version) == versions->end()) {
    return absl::InvalidArgumentError(StrCat(source, ": parameters[canary.version] ", (*canary)->canary_version,
                                             " is not a version the version_policy serves"));
  }
  plan.config = std::make_shared<const inference::ModelConfig>(std::move(config));
  plan.backend = *backend;
  plan.versions = *versions;
  for (int64_t v : plan.versions) {
    plan.version_fingerprints[v] = HashText(std::to_string(DirectoryFingerprint(dir / std::to_string(v))), config_hash);
  }
  plan.canary = std::move(*canary);
  plan.model_fingerprint = override ? config_hash : ModelFingerprint(name);
  return plan;
}

absl::Status ModelManager::LoadModel(const std::string& name,
                                     std::optional<inference::ModelConfig> config_override) {
  return LoadModelWith(name, std::move(config_override), nullptr);
}

absl::Status ModelManager::LoadModelWith(const std::string& name,
                                         std::optional<inference::ModelConfig> config_override, LoadRun* run) {
  if (!ModelRepository::IsValidModelName(name)) {
    return absl::InvalidArgumentError(StrCat("'", name, "' is not a valid model name"));
  }
  // A name the repository does not have changes nothing: it must not leave an
  // UNAVAILABLE entry that makes the server not ready until someone unloads it.
  std::error_code ec;
  if (!std::filesystem::is_directory(repository_.ModelDir(name), ec)) {
    return absl::NotFoundError(StrCat("model '", name, "' is not in the repository"));
  }
  std::shared_ptr<absl::Mutex> model_lock = ModelLock(name);
  absl::MutexLock lock(model_lock.get());
  return LoadModelLocked(name, std::move(config_override), run);
}

absl::Status ModelManager::LoadModelLocked(const std::string& name,
                                           std::optional<inference::ModelConfig> override, LoadRun* run) {
  const bool from_override = override.has_value();
  auto plan = PlanLoad(name, std::move(override));
  // A rejected override is a bad request (400), not a broken model: what serves, and
  // readiness, stay as they were.
  if (!plan.ok() && from_override) return plan.status();
  if (!plan.ok()) return RecordModelFailure(name, plan.status());
  if (IsEnsemble(*plan->config)) LoadEnsembleSteps(*plan->config);
  std::map<int64_t, VersionSlot> current;
  {
    absl::MutexLock lock(&mu_);
    ModelEntry& entry = models_[name];
    if (entry.versions.empty()) entry.state = ModelState::kLoading;
    entry.backend = plan->config->backend();
    current = entry.versions;
  }
  // Load what changed beside what serves; reuse versions whose fingerprint is the same.
  std::map<int64_t, VersionSlot> next;
  std::vector<std::string> failures;
  for (int64_t v : plan->versions) {
    const uint64_t fingerprint = plan->version_fingerprints[v];
    auto old = current.find(v);
    // An ensemble is always rebuilt: its plan depends on the step models serving now.
    if (old != current.end() && old->second.model && old->second.fingerprint == fingerprint &&
        !IsEnsemble(*plan->config)) {
      next[v] = old->second;
      continue;
    }
    LoadTimings timings;
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::shared_ptr<ModelVersion>> loaded;
    if (IsEnsemble(*plan->config)) {
      loaded = LoadEnsembleVersion(*plan, name, v);
    } else {
      ModelVersion::Options version_options{plan->config, v, repository_.ModelDir(name), plan->backend,
                                            default_intra_op_threads_.load(), options_.max_queue_size,
                                            options_.metrics};
      ModelVersion::LoadHooks hooks;
      hooks.timings = &timings;
      if (run != nullptr && run->pool != nullptr) {
        LoadPool* pool = run->pool;
        hooks.run_parallel = [pool](std::vector<std::function<void()>> tasks) { pool->RunAll(std::move(tasks)); };
        hooks.parallel_threads = pool->threads();
      }
      loaded = ModelVersion::Load(std::move(version_options), hooks);
    }
    const auto end = std::chrono::steady_clock::now();
    timings.total = end - start;
    if (run != nullptr) {
      absl::MutexLock lock(&run->mu);
      run->records.push_back(
          {name, v, loaded.ok(), IsEnsemble(*plan->config), start - run->start, end - run->start, timings});
    }
    if (loaded.ok()) {
      next[v] = VersionSlot{ModelState::kReady, "", std::move(*loaded), fingerprint};
      // One line per version: where its load time went (docs/cold_start.md).
      INFERA_LOG(INFO) << "loaded model '" << name << "' version " << v << " in " << RoundedMillis(timings.total)
                       << " ms" << (IsEnsemble(*plan->config) ? "" : StrCat(": ", timings.Describe()));
    } else if (old != current.end() && old->second.model) {
      next[v] = old->second;  // keep serving the previous load of this version
      next[v].reason = StrCat("reload failed, previous load still serves: ", loaded.status().message());
      failures.push_back(std::string(loaded.status().message()));
    } else {
      next[v] = VersionSlot{ModelState::kUnavailable, std::string(loaded.status().message()), nullptr, 0};
      failures.push_back(std::string(loaded.status().message()));
    }
    if (!loaded.ok()) INFERA_LOG(ERROR) << "failed to load: " << loaded.status().message();
  }
  std::vector<std::shared_ptr<ModelVersion>> retired;
  {
    absl::MutexLock lock(&mu_);
    ModelEntry& entry = models_[name];
    for (auto& [v, slot] : entry.versions) {
      auto kept = next.find(v);
      if (slot.model && (kept == next.end() || kept->second.model != slot.model)) retired.push_back(slot.model);
    }
    entry.versions = std::move(next);
    entry.state = ModelState::kReady;
    entry.reason.clear();
    entry.required = true;
    entry.fingerprint = plan->model_fingerprint;
    entry.canary.reset();
    if (plan->canary) {
      int64_t baseline = plan->canary->baseline_version.value_or(0);
      for (const auto& [v, slot] : entry.versions) {
        if (!plan->canary->baseline_version && v != plan->canary->canary_version) baseline = v;
      }
      entry.canary = std::make_shared<CanaryController>(*plan->canary, baseline);
    }
  }
  current.clear();  // our own copies of the old handles must not delay the drain
  RetireVersions(std::move(retired), absl::Now() + absl::FromChrono(options_.drain_timeout));
  if (!failures.empty()) return absl::UnavailableError(StrJoin(failures, "; "));
  return absl::OkStatus();
}

void ModelManager::RetireVersions(std::vector<std::shared_ptr<ModelVersion>> retired, absl::Time deadline) {
  // One deadline for the whole drain: the versions drain at the same time.
  for (std::shared_ptr<ModelVersion>& version : retired) {
    // Requests that looked this version up hold a handle: let them enqueue before intake
    // stops, and let generations that run outside the scheduler (an LLM's OpenAI
    // streams) finish on it, so a reload fails nothing.
    if (!version->AwaitNoHandles(deadline)) {
      INFERA_LOG(WARNING) << "model '" << version->name() << "' version " << version->version() << ": "
                          << version->NumHandles() << " requests still hold it at the drain deadline; "
                          << "cancelling them";
      version->CancelOutstandingWork();
    }
    version->Shutdown(deadline);  // queued requests finish (until the deadline), running ones too; workers joined
    // The version's threads are done: whoever releases the last reference (here, or a
    // late handle after a timeout) joins nothing of its own.
    INFERA_LOG(INFO) << "unloaded model '" << version->name() << "' version " << version->version();
  }
}

absl::Status ModelManager::UnloadModel(const std::string& name) {
  if (!ModelRepository::IsValidModelName(name)) {
    return absl::InvalidArgumentError(StrCat("'", name, "' is not a valid model name"));
  }
  std::shared_ptr<absl::Mutex> model_lock = ModelLock(name);
  absl::MutexLock model_locked(model_lock.get());
  std::vector<std::shared_ptr<ModelVersion>> retired;
  {
    absl::MutexLock lock(&mu_);
    auto it = models_.find(name);
    if (it == models_.end() || (it->second.versions.empty() && !it->second.required)) {
      return absl::NotFoundError(StrCat("model '", name, "' is not loaded"));
    }
    for (auto& [v, slot] : it->second.versions) {
      if (slot.model) retired.push_back(std::move(slot.model));
    }
    it->second.versions.clear();
    it->second.canary.reset();
    it->second.state = ModelState::kUnavailable;
    it->second.reason = "unloaded";
    it->second.required = false;
  }
  RetireVersions(std::move(retired), absl::Now() + absl::FromChrono(options_.drain_timeout));
  return absl::OkStatus();
}

void ModelManager::PollRepository() {
  auto names = repository_.ListModels();
  if (!names.ok()) {
    INFERA_LOG(WARNING) << "repository poll: " << names.status().message();
    return;
  }
  std::vector<std::string> loaded;
  std::map<std::string, uint64_t> fingerprints;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [name, entry] : models_) {
      if (entry.required) {
        loaded.push_back(name);
        fingerprints[name] = entry.fingerprint;
      }
    }
  }
  for (const std::string& name : *names) {
    auto known = fingerprints.find(name);
    if (known == fingerprints.end() || known->second != ModelFingerprint(name)) {
      INFERA_LOG(INFO) << "repository poll: " << (known == fingerprints.end() ? "loading" : "reloading")
                       << " model '" << name << "'";
      LoadModel(name).IgnoreError();
    }
  }
  for (const std::string& name : loaded) {
    if (std::find(names->begin(), names->end(), name) == names->end()) {
      INFERA_LOG(INFO) << "repository poll: model '" << name << "' removed; unloading";
      UnloadModel(name).IgnoreError();
    }
  }
}

void ModelManager::StartBackgroundTasks() {
  background_ = std::thread([this] { BackgroundLoop(); });
}

void ModelManager::BackgroundLoop() {
  pthread_setname_np(pthread_self(), "infera-poll");
  PinCurrentThreadForModelLoading();
  auto next_poll = std::chrono::steady_clock::now() + options_.poll_interval;
  while (true) {
    {
      absl::MutexLock lock(&background_mu_);
      if (background_mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Seconds(1))) return;
    }
    EvaluateCanaries();
    if (options_.mode == ModelControlMode::kPoll && std::chrono::steady_clock::now() >= next_poll) {
      PollRepository();
      next_poll = std::chrono::steady_clock::now() + options_.poll_interval;
    }
  }
}

void ModelManager::UnloadAll(absl::Time drain_deadline) {
  {
    absl::MutexLock lock(&background_mu_);
    stopping_ = true;
  }
  if (background_.joinable()) background_.join();
  std::vector<std::shared_ptr<ModelVersion>> versions;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [name, entry] : models_) {
      for (auto& [number, slot] : entry.versions) {
        if (slot.model) versions.push_back(std::move(slot.model));
        slot.state = ModelState::kUnloading;
      }
    }
  }
  // Outside the lock: draining waits for in-flight requests.
  RetireVersions(std::move(versions), drain_deadline);
}

}  // namespace infera
