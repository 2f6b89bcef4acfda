// ModelManager: what loading does for ensembles (docs/lifecycle.md, "Ensembles: loading
// order"): their steps load first, in an order found without recursion, and no load may
// make the serving ensembles nest in a cycle or past kMaxEnsembleDepth.
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "manager/model_manager.h"
#include "manager/model_manager_internal.h"
#include "repository/config_limits.h"
#include "repository/model_config_loader.h"

namespace infera {

bool ModelManager::IsEnsemble(const inference::ModelConfig& config) { return config.platform() == "ensemble"; }

bool ModelManager::Attempted(LoadRun* run, const std::string& name) {
  if (run == nullptr) return false;
  absl::MutexLock lock(&run->mu);
  return run->attempted.count(name) > 0;
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelManager::LoadEnsembleVersion(const LoadPlan& plan,
                                                                                 const std::string& name,
                                                                                 int64_t version) {
  ASSIGN_OR_RETURN(std::unique_ptr<EnsembleScheduler> scheduler,
                   EnsembleScheduler::Create(*plan.config, EnsembleStepResolver()));
  ModelVersion::Options options{plan.config, version, repository_.ModelDir(name), nullptr,
                                default_intra_op_threads_.load(), options_.max_queue_size, options_.metrics};
  options.response_cache = options_.response_cache;
  return ModelVersion::CreateComposite(std::move(options), std::move(scheduler));
}

std::optional<std::vector<std::string>> ModelManager::NestingOf(const std::string& model) const {
  {
    absl::ReaderMutexLock lock(&mu_);
    if (const std::vector<std::string>* steps = ensemble_graph_.Steps(model)) return *steps;
    auto it = models_.find(model);
    if (it != models_.end()) {
      for (const auto& [v, slot] : it->second.versions) {
        if (slot.model) return std::nullopt;  // serves, and not as an ensemble
      }
    }
  }
  // It does not serve: what would load is its config.pbtxt. (A model a start-up load has
  // already tried and failed is not loaded again, but its config still tells how deep a
  // chain through it would be: the refusal names the nesting, not a missing step.)
  if (!ModelRepository::IsValidModelName(model)) return std::nullopt;
  absl::StatusOr<inference::ModelConfig> config = LoadModelConfig(repository_.ModelDir(model));
  if (!config.ok() || !IsEnsemble(*config)) return std::nullopt;  // its own load reports errors
  return EnsembleStepNames(*config);
}

absl::Status ModelManager::LoadEnsembleStepsFirst(const std::string& name,
                                                  const std::optional<inference::ModelConfig>& override,
                                                  LoadRun* run) {
  // The config the load will plan with; PlanLoad reads and checks it again and reports
  // its errors, so one that does not parse or validate has no steps to load here.
  std::vector<std::string> steps;
  if (override) {
    inference::ModelConfig config = *override;  // validation fills in defaults
    if (!IsEnsemble(config) || !ValidateModelConfig("config override", name, config).ok()) return absl::OkStatus();
    steps = EnsembleStepNames(config);
  } else {
    absl::StatusOr<inference::ModelConfig> config = LoadModelConfig(repository_.ModelDir(name));
    if (!config.ok() || !IsEnsemble(*config)) return absl::OkStatus();
    steps = EnsembleStepNames(*config);
  }
  // Depth first over the configs, each read once, with an explicit stack: a chain past
  // the bound is refused after reading kMaxEnsembleDepth + 1 configs.
  NestingWalk walk(kMaxEnsembleDepth, [&](const std::string& model) -> std::optional<std::vector<std::string>> {
    if (model == name) return steps;
    return NestingOf(model);
  });
  if (absl::Status walked = walk.Walk(name); !walked.ok()) {
    return absl::InvalidArgumentError(StrCat("ensemble '", name, "': ", walked.message()));
  }
  // Triton: loading an ensemble loads its steps first (those not serving), here each
  // after its own steps, one lock at a time; each load checks the nesting again when it
  // swaps its versions in (CheckNestingLocked), so loads racing this one cannot close a
  // cycle either.
  for (const std::string& model : walk.order()) {
    if (model == name || Attempted(run, model) || !ModelRepository::IsValidModelName(model)) continue;
    auto ready = ReadyVersions(model);
    if (ready.ok() && !ready->empty()) continue;
    std::error_code ec;
    if (!std::filesystem::is_directory(repository_.ModelDir(model), ec)) continue;  // its plan names it
    absl::Status loaded = LoadOneModel(model, std::nullopt, run);
    if (!loaded.ok()) {
      INFERA_LOG(WARNING) << "ensemble '" << name << "': step model '" << model
                          << "' did not load: " << loaded.message();
    }
  }
  return absl::OkStatus();
}

absl::Status ModelManager::CheckNestingLocked(const std::string& name, const std::vector<std::string>& steps) const {
  absl::Status status = ensemble_graph_.CheckReplace(name, steps, kMaxEnsembleDepth);
  if (status.ok()) return status;
  return absl::InvalidArgumentError(StrCat("ensemble '", name, "': ", status.message()));
}

std::vector<std::string> ModelManager::ServingSteps(const std::map<int64_t, VersionSlot>& versions) {
  std::vector<std::string> steps;
  for (const auto& [v, slot] : versions) {
    if (!slot.model) continue;
    for (std::string& step : EnsembleStepNames(slot.model->config())) steps.push_back(std::move(step));
  }
  return steps;  // EnsembleGraph keeps them distinct
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

}  // namespace infera
