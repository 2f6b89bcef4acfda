// ModelManager: the start-up load (LoadAll; docs/cold_start.md): the thread budget, the
// order (largest first, ensembles last) and the load pool.
#include <algorithm>
#include <filesystem>

#include "common/logging.h"
#include "common/str_cat.h"
#include "manager/load_pool.h"
#include "manager/model_manager.h"
#include "manager/model_manager_internal.h"
#include "repository/model_config_loader.h"

namespace infera {

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
  // time (an ensemble loads the steps it lacks first, nested ensembles included; those
  // are not loaded again).
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
      // Not ensembles: no steps to load first.
      pool.Submit([this, &run, name = name] { LoadOneModel(name, std::nullopt, &run).IgnoreError(); });
    }
    pool.Wait();
  }
  run.pool = nullptr;
  for (const std::string& name : ensembles) {
    if (!Attempted(&run, name)) LoadModelWith(name, std::nullopt, &run).IgnoreError();
  }
  result.wall = std::chrono::steady_clock::now() - run.start;
  absl::MutexLock lock(&run.mu);
  result.versions = std::move(run.records);
  return result;
}

}  // namespace infera
