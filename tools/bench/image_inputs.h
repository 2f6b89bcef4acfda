// Encoded-image inputs: which BYTES inputs of a model take JPEG/PNG files, and the
// images `infera bench` sends them by default.
//
// Random bytes fail every request to an image pipeline (the decoder refuses them), so
// bench finds the inputs that take encoded images from the model configuration, as the
// server does: the BYTES inputs of an `image_preprocess` model, and the ensemble inputs
// mapped to one of those (followed through nested ensembles, 8 levels at most).
//
// The default images are the demo photographs that `make demo-models` writes into
// demo-models/.images/ (DefaultImageDirs lists where bench looks); --images DIR
// names another folder.
//
// Thread-safe (pure functions; ReadImageFiles reads the file system).
#ifndef INFERA_TOOLS_BENCH_IMAGE_INPUTS_H_
#define INFERA_TOOLS_BENCH_IMAGE_INPUTS_H_

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::bench {

// The configuration (Triton's JSON, GET /v2/models/<name>/config) of a model, or
// nullopt when it cannot be read.
using ModelConfigFetcher = std::function<std::optional<std::string>(const std::string& model)>;

// The names of the inputs of `model` that take encoded images.
std::set<std::string> EncodedImageInputs(const std::string& model, const ModelConfigFetcher& fetch);

// The .jpg/.jpeg/.png files of `dir`, sorted by name, read whole.
absl::StatusOr<std::vector<std::string>> ReadImageFiles(const std::string& dir);

// Where the demo photographs are looked for, in order: demo-models/.images under the
// current directory, then next to the binary's build folder (build/infera ->
// demo-models/.images beside build/).
std::vector<std::string> DefaultImageDirs(const std::string& binary_path);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_IMAGE_INPUTS_H_
