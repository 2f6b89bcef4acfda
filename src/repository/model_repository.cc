#include "repository/model_repository.h"

#include <algorithm>
#include <charconv>
#include <system_error>

#include "common/str_cat.h"

namespace infera {
namespace fs = std::filesystem;

absl::StatusOr<ModelRepository> ModelRepository::Open(const fs::path& root) {
  std::error_code ec;
  const fs::file_status status = fs::status(root, ec);
  if (ec || !fs::exists(status)) {
    return absl::NotFoundError(StrCat("model repository '", root.string(), "' does not exist"));
  }
  if (!fs::is_directory(status)) {
    return absl::FailedPreconditionError(
        StrCat("model repository '", root.string(), "' is not a directory"));
  }
  // A directory the server may not list fails here, at start, rather than serving an
  // empty repository.
  if (fs::directory_iterator(root, ec); ec) {
    return absl::PermissionDeniedError(
        StrCat("cannot read model repository '", root.string(), "': ", ec.message()));
  }
  return ModelRepository(fs::absolute(root, ec));
}

bool ModelRepository::IsValidModelName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return c != '/' && c != '\\' && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  });
}

absl::StatusOr<std::vector<std::string>> ModelRepository::ListModels() const {
  std::error_code ec;
  std::vector<std::string> models;
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code dir_ec;
    if (!IsValidModelName(name) || !it->is_directory(dir_ec)) continue;
    models.push_back(name);
  }
  if (ec) {
    return absl::UnavailableError(
        StrCat("cannot list model repository '", root_.string(), "': ", ec.message()));
  }
  std::sort(models.begin(), models.end());
  return models;
}

absl::StatusOr<std::vector<int64_t>> ModelRepository::ListVersions(
    const std::string& model) const {
  std::error_code ec;
  std::vector<int64_t> versions;
  const fs::path dir = ModelDir(model);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code dir_ec;
    if (name.empty() || name[0] == '0' || !it->is_directory(dir_ec)) continue;
    int64_t version = 0;
    auto [ptr, parse_ec] = std::from_chars(name.data(), name.data() + name.size(), version);
    if (parse_ec != std::errc() || ptr != name.data() + name.size() || version < 1) continue;
    versions.push_back(version);
  }
  if (ec) {
    return absl::UnavailableError(
        StrCat("cannot list model directory '", dir.string(), "': ", ec.message()));
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

}  // namespace infera
