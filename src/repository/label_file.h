// Label files: one class label per line, as Triton's `label_filename` and infera's
// `classify` backend read them.
//
// Thread-safe (pure function).
#ifndef INFERA_REPOSITORY_LABEL_FILE_H_
#define INFERA_REPOSITORY_LABEL_FILE_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace infera {

// Reads `filename` (relative to `model_dir`, confined to it: no "..", no absolute path,
// no symlink out) as one label per line; a trailing '\r' is dropped, a final newline
// does not add an empty label. Error (FailedPrecondition) starting with `what` when the
// name leaves the model directory or the file cannot be read.
absl::StatusOr<std::vector<std::string>> LoadLabelFile(const std::filesystem::path& model_dir,
                                                       std::string_view filename,
                                                       std::string_view what);

}  // namespace infera

#endif  // INFERA_REPOSITORY_LABEL_FILE_H_
