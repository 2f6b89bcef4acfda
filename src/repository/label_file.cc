#include "repository/label_file.h"

#include <fstream>
#include <optional>
#include <system_error>

#include "common/str_cat.h"
#include "repository/confined_path.h"

namespace infera {

absl::StatusOr<std::vector<std::string>> LoadLabelFile(const std::filesystem::path& model_dir,
                                                       std::string_view filename,
                                                       std::string_view what) {
  std::optional<std::filesystem::path> path = ResolveInside(model_dir, std::string(filename));
  if (!path) {
    return absl::InvalidArgumentError(
        StrCat(what, " must name a file inside the model directory"));
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(*path, ec)) {
    return absl::InvalidArgumentError(
        StrCat(what, ": ", path->string(), " is not a readable file"));
  }
  std::ifstream in(*path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(StrCat(what, ": cannot open ", path->string()));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  if (in.bad())
    return absl::InvalidArgumentError(StrCat(what, ": cannot read ", path->string()));
  return lines;
}

}  // namespace infera
