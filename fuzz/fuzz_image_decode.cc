// Fuzz target: the image_preprocess decoders (backend/processing/image_decode.h): JPEG
// through libjpeg-turbo and PNG through libpng, with infera's error managers, colour
// conversions and header limits; every image that decodes is also resized, cropped and
// normalised (image_resize.h) so the resize indices are exercised on odd sizes.
//
// Input: the encoded file. max_pixels is 4 000 000 here (the default 40 000 000 would
// let one input allocate 120 MB, more than the fuzzing memory budget needs to show).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "backend/processing/image_decode.h"
#include "backend/processing/image_resize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace infera::processing;
  DecodeLimits limits;
  limits.max_pixels = 4'000'000;
  auto image = DecodeImage(std::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (!image.ok()) {
    if (image.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  // The contract: a decoded image has its pixels and respects the limits.
  if (image->width <= 0 || image->height <= 0 ||
      image->pixels.size() != static_cast<size_t>(image->width) * image->height * 3 ||
      static_cast<int64_t>(image->width) * image->height > limits.max_pixels) {
    std::abort();
  }
  TransformOptions options;
  options.resize = ResizedSizeForShorterSide(image->height, image->width, 11);
  options.crop = {9, 13};
  options.antialias = (size & 1) == 0;
  std::vector<float> out(3 * 9 * 13);
  ResizeCropNormalize(*image, options, out.data());
  for (float v : out) {
    if (!(v >= 0.0f && v <= 1.0f)) std::abort();  // mean 0, std 1: values are u8 / 255
  }
  return 0;
}
