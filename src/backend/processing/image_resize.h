// Resize, center crop and normalisation of a decoded 8-bit RGB image into a CHW float
// tensor, computed as torchvision 0.14 computes
//
//   Resize(size, antialias=True) -> CenterCrop(crop) -> ConvertImageDtype(float)
//   -> Normalize(mean, std)
//
// on the decoded uint8 tensor (torch 1.13's CPU `_upsample_bilinear2d_aa`):
//   - separable: the width pass first (uint8 -> float), then the height pass;
//   - per output index i along an axis of input size n and output size m:
//       scale = n / m; support = scale >= 1 ? scale : 1 (antialias; else 1);
//       center = scale * (i + 0.5); taps j in [int(center - support + 0.5),
//       int(center + support + 0.5)) clipped to [0, n); weight = triangle((j - center + 0.5)
//       / max(scale, 1)), normalised to sum 1 (align_corners=False);
//   - the resized float image is rounded half-to-even to uint8 (torchvision casts the
//     interpolated float tensor back to the input's uint8);
//   - the crop offset is round((resized - crop) / 2) with Python's half-to-even rounding;
//     a crop larger than the image pads with zero pixels (left/top = (crop - size) // 2),
//     as torchvision's CenterCrop does;
//   - value = (u8 / 255 - mean) / std in float32.
// The float operations are done in torch's order and precision (float32, weights
// computed through double as torch's C++ does), so the output equals torchvision's up to
// the rare float rounding difference (docs/pipelines.md states the measured error).
// Only the resized pixels the crop keeps are computed.
//
// antialias=false is torch's plain bilinear (align_corners=False): the same kernel with a
// support of 1 at every scale; equal to torchvision's within float rounding, not bitwise.
//
// Thread-safe: pure functions.
#ifndef INFERA_BACKEND_PROCESSING_IMAGE_RESIZE_H_
#define INFERA_BACKEND_PROCESSING_IMAGE_RESIZE_H_

#include <array>
#include <cstdint>
#include <vector>

namespace infera::processing {

// A decoded image: height rows of width RGB pixels (HWC, 3 bytes per pixel).
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // width * height * 3
};

struct Size2d {
  int height = 0;
  int width = 0;
  bool operator==(const Size2d&) const = default;
};

// torchvision's Resize(int) output size: the shorter side becomes `shorter_side`, the
// longer int(shorter_side * long / short) (truncated, as Python's int()). REQUIRES:
// height, width, shorter_side > 0. The result may have a 0 side for extreme aspect
// ratios; callers bound the aspect ratio first.
Size2d ResizedSizeForShorterSide(int height, int width, int shorter_side);

struct TransformOptions {
  Size2d resize;  // size after the resize (> 0)
  Size2d crop;    // output size (> 0); equal to `resize` for no crop
  bool antialias = true;
  std::array<float, 3> mean = {0.f, 0.f, 0.f};
  std::array<float, 3> std = {1.f, 1.f, 1.f};
};

// Writes 3 * crop.height * crop.width floats (CHW, R plane first) to `out`.
// REQUIRES: image.width, image.height > 0 and pixels.size() == width * height * 3.
void ResizeCropNormalize(const RgbImage& image, const TransformOptions& options, float* out);

}  // namespace infera::processing

#endif  // INFERA_BACKEND_PROCESSING_IMAGE_RESIZE_H_
