// ModelManager: lookups, routing, index, readiness, canary judging. Loading and
// unloading are in model_manager_loading.cc, the start-up load in
// model_manager_startup.cc, ensembles' loading in model_manager_ensembles.cc.
#include "manager/model_manager.h"

#include <algorithm>

#include "common/logging.h"
#include "common/str_cat.h"

namespace infera {

std::string_view ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kLoading: return "LOADING";
    case ModelState::kReady: return "READY";
    case ModelState::kUnavailable: return "UNAVAILABLE";
    case ModelState::kUnloading: return "UNLOADING";
  }
  return "UNKNOWN";
}

absl::Status UnknownModelError(std::string_view name) {
  return absl::NotFoundError(StrCat("Request for unknown model: '", name, "' is not found"));
}

absl::StatusOr<std::unique_ptr<ModelManager>> ModelManager::Create(Options options) {
  auto repository = ModelRepository::Open(options.repository);
  if (!repository.ok()) return repository.status();
  return std::unique_ptr<ModelManager>(new ModelManager(std::move(options), std::move(*repository)));
}

ModelManager::ModelManager(Options options, ModelRepository repository)
    : options_(std::move(options)), repository_(std::move(repository)) {}

ModelManager::~ModelManager() { UnloadAll(); }

namespace {

absl::Status NoAvailableVersionsError(std::string_view name, std::string_view reason) {
  return absl::UnavailableError(StrCat("Request for unknown model: '", name, "' has no available versions",
                                       reason.empty() ? "" : ": ", reason));
}

}  // namespace

absl::StatusOr<ModelHandle> ModelManager::GetModelVersion(
    std::string_view name, std::optional<int64_t> version, std::string_view routing_key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return UnknownModelError(name);
  return SelectVersionLocked(name, it->second, version, routing_key);
}

absl::StatusOr<VersionChoice> ModelManager::ChooseVersion(std::string_view name,
                                                          std::optional<int64_t> version) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return UnknownModelError(name);
  const ModelEntry& entry = it->second;
  if (version || !entry.canary || entry.versions.empty()) {
    // The routing key is not consulted: the choice is settled now.
    return VersionChoice(SelectVersionLocked(name, entry, version, {}));
  }
  // A canary split, routed once the request's key is known: take both sides (when ready)
  // and the newest ready version, GetModelVersion's fallback.
  auto ready_model = [&](int64_t v) -> const std::shared_ptr<ModelVersion>* {
    auto slot = entry.versions.find(v);
    return slot != entry.versions.end() && slot->second.state == ModelState::kReady && slot->second.model
               ? &slot->second.model
               : nullptr;
  };
  const std::shared_ptr<ModelVersion>* canary = ready_model(entry.canary->config().canary_version);
  const std::shared_ptr<ModelVersion>* baseline = ready_model(entry.canary->baseline_version());
  const std::shared_ptr<ModelVersion>* newest = nullptr;
  for (auto v = entry.versions.rbegin(); v != entry.versions.rend() && newest == nullptr; ++v) {
    newest = ready_model(v->first);
  }
  ModelHandle canary_side = canary ? ModelVersion::AcquireHandle(*canary) : ModelHandle();
  ModelHandle baseline_side = baseline ? ModelVersion::AcquireHandle(*baseline) : ModelHandle();
  ModelHandle fallback = newest == nullptr   ? ModelHandle()
                         : newest == canary   ? canary_side
                         : newest == baseline ? baseline_side
                                              : ModelVersion::AcquireHandle(*newest);
  return VersionChoice(entry.canary, std::move(canary_side), std::move(baseline_side), std::move(fallback),
                       NoAvailableVersionsError(name, entry.reason));
}

absl::StatusOr<ModelHandle> ModelManager::SelectVersionLocked(
    std::string_view name, const ModelEntry& entry, std::optional<int64_t> version,
    std::string_view routing_key) const {
  if (entry.versions.empty()) {
    return absl::UnavailableError(StrCat("Request for unknown model: '", name, "' has no available versions (",
                                         ModelStateName(entry.state), ")", entry.reason.empty() ? "" : ": ",
                                         entry.reason));
  }
  auto ready = [&](int64_t v) -> const VersionSlot* {
    auto slot = entry.versions.find(v);
    return slot != entry.versions.end() && slot->second.state == ModelState::kReady && slot->second.model
               ? &slot->second
               : nullptr;
  };
  if (version) {
    auto v = entry.versions.find(*version);
    if (v == entry.versions.end()) {
      std::vector<int64_t> known;
      for (const auto& [number, unused] : entry.versions) known.push_back(number);
      return absl::NotFoundError(StrCat("Request for unknown model: '", name, "' version ", *version,
                                        " is not found (versions: ", StrJoin(known, ", "), ")"));
    }
    if (!ready(*version)) {
      return absl::UnavailableError(StrCat("Request for unknown model: '", name, "' version ", *version,
                                           " is not at ready state (", ModelStateName(v->second.state), ")",
                                           v->second.reason.empty() ? "" : ": ", v->second.reason));
    }
    return ModelVersion::AcquireHandle(v->second.model);
  }
  if (entry.canary) {
    const int64_t side = entry.canary->Route(routing_key) ? entry.canary->config().canary_version
                                                          : entry.canary->baseline_version();
    if (const VersionSlot* slot = ready(side)) return ModelVersion::AcquireHandle(slot->model);
  }
  for (auto v = entry.versions.rbegin(); v != entry.versions.rend(); ++v) {
    if (v->second.state == ModelState::kReady && v->second.model) return ModelVersion::AcquireHandle(v->second.model);
  }
  return NoAvailableVersionsError(name, entry.reason);
}

absl::StatusOr<std::vector<ModelVersionSnapshot>> ModelManager::Snapshots(std::string_view name,
                                                                         std::optional<int64_t> version) const {
  std::vector<ModelVersionSnapshot> snapshots;
  if (name.empty() && version) return absl::InvalidArgumentError("a model version needs a model name");
  if (version) {
    auto model = GetModelVersion(name, version);
    if (!model.ok()) return model.status();
    snapshots.push_back((*model)->Snapshot());
    return snapshots;
  }
  // Counted handles, taken under the lock and snapshotted outside it (a snapshot reads an
  // LLM engine's metrics, which takes the engine's lock).
  std::vector<ModelHandle> selected;
  {
    absl::ReaderMutexLock lock(&mu_);
    if (!name.empty() && models_.find(name) == models_.end()) return UnknownModelError(name);
    for (const auto& [model_name, entry] : models_) {
      if (!name.empty() && model_name != name) continue;
      for (const auto& [number, slot] : entry.versions) {
        if (slot.state == ModelState::kReady && slot.model) selected.push_back(ModelVersion::AcquireHandle(slot.model));
      }
    }
  }
  snapshots.reserve(selected.size());
  for (ModelHandle& handle : selected) {
    snapshots.push_back(handle->Snapshot());
    handle.reset();
  }
  return snapshots;
}

absl::StatusOr<std::vector<int64_t>> ModelManager::ReadyVersions(std::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return UnknownModelError(name);
  std::vector<int64_t> ready;
  for (const auto& [number, slot] : it->second.versions) {
    if (slot.state == ModelState::kReady) ready.push_back(number);
  }
  return ready;
}

std::vector<ModelIndexEntry> ModelManager::Index() const {
  std::vector<ModelIndexEntry> index;
  std::vector<std::string> on_disk = repository_.ListModels().value_or(std::vector<std::string>{});
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, entry] : models_) {
    if (entry.versions.empty()) {
      index.push_back({name, std::nullopt, entry.state, entry.reason, entry.backend});
      continue;
    }
    for (const auto& [number, slot] : entry.versions) {
      std::string reason = slot.reason;
      if (reason.empty() && !entry.reason.empty()) reason = entry.reason;  // e.g. a failed reload
      if (reason.empty() && entry.canary && entry.canary->config().canary_version == number &&
          entry.canary->state() != CanaryState::kActive) {
        reason = StrCat("canary ", CanaryStateName(entry.canary->state()), ": ", entry.canary->reason());
      }
      index.push_back({name, number, slot.state, reason, entry.backend});
    }
  }
  for (const std::string& name : on_disk) {
    if (models_.find(name) == models_.end()) {
      index.push_back({name, std::nullopt, ModelState::kUnavailable, "not loaded", ""});
    }
  }
  std::sort(index.begin(), index.end(), [](const ModelIndexEntry& a, const ModelIndexEntry& b) {
    return std::tie(a.name, a.version) < std::tie(b.name, b.version);
  });
  return index;
}

std::vector<CanaryStatus> ModelManager::Canaries() const {
  std::vector<CanaryStatus> result;
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, entry] : models_) {
    if (!entry.canary) continue;
    const CanaryController& c = *entry.canary;
    const CanaryState state = c.state();
    const double weight = state == CanaryState::kRolledBack ? 0
                          : state == CanaryState::kPromoted ? 100
                                                            : c.config().weight_percent;
    result.push_back({name, c.config().canary_version, c.baseline_version(), weight, state, c.reason()});
  }
  return result;
}

absl::Status ModelManager::PromoteCanary(std::string_view name) {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end() || !it->second.canary) {
    return absl::NotFoundError(StrCat("model '", name, "' has no canary"));
  }
  it->second.canary->Promote();
  INFERA_LOG(INFO) << "canary of model '" << name << "' promoted";
  return absl::OkStatus();
}

void ModelManager::EvaluateCanaries() const {
  struct Pair {
    std::shared_ptr<CanaryController> canary;
    std::shared_ptr<ModelVersion> baseline, candidate;
  };
  std::vector<Pair> pairs;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [name, entry] : models_) {
      if (!entry.canary) continue;
      auto b = entry.versions.find(entry.canary->baseline_version());
      auto c = entry.versions.find(entry.canary->config().canary_version);
      if (b == entry.versions.end() || c == entry.versions.end() || !b->second.model || !c->second.model) continue;
      pairs.push_back({entry.canary, b->second.model, c->second.model});
    }
  }
  auto sample = [](const ModelVersion& v) {
    const StatisticsSnapshot s = v.statistics().Snapshot();
    const uint64_t errors = s.failures.backend_error + s.failures.timeout;
    return CanarySample{s.success.count + errors, errors, v.statistics().latency().Snapshot()};
  };
  const SteadyTime now = std::chrono::steady_clock::now();
  for (Pair& p : pairs) p.canary->Observe(now, sample(*p.baseline), sample(*p.candidate));
}

bool ModelManager::AllModelsReady() const {
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, entry] : models_) {
    if (!entry.required) continue;
    if (entry.state != ModelState::kReady || entry.versions.empty()) return false;
    for (const auto& [number, slot] : entry.versions) {
      if (slot.state != ModelState::kReady) return false;
    }
  }
  return true;
}

void ModelManager::RefreshMetrics() const {
  std::vector<std::shared_ptr<ModelVersion>> versions;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [name, entry] : models_) {
      for (const auto& [number, slot] : entry.versions) {
        if (slot.model) versions.push_back(slot.model);
      }
    }
  }
  for (const auto& version : versions) version->RefreshMetrics();
}

}  // namespace infera
