#include "backend/backend_registry.h"

#include "common/str_cat.h"

namespace infera {

void BackendRegistry::Register(std::unique_ptr<Backend> backend,
                               std::vector<std::string> platforms) {
  Backend* raw = backend.get();
  by_name_[std::string(raw->name())] = raw;
  for (std::string& platform : platforms) by_platform_[std::move(platform)] = raw;
  backends_.push_back(std::move(backend));
}

absl::StatusOr<Backend*> BackendRegistry::Find(const inference::ModelConfig& config) const {
  Backend* by_backend = nullptr;
  Backend* by_platform = nullptr;
  if (!config.backend().empty()) {
    auto it = by_name_.find(config.backend());
    if (it == by_name_.end()) {
      return absl::NotFoundError(StrCat("backend: unknown backend '", config.backend(),
                                              "' (available: ",
                                              StrJoin(Names(), ", "), ")"));
    }
    by_backend = it->second;
  }
  if (!config.platform().empty()) {
    auto it = by_platform_.find(config.platform());
    if (it == by_platform_.end()) {
      std::vector<std::string> platforms;
      for (const auto& [name, unused] : by_platform_) platforms.push_back(name);
      return absl::NotFoundError(StrCat("platform: unknown platform '", config.platform(),
                                              "' (available: ",
                                              StrJoin(platforms, ", "), ")"));
    }
    by_platform = it->second;
  }
  if (by_backend && by_platform && by_backend != by_platform) {
    return absl::InvalidArgumentError(
        StrCat("platform '", config.platform(), "' and backend '", config.backend(),
                     "' name different runtimes"));
  }
  if (by_backend) return by_backend;
  if (by_platform) return by_platform;
  return absl::InvalidArgumentError(
      "neither 'backend' nor 'platform' is set: the config must say which runtime serves the "
      "model");
}

std::vector<std::string> BackendRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, unused] : by_name_) names.push_back(name);
  return names;
}

}  // namespace infera
