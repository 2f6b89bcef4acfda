// image_preprocess: encoded JPEG/PNG bytes -> a normalised CHW float tensor
// (docs/pipelines.md). Each batch row is decoded (image_decode.h), resized, cropped and
// normalised (image_resize.h) straight into the output buffer.
#include <memory>
#include <string_view>
#include <vector>

#include "api/buffer.h"
#include "backend/processing/image_decode.h"
#include "backend/processing/image_preprocess_options.h"
#include "backend/processing/image_resize.h"
#include "backend/processing/processing_backends.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

using processing::ImagePreprocessOptions;

class ImagePreprocessInstance : public ModelInstance {
 public:
  ImagePreprocessInstance(const ImagePreprocessOptions& options, std::string output_name, bool batching)
      : options_(options), output_name_(std::move(output_name)), batching_(batching) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    if (inputs.size() != 1) {
      return absl::InvalidArgumentError(StrCat("image_preprocess needs 1 input, got ", inputs.size()));
    }
    ASSIGN_OR_RETURN(std::vector<std::string_view> images,
                     SplitBytesElements(inputs[0].data.AsStringView()));
    const int64_t rows = batching_ ? inputs[0].shape.at(0) : 1;
    if (static_cast<int64_t>(images.size()) != rows) {
      return absl::InvalidArgumentError(
          StrCat("image_preprocess: expected ", rows, " images, got ", images.size()));
    }
    const size_t per_image = size_t{3} * options_.crop.height * options_.crop.width;
    uint8_t* bytes = nullptr;
    Buffer buffer = Buffer::Allocate(per_image * images.size() * sizeof(float), &bytes);
    float* out = reinterpret_cast<float*>(bytes);
    for (size_t i = 0; i < images.size(); ++i) {
      absl::StatusOr<processing::RgbImage> image = processing::DecodeImage(images[i], options_.limits);
      if (!image.ok()) {
        // Name the row only when there are several.
        return absl::InvalidArgumentError(
            images.size() > 1 ? StrCat("image ", i, ": ", image.status().message())
                              : std::string(image.status().message()));
      }
      processing::ResizeCropNormalize(*image, options_.ForImage(image->height, image->width),
                                      out + i * per_image);
    }
    Tensor result;
    result.name = output_name_;
    result.dtype = DataType::kFp32;
    result.shape = {3, options_.crop.height, options_.crop.width};
    if (batching_) result.shape.insert(result.shape.begin(), rows);
    result.data = std::move(buffer);
    std::vector<Tensor> outputs;
    outputs.push_back(std::move(result));
    return outputs;
  }

 private:
  const ImagePreprocessOptions& options_;
  const std::string output_name_;
  const bool batching_;
};

class ImagePreprocessModel : public LoadedModel {
 public:
  ImagePreprocessModel(ImagePreprocessOptions options, std::string output_name, bool batching)
      : options_(std::move(options)), output_name_(std::move(output_name)), batching_(batching) {}

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<ImagePreprocessInstance>(options_, output_name_, batching_);
  }

 private:
  const ImagePreprocessOptions options_;
  const std::string output_name_;
  const bool batching_;
};

class ImagePreprocessBackend : public Backend {
 public:
  std::string_view name() const override { return "image_preprocess"; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    return processing::ParseImagePreprocessOptions(config).status();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    ASSIGN_OR_RETURN(ImagePreprocessOptions options,
                     processing::ParseImagePreprocessOptions(*context.config));
    return std::make_unique<ImagePreprocessModel>(std::move(options), context.config->output(0).name(),
                                                  context.config->max_batch_size() > 0);
  }
  // Decode and resize are milliseconds of CPU: a worker thread, not the I/O thread, and
  // single-threaded per image (no intra-op threads).
  bool UsesIntraOpThreads() const override { return false; }
  bool RunsInline() const override { return false; }
};

}  // namespace

std::unique_ptr<Backend> CreateImagePreprocessBackend() {
  return std::make_unique<ImagePreprocessBackend>();
}

}  // namespace infera
