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
#include "manager/model_manager_internal.h"
#include "repository/fingerprint.h"
#include "repository/model_config_loader.h"
#include "repository/version_policy.h"

namespace infera {

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
  if (!IsEnsemble(config)) {  // an ensemble's nesting and plan are checked as it loads
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

namespace {

// What a failed version load answers: InvalidArgument when every failure is the
// config's fault (its plan, a file it names, a value a backend refused), so that a load
// request gets a 400 and is not retried; Unavailable (503) otherwise.
absl::Status VersionFailures(const std::vector<absl::Status>& failures) {
  std::vector<std::string> messages;
  bool configs_fault = true;
  for (const absl::Status& failure : failures) {
    messages.push_back(std::string(failure.message()));
    const absl::StatusCode code = failure.code();
    configs_fault = configs_fault && (code == absl::StatusCode::kInvalidArgument ||
                                      code == absl::StatusCode::kFailedPrecondition ||
                                      code == absl::StatusCode::kOutOfRange);
  }
  return configs_fault ? absl::InvalidArgumentError(StrJoin(messages, "; "))
                       : absl::UnavailableError(StrJoin(messages, "; "));
}

}  // namespace

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
  // An ensemble's steps load first, each under its own lock, before this model's lock.
  if (absl::Status steps = LoadEnsembleStepsFirst(name, config_override, run); !steps.ok()) {
    if (run != nullptr) {
      absl::MutexLock lock(&run->mu);
      run->attempted.insert(name);
    }
    // A refused override leaves what serves, and readiness, as they were.
    if (config_override) return steps;
    std::shared_ptr<absl::Mutex> model_lock = ModelLock(name);
    absl::MutexLock lock(model_lock.get());
    return RecordModelFailure(name, steps);
  }
  return LoadOneModel(name, std::move(config_override), run);
}

absl::Status ModelManager::LoadOneModel(const std::string& name, std::optional<inference::ModelConfig> override,
                                        LoadRun* run) {
  if (run != nullptr) {
    absl::MutexLock lock(&run->mu);
    run->attempted.insert(name);
  }
  std::shared_ptr<absl::Mutex> model_lock = ModelLock(name);
  absl::MutexLock lock(model_lock.get());
  return LoadModelLocked(name, std::move(override), run);
}

absl::Status ModelManager::LoadModelLocked(const std::string& name,
                                           std::optional<inference::ModelConfig> override, LoadRun* run) {
  const bool from_override = override.has_value();
  auto plan = PlanLoad(name, std::move(override));
  if (plan.ok()) {
    // Checked now against what serves (the ensembles above this one included), and again
    // when the versions are swapped in, against what serves then.
    absl::ReaderMutexLock lock(&mu_);
    if (absl::Status nesting = CheckNestingLocked(name, EnsembleStepNames(*plan->config)); !nesting.ok()) {
      plan = nesting;
    }
  }
  // A rejected override is a bad request (400), not a broken model: what serves, and
  // readiness, stay as they were.
  if (!plan.ok() && from_override) return plan.status();
  if (!plan.ok()) return RecordModelFailure(name, plan.status());
  std::map<int64_t, VersionSlot> current;
  LoadUndo undo;
  {
    absl::MutexLock lock(&mu_);
    auto it = models_.find(name);
    if (it != models_.end()) undo = {true, it->second.state, it->second.reason, it->second.backend};
    ModelEntry& entry = models_[name];
    if (entry.versions.empty()) entry.state = ModelState::kLoading;
    entry.backend = plan->config->backend();
    current = entry.versions;
  }
  // Load what changed beside what serves; reuse versions whose fingerprint is the same.
  std::vector<absl::Status> failures;
  std::map<int64_t, VersionSlot> next = LoadVersions(name, *plan, current, run, failures);
  // An override whose versions fail for the config's own fault (a file it names, a value
  // its backend refuses, its ensemble plan) is refused as a whole, as a bad plan is.
  absl::Status refused;
  if (from_override && !failures.empty()) {
    refused = VersionFailures(failures);
    if (refused.code() != absl::StatusCode::kInvalidArgument) refused = absl::OkStatus();
  }
  std::vector<std::shared_ptr<ModelVersion>> retired;
  {
    absl::MutexLock lock(&mu_);
    // Another load may have changed the nesting since the check above.
    if (refused.ok()) refused = CheckNestingLocked(name, ServingSteps(next));
    retired = refused.ok() ? SwapInLocked(name, *plan, std::move(next))
                           : UndoLoadLocked(name, undo, from_override, current, next);
  }
  current.clear();  // our own copies of the old handles must not delay the drain
  next.clear();
  RetireVersions(std::move(retired), absl::Now() + absl::FromChrono(options_.drain_timeout));
  if (!refused.ok()) return from_override ? refused : RecordModelFailure(name, refused);
  if (!failures.empty()) return VersionFailures(failures);
  return absl::OkStatus();
}

std::vector<std::shared_ptr<ModelVersion>> ModelManager::SwapInLocked(const std::string& name, const LoadPlan& plan,
                                                                      std::map<int64_t, VersionSlot> next) {
  std::vector<std::shared_ptr<ModelVersion>> retired;
  ModelEntry& entry = models_[name];
  for (auto& [v, slot] : entry.versions) {
    auto kept = next.find(v);
    if (slot.model && (kept == next.end() || kept->second.model != slot.model)) retired.push_back(slot.model);
  }
  ensemble_graph_.Set(name, ServingSteps(next));
  entry.versions = std::move(next);
  entry.state = ModelState::kReady;
  entry.reason.clear();
  entry.required = true;
  entry.fingerprint = plan.model_fingerprint;
  entry.canary.reset();
  if (plan.canary) {
    int64_t baseline = plan.canary->baseline_version.value_or(0);
    for (const auto& [v, slot] : entry.versions) {
      if (!plan.canary->baseline_version && v != plan.canary->canary_version) baseline = v;
    }
    entry.canary = std::make_shared<CanaryController>(*plan.canary, baseline);
  }
  return retired;
}

std::vector<std::shared_ptr<ModelVersion>> ModelManager::UndoLoadLocked(const std::string& name, const LoadUndo& undo,
                                                                        bool from_override,
                                                                        const std::map<int64_t, VersionSlot>& current,
                                                                        const std::map<int64_t, VersionSlot>& next) {
  std::vector<std::shared_ptr<ModelVersion>> retired;  // the new versions: they never serve
  for (const auto& [v, slot] : next) {
    auto kept = current.find(v);
    if (slot.model && (kept == current.end() || kept->second.model != slot.model)) retired.push_back(slot.model);
  }
  if (!from_override) return retired;  // the caller records the failure
  auto it = models_.find(name);
  if (it == models_.end()) return retired;
  if (!undo.existed) {
    models_.erase(it);
    return retired;
  }
  it->second.backend = undo.backend;
  if (it->second.versions.empty()) {  // the load had marked it LOADING
    it->second.state = undo.state;
    it->second.reason = undo.reason;
  }
  return retired;
}

std::map<int64_t, ModelManager::VersionSlot> ModelManager::LoadVersions(
    const std::string& name, const LoadPlan& plan, const std::map<int64_t, VersionSlot>& current, LoadRun* run,
    std::vector<absl::Status>& failures) {
  std::map<int64_t, VersionSlot> next;
  const bool ensemble = IsEnsemble(*plan.config);
  for (int64_t v : plan.versions) {
    const uint64_t fingerprint = plan.version_fingerprints.at(v);
    auto old = current.find(v);
    // An ensemble is always rebuilt: its plan depends on the step models serving now.
    if (old != current.end() && old->second.model && old->second.fingerprint == fingerprint && !ensemble) {
      next[v] = old->second;
      continue;
    }
    LoadTimings timings;
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::shared_ptr<ModelVersion>> loaded;
    if (ensemble) {
      loaded = LoadEnsembleVersion(plan, name, v);
    } else {
      ModelVersion::Options version_options{plan.config, v, repository_.ModelDir(name), plan.backend,
                                            default_intra_op_threads_.load(), options_.max_queue_size,
                                            options_.metrics};
      version_options.response_cache = options_.response_cache;
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
      run->records.push_back({name, v, loaded.ok(), ensemble, start - run->start, end - run->start, timings});
    }
    if (loaded.ok()) {
      next[v] = VersionSlot{ModelState::kReady, "", std::move(*loaded), fingerprint};
      // One line per version: where its load time went (docs/cold_start.md).
      INFERA_LOG(INFO) << "loaded model '" << name << "' version " << v << " in " << RoundedMillis(timings.total)
                       << " ms" << (ensemble ? "" : StrCat(": ", timings.Describe()));
      continue;
    }
    if (old != current.end() && old->second.model) {
      next[v] = old->second;  // keep serving the previous load of this version
      next[v].reason = StrCat("reload failed, previous load still serves: ", loaded.status().message());
    } else {
      next[v] = VersionSlot{ModelState::kUnavailable, std::string(loaded.status().message()), nullptr, 0};
    }
    failures.push_back(loaded.status());
    INFERA_LOG(ERROR) << "failed to load: " << loaded.status().message();
  }
  return next;
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
    ensemble_graph_.Set(name, {});
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
    ensemble_graph_ = EnsembleGraph();
  }
  // Outside the lock: draining waits for in-flight requests.
  RetireVersions(std::move(versions), drain_deadline);
}

}  // namespace infera
