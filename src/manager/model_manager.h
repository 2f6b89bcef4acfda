// ModelManager: which models exist, which versions are loaded, and the handle a
// request uses to reach one.
//
// At start it loads every model in the repository (Triton's `--model-control-mode
// none`), several at a time. A model whose config or files are bad fails alone: it is
// recorded as UNAVAILABLE with the reason (shown by Index() and in errors) and every
// other model still loads.
//
// Thread-safe. GetModelVersion() is on the request path: one shared lock and a
// shared_ptr copy.
//
// Usage:
//   ASSIGN_OR_RETURN(auto manager, ModelManager::Create(options));
//   manager->LoadAll();
//   ASSIGN_OR_RETURN(std::shared_ptr<ModelVersion> model,
//                    manager->GetModelVersion("resnet18", std::nullopt));
//   model->Infer(std::move(request), std::move(callback));
#ifndef INFERA_MANAGER_MODEL_MANAGER_H_
#define INFERA_MANAGER_MODEL_MANAGER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "backend/backend_registry.h"
#include "manager/model_version.h"
#include "repository/model_repository.h"

namespace infera {

enum class ModelState { kLoading, kReady, kUnavailable, kUnloading };
std::string_view ModelStateName(ModelState state);  // "LOADING", "READY", ...

// One row of the repository index.
struct ModelIndexEntry {
  std::string name;
  std::optional<int64_t> version;  // unset when the model failed before versions were known
  ModelState state = ModelState::kUnavailable;
  std::string reason;  // why it is not ready; empty when ready
};

class ModelManager {
 public:
  struct Options {
    std::filesystem::path repository;
    const BackendRegistry* backends = nullptr;  // outlives the manager
    // Cores shared by the instances of every compute backend: each instance's default
    // intra-op thread budget is num_cores / (their total), at least 1.
    int num_cores = 1;
    size_t max_queue_size = 1024;               // per model version
    int max_parallel_loads = 2;
  };

  // NotFound/FailedPrecondition when the repository cannot be opened.
  static absl::StatusOr<std::unique_ptr<ModelManager>> Create(Options options);
  ~ModelManager();

  // Loads every model in the repository, `max_parallel_loads` at a time; returns when
  // all have loaded or failed. Failures are recorded per model, not returned.
  void LoadAll();

  // The version to serve: `version`, or when unset the highest READY version.
  // NotFound for an unknown model or version, Unavailable when not ready (with why).
  absl::StatusOr<std::shared_ptr<ModelVersion>> GetModelVersion(
      std::string_view name, std::optional<int64_t> version) const;

  // Versions of `name` that are READY, ascending. NotFound for an unknown model.
  absl::StatusOr<std::vector<int64_t>> ReadyVersions(std::string_view name) const;

  // Every known model and version with its state, sorted by name then version.
  std::vector<ModelIndexEntry> Index() const;

  // True when every model found in the repository is READY (Triton's strict readiness).
  bool AllModelsReady() const;

  // Drains and unloads every version (at shutdown).
  void UnloadAll();

 private:
  struct VersionSlot {
    ModelState state = ModelState::kLoading;
    std::string reason;
    std::shared_ptr<ModelVersion> model;
  };
  struct ModelEntry {
    ModelState state = ModelState::kLoading;  // of the model as a whole (config stage)
    std::string reason;
    std::map<int64_t, VersionSlot> versions;
  };

  ModelManager(Options options, ModelRepository repository);
  void LoadModel(const std::string& name, absl::StatusOr<inference::ModelConfig> config,
                 int default_intra_op_threads);
  void SetModelFailed(const std::string& name, const absl::Status& status);

  const Options options_;
  const ModelRepository repository_;
  mutable absl::Mutex mu_;
  std::map<std::string, ModelEntry, std::less<>> models_ ABSL_GUARDED_BY(mu_);
};

}  // namespace infera

#endif  // INFERA_MANAGER_MODEL_MANAGER_H_
