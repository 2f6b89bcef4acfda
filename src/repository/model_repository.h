// ModelRepository: the Triton-layout directory tree on disk.
//
//   <root>/
//     <model>/config.pbtxt
//     <model>/<version>/...        version folders are integers >= 1
//
// Only reads the file system; parsing and loading belong to the config loader and the
// model manager. Names that are not plain directory names (hidden, "..", containing
// '/') never come out of it, so a name it returns is safe to join to the root.
//
// Thread-safe (no mutable state).
#ifndef INFERA_REPOSITORY_MODEL_REPOSITORY_H_
#define INFERA_REPOSITORY_MODEL_REPOSITORY_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace infera {

class ModelRepository {
 public:
  // NotFound / FailedPrecondition when `root` is missing or not a directory,
  // PermissionDenied when it cannot be listed.
  static absl::StatusOr<ModelRepository> Open(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }

  // Model directory names, sorted. Hidden entries and plain files are skipped.
  absl::StatusOr<std::vector<std::string>> ListModels() const;

  // Version numbers of <root>/<model>, ascending. Folders that are not positive
  // integers (e.g. "reference", "01") are skipped.
  absl::StatusOr<std::vector<int64_t>> ListVersions(const std::string& model) const;

  std::filesystem::path ModelDir(const std::string& model) const { return root_ / model; }

  // True when `name` is usable as a model directory name (no path tricks).
  static bool IsValidModelName(std::string_view name);

 private:
  explicit ModelRepository(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path root_;
};

}  // namespace infera

#endif  // INFERA_REPOSITORY_MODEL_REPOSITORY_H_
