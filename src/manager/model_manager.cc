#include "manager/model_manager.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "common/logging.h"
#include "common/str_cat.h"
#include "repository/model_config_loader.h"
#include "repository/version_policy.h"

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

absl::StatusOr<std::unique_ptr<ModelManager>> ModelManager::Create(Options options) {
  auto repository = ModelRepository::Open(options.repository);
  if (!repository.ok()) return repository.status();
  return std::unique_ptr<ModelManager>(new ModelManager(std::move(options), std::move(*repository)));
}

ModelManager::ModelManager(Options options, ModelRepository repository)
    : options_(std::move(options)), repository_(std::move(repository)) {}

ModelManager::~ModelManager() { UnloadAll(); }

void ModelManager::LoadAll() {
  auto names = repository_.ListModels();
  if (!names.ok()) {
    INFERA_LOG(ERROR) << names.status().message();
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& name : *names) models_[name];  // LOADING until done
  }
  // Read every config first: the thread budget divides the cores among all compute
  // instances of all models, so that instances x threads <= cores unless a config
  // sets its own count.
  std::vector<absl::StatusOr<inference::ModelConfig>> configs;
  int compute_instances = 0;
  for (const std::string& name : *names) {
    configs.push_back(LoadModelConfig(repository_.ModelDir(name)));
    if (!configs.back().ok()) continue;
    auto backend = options_.backends->Find(*configs.back());
    if (!backend.ok() || !(*backend)->UsesIntraOpThreads()) continue;
    int versions = configs.back()->version_policy().has_latest()
                       ? static_cast<int>(configs.back()->version_policy().latest().num_versions())
                       : 1;
    for (const auto& group : configs.back()->instance_group()) {
      compute_instances += group.count() * std::max(1, versions);
    }
  }
  const int threads_per_instance = std::max(1, options_.num_cores / std::max(1, compute_instances));
  INFERA_LOG(INFO) << compute_instances << " compute instance(s) on " << options_.num_cores
                   << " core(s): " << threads_per_instance << " intra-op thread(s) each by default";

  // Loading is CPU-bound (deserialising, graph optimisation): a few workers in parallel.
  std::atomic<size_t> next{0};
  const int workers =
      std::clamp<int>(options_.max_parallel_loads, 1, std::max<int>(1, static_cast<int>(names->size())));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < names->size(); i = next++) {
        LoadModel((*names)[i], std::move(configs[i]), threads_per_instance);
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

void ModelManager::SetModelFailed(const std::string& name, const absl::Status& status) {
  INFERA_LOG(ERROR) << "model '" << name << "' failed to load: " << status.message();
  absl::MutexLock lock(&mu_);
  ModelEntry& entry = models_[name];
  entry.state = ModelState::kUnavailable;
  entry.reason = std::string(status.message());
}

void ModelManager::LoadModel(const std::string& name, absl::StatusOr<inference::ModelConfig> config,
                             int default_intra_op_threads) {
  if (!config.ok()) return SetModelFailed(name, config.status());
  auto backend = options_.backends->Find(*config);
  if (!backend.ok()) {
    return SetModelFailed(name, absl::InvalidArgumentError(StrCat(
        (repository_.ModelDir(name) / kModelConfigFilename).string(), ": ",
        backend.status().message())));
  }
  absl::Status valid = (*backend)->ValidateConfig(*config);
  if (!valid.ok()) {
    return SetModelFailed(name, absl::InvalidArgumentError(StrCat(
        (repository_.ModelDir(name) / kModelConfigFilename).string(), ": ", valid.message())));
  }
  auto available = repository_.ListVersions(name);
  if (!available.ok()) return SetModelFailed(name, available.status());
  auto versions = SelectVersions(config->version_policy(), *available);
  if (!versions.ok()) {
    return SetModelFailed(name, absl::Status(versions.status().code(),
                                             StrCat("model '", name, "': ", versions.status().message())));
  }
  auto shared_config = std::make_shared<const inference::ModelConfig>(std::move(*config));
  {
    absl::MutexLock lock(&mu_);
    ModelEntry& entry = models_[name];
    entry.state = ModelState::kReady;
    for (int64_t v : *versions) entry.versions[v];  // LOADING
  }
  for (int64_t v : *versions) {
    auto loaded = ModelVersion::Load({shared_config, v, repository_.ModelDir(name), *backend,
                                      default_intra_op_threads, options_.max_queue_size});
    absl::MutexLock lock(&mu_);
    VersionSlot& slot = models_[name].versions[v];
    if (loaded.ok()) {
      slot.state = ModelState::kReady;
      slot.model = std::move(*loaded);
      INFERA_LOG(INFO) << "loaded model '" << name << "' version " << v;
    } else {
      slot.state = ModelState::kUnavailable;
      slot.reason = std::string(loaded.status().message());
      INFERA_LOG(ERROR) << "failed to load: " << slot.reason;
    }
  }
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelManager::GetModelVersion(
    std::string_view name, std::optional<int64_t> version) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return absl::NotFoundError(StrCat("unknown model '", name, "'"));
  const ModelEntry& entry = it->second;
  if (entry.state != ModelState::kReady) {
    return absl::UnavailableError(StrCat("model '", name, "' is not ready (",
                                         ModelStateName(entry.state), "): ", entry.reason));
  }
  if (version) {
    auto v = entry.versions.find(*version);
    if (v == entry.versions.end()) {
      std::vector<int64_t> known;
      for (const auto& [number, unused] : entry.versions) known.push_back(number);
      return absl::NotFoundError(StrCat("model '", name, "' has no version ", *version,
                                        " (versions: ", StrJoin(known, ", "), ")"));
    }
    if (v->second.state != ModelState::kReady) {
      return absl::UnavailableError(StrCat("model '", name, "' version ", *version,
                                           " is not ready (", ModelStateName(v->second.state),
                                           ")", v->second.reason.empty() ? "" : ": ",
                                           v->second.reason));
    }
    return v->second.model;
  }
  for (auto v = entry.versions.rbegin(); v != entry.versions.rend(); ++v) {
    if (v->second.state == ModelState::kReady) return v->second.model;
  }
  return absl::UnavailableError(StrCat("model '", name, "' has no ready version"));
}

absl::StatusOr<std::vector<int64_t>> ModelManager::ReadyVersions(std::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return absl::NotFoundError(StrCat("unknown model '", name, "'"));
  std::vector<int64_t> ready;
  for (const auto& [number, slot] : it->second.versions) {
    if (slot.state == ModelState::kReady) ready.push_back(number);
  }
  return ready;
}

std::vector<ModelIndexEntry> ModelManager::Index() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<ModelIndexEntry> index;
  for (const auto& [name, entry] : models_) {
    if (entry.versions.empty() || entry.state != ModelState::kReady) {
      index.push_back({name, std::nullopt, entry.state, entry.reason});
      continue;
    }
    for (const auto& [number, slot] : entry.versions) {
      index.push_back({name, number, slot.state, slot.reason});
    }
  }
  return index;
}

bool ModelManager::AllModelsReady() const {
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, entry] : models_) {
    if (entry.state != ModelState::kReady) return false;
    for (const auto& [number, slot] : entry.versions) {
      if (slot.state != ModelState::kReady) return false;
    }
  }
  return true;
}

void ModelManager::UnloadAll() {
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
  for (auto& version : versions) version->Shutdown();
}

}  // namespace infera
