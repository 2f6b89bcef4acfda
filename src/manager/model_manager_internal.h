// ModelManager's load-time structs, shared by its .cc files (model_manager_loading.cc,
// model_manager_startup.cc, model_manager_ensembles.cc); not for other modules.
#ifndef INFERA_MANAGER_MODEL_MANAGER_INTERNAL_H_
#define INFERA_MANAGER_MODEL_MANAGER_INTERNAL_H_

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "manager/load_pool.h"
#include "manager/model_manager.h"

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
  // Models this start-up has loaded or tried (an ensemble's steps load before it: they
  // are not loaded again when their own turn comes).
  std::set<std::string> attempted ABSL_GUARDED_BY(mu);
};

}  // namespace infera

#endif  // INFERA_MANAGER_MODEL_MANAGER_INTERNAL_H_
