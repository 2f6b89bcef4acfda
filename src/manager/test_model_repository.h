// Test-only helper: a model repository in a fresh temporary folder and a ModelManager
// that loads every model in it. Shared by the unit tests that need a real repository
// (manager, protocol, http, grpc), which all need the same setup.
#ifndef INFERA_MANAGER_TEST_MODEL_REPOSITORY_H_
#define INFERA_MANAGER_TEST_MODEL_REPOSITORY_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/backend_registry.h"
#include "common/str_cat.h"
#include "manager/model_manager.h"

namespace infera {

class TestModelRepository {
 public:
  // The folder is <temp>/infera_<tag>_<pid>; whatever is there already is removed.
  explicit TestModelRepository(std::string_view tag)
      : root_(std::filesystem::temp_directory_path() / StrCat("infera_", tag, "_", ::getpid())) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  // Removes the folder: destroy the manager made by Load() first.
  ~TestModelRepository() { std::filesystem::remove_all(root_); }
  TestModelRepository(const TestModelRepository&) = delete;
  TestModelRepository& operator=(const TestModelRepository&) = delete;

  // Writes <root>/<name>/config.pbtxt (the text `config`) and one folder per version.
  void AddModel(const std::string& name, std::string_view config, const std::vector<int>& versions = {1}) {
    std::filesystem::create_directories(root_ / name);
    std::ofstream(root_ / name / "config.pbtxt") << config;
    for (int v : versions) std::filesystem::create_directories(root_ / name / std::to_string(v));
  }

  // A ModelManager over this repository with `backends` (which must outlive it), after
  // LoadAll(): models that fail to load stay listed as unavailable.
  absl::StatusOr<std::unique_ptr<ModelManager>> Load(const BackendRegistry* backends) const {
    ModelManager::Options options;
    options.repository = root_;
    options.backends = backends;
    auto manager = ModelManager::Create(std::move(options));
    if (!manager.ok()) return manager.status();
    (*manager)->LoadAll();
    return manager;
  }

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace infera

#endif  // INFERA_MANAGER_TEST_MODEL_REPOSITORY_H_
