#include "backend/processing/image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace infera::processing {
namespace {

// The taps of one axis for the output indices [first, last): output index first + k reads
// input indices start[k] .. start[k] + count[k] - 1 with weights[k * max_taps + j].
struct AxisTaps {
  int max_taps = 0;
  std::vector<int> start;
  std::vector<int> count;
  std::vector<float> weights;
};

// torch's triangle filter (aa_filter), float in and out, arithmetic as torch's C++ does it.
float Triangle(float x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return static_cast<float>(1.0 - x);
  return 0.0f;
}

// torch 1.13 _compute_weights_aa (UpSampleKernel.cpp) with scalar_t = float, keeping its
// mixed float/double expression types, so the weights are bit-identical.
AxisTaps ComputeTaps(int in_size, int out_size, bool antialias, int first, int last) {
  AxisTaps taps;
  const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
  const bool widen = antialias && scale >= 1.0f;
  const float support = widen ? static_cast<float>(1.0 * scale) : 1.0f;
  const float invscale = widen ? static_cast<float>(1.0 / scale) : 1.0f;
  taps.max_taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  const int n = last - first;
  taps.start.resize(n);
  taps.count.resize(n);
  taps.weights.assign(static_cast<size_t>(n) * taps.max_taps, 0.0f);
  for (int k = 0; k < n; ++k) {
    const int i = first + k;
    const float center = static_cast<float>(scale * (i + 0.5));
    const int64_t xmin = std::max<int64_t>(static_cast<int64_t>((center - support) + 0.5), 0);
    const int64_t xmax =
        std::min<int64_t>(static_cast<int64_t>((center + support) + 0.5), in_size);
    const int xsize = static_cast<int>(std::max<int64_t>(xmax - xmin, 0));
    float* w = &taps.weights[static_cast<size_t>(k) * taps.max_taps];
    float total = 0.0f;
    for (int j = 0; j < xsize; ++j) {
      const float offset = static_cast<float>(j + xmin) - center;
      w[j] = Triangle(static_cast<float>((offset + 0.5) * invscale));
      total += w[j];
    }
    if (total != 0.0f) {
      for (int j = 0; j < xsize; ++j) w[j] /= total;
    }
    taps.start[k] = static_cast<int>(xmin);
    taps.count[k] = xsize;
  }
  return taps;
}

// The two inner loops, compiled twice: for x86-64-v3 (AVX2 + FMA: std::fma is one
// instruction and the height pass vectorises) and for the baseline (std::fma is a libm
// call, same result). IMPORTANT: plain `a += b * c` would differ from torch in the last
// bit; std::fma keeps it equal.
__attribute__((target_clones("arch=x86-64-v3", "default")))
void WidthPassRow(const uint8_t* src, const AxisTaps& xt, int ncols, float* dst) {
  for (int k = 0; k < ncols; ++k) {
    const float* w = &xt.weights[static_cast<size_t>(k) * xt.max_taps];
    const uint8_t* p = src + static_cast<size_t>(xt.start[k]) * 3;
    float r = p[0] * w[0], g = p[1] * w[0], b = p[2] * w[0];
    for (int j = 1; j < xt.count[k]; ++j) {
      r = std::fma(static_cast<float>(p[3 * j]), w[j], r);
      g = std::fma(static_cast<float>(p[3 * j + 1]), w[j], g);
      b = std::fma(static_cast<float>(p[3 * j + 2]), w[j], b);
    }
    dst[3 * k] = r;
    dst[3 * k + 1] = g;
    dst[3 * k + 2] = b;
  }
}

__attribute__((target_clones("arch=x86-64-v3", "default")))
void HeightPassRow(const float* src, size_t row_floats, const float* w, int count, float* acc) {
  for (size_t i = 0; i < row_floats; ++i) acc[i] = src[i] * w[0];
  for (int j = 1; j < count; ++j) {
    const float* s = src + static_cast<size_t>(j) * row_floats;
    const float wj = w[j];
    for (size_t i = 0; i < row_floats; ++i) acc[i] = std::fma(s[i], wj, acc[i]);
  }
}

// The crop's first resized index along an axis (negative: zero padding before it).
int CropOffset(int resized, int crop) {
  if (crop > resized) return -((crop - resized) / 2);
  const int diff = resized - crop;  // round(diff / 2) with Python's half-to-even rounding
  const int half = diff / 2;
  return (diff % 2 == 0 || half % 2 == 0) ? half : half + 1;
}

// torch's AVX2 kernel (the one Debian's torch runs on any x86-64 since 2013) accumulates
// `out += src * w` as a fused multiply-add; std::fma gives the same correctly rounded
// result on every CPU (glibc picks the FMA instruction where there is one).

// round-half-even to uint8 as torch.round then .to(uint8); inputs lie in [0, 255].
inline float RoundToU8(float v) {
  const float r = std::nearbyint(v);
  return std::min(std::max(r, 0.0f), 255.0f);
}

}  // namespace

Size2d ResizedSizeForShorterSide(int height, int width, int shorter_side) {
  const int shorter = std::min(height, width);
  const int longer = std::max(height, width);
  // Python: int(requested_new_short * long / short), true division in double.
  const int new_long = static_cast<int>(static_cast<double>(shorter_side) * longer / shorter);
  if (width <= height) return {new_long, shorter_side};
  return {shorter_side, new_long};
}

void ResizeCropNormalize(const RgbImage& image, const TransformOptions& options, float* out) {
  const int out_h = options.crop.height;
  const int out_w = options.crop.width;
  const int top = CropOffset(options.resize.height, out_h);
  const int left = CropOffset(options.resize.width, out_w);
  // The resized rows/columns the crop keeps.
  const int row0 = std::max(top, 0);
  const int row1 = std::min(top + out_h, options.resize.height);
  const int col0 = std::max(left, 0);
  const int col1 = std::min(left + out_w, options.resize.width);

  std::array<float, 3> zero;  // the value of a padded (0) pixel
  for (int c = 0; c < 3; ++c) zero[c] = (0.0f - options.mean[c]) / options.std[c];
  const size_t plane = static_cast<size_t>(out_h) * out_w;
  for (int c = 0; c < 3; ++c) std::fill(out + c * plane, out + (c + 1) * plane, zero[c]);
  if (row0 >= row1 || col0 >= col1) return;

  const AxisTaps xt = ComputeTaps(image.width, options.resize.width, options.antialias, col0, col1);
  const AxisTaps yt = ComputeTaps(image.height, options.resize.height, options.antialias, row0, row1);
  const int ncols = col1 - col0;
  const int src_row0 = yt.start.front();
  int src_row1 = src_row0;
  for (size_t k = 0; k < yt.start.size(); ++k) {
    src_row1 = std::max(src_row1, yt.start[k] + yt.count[k]);
  }

  // Width pass: the source rows the height pass reads, each to ncols float RGB pixels.
  std::vector<float> rows(static_cast<size_t>(src_row1 - src_row0) * ncols * 3);
  const size_t stride = static_cast<size_t>(image.width) * 3;
  for (int y = src_row0; y < src_row1; ++y) {
    WidthPassRow(image.pixels.data() + y * stride, xt, ncols,
                 rows.data() + static_cast<size_t>(y - src_row0) * ncols * 3);
  }

  // Height pass, rounding, scaling and normalisation into the CHW output.
  std::array<float, 3> mean = options.mean, stddev = options.std;
  const size_t row_floats = static_cast<size_t>(ncols) * 3;
  std::vector<float> acc(row_floats);
  for (int y = row0; y < row1; ++y) {
    const int k = y - row0;
    const float* w = &yt.weights[static_cast<size_t>(k) * yt.max_taps];
    const float* src = rows.data() + static_cast<size_t>(yt.start[k] - src_row0) * row_floats;
    HeightPassRow(src, row_floats, w, yt.count[k], acc.data());
    const size_t out_row = static_cast<size_t>(y - top) * out_w + (col0 - left);
    for (int c = 0; c < 3; ++c) {
      float* o = out + c * plane + out_row;
      for (int x = 0; x < ncols; ++x) {
        const float u8 = RoundToU8(acc[3 * x + c]);
        o[x] = (u8 / 255.0f - mean[c]) / stddev[c];
      }
    }
  }
}

}  // namespace infera::processing
