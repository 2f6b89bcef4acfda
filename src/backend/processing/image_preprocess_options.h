// The `image_preprocess` backend's configuration (docs/pipelines.md), parsed and checked
// from config.pbtxt:
//
//   input  [ { name: "IMAGE" data_type: TYPE_STRING dims: [ 1 ] } ]     encoded JPEG/PNG
//   output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] } ]  CHW RGB
//   parameters { key: "resize" value { string_value: "256" } }      shorter side, or "HxW"
//   parameters { key: "crop"   value { string_value: "224" } }      "S" or "HxW"; optional
//   parameters { key: "mean"   value { string_value: "0.485,0.456,0.406" } }  default 0
//   parameters { key: "std"    value { string_value: "0.229,0.224,0.225" } }  default 1
//   parameters { key: "antialias" value { string_value: "true" } }   default true
//   parameters { key: "max_pixels" value { string_value: "40000000" } }
//   parameters { key: "max_aspect_ratio" value { string_value: "100" } }
//
// Without `crop`, `resize` must be "HxW" (the output size must be fixed). The output dims
// must be [3, crop H, crop W]. Errors name the parameter or tensor.
//
// Thread-safe: pure functions.
#ifndef INFERA_BACKEND_PROCESSING_IMAGE_PREPROCESS_OPTIONS_H_
#define INFERA_BACKEND_PROCESSING_IMAGE_PREPROCESS_OPTIONS_H_

#include "absl/status/statusor.h"
#include "backend/processing/image_decode.h"
#include "backend/processing/image_resize.h"
#include "model_config.pb.h"

namespace infera::processing {

// Largest resize/crop side accepted (an output of 3 x 8192 x 8192 floats is 768 MiB).
inline constexpr int kMaxImageSide = 8192;

struct ImagePreprocessOptions {
  int resize_shorter_side = 0;  // > 0: Resize(int); 0: `resize_exact` applies
  Size2d resize_exact;
  Size2d crop;                  // the output's H x W
  bool antialias = true;
  std::array<float, 3> mean = {0.f, 0.f, 0.f};
  std::array<float, 3> std = {1.f, 1.f, 1.f};
  DecodeLimits limits;

  // The transform for a decoded image of the given size.
  TransformOptions ForImage(int height, int width) const;
};

absl::StatusOr<ImagePreprocessOptions> ParseImagePreprocessOptions(
    const inference::ModelConfig& config);

}  // namespace infera::processing

#endif  // INFERA_BACKEND_PROCESSING_IMAGE_PREPROCESS_OPTIONS_H_
