#include "backend/processing/image_resize.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace infera::processing {
namespace {

RgbImage Make(int h, int w, uint32_t seed) {
  RgbImage image{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
  std::mt19937 rng(seed);
  for (auto& p : image.pixels) p = static_cast<uint8_t>(rng());
  return image;
}

std::vector<float> Transform(const RgbImage& image, const TransformOptions& options) {
  std::vector<float> out(3 * static_cast<size_t>(options.crop.height) * options.crop.width, -99.f);
  ResizeCropNormalize(image, options, out.data());
  return out;
}

TEST(ResizedSizeForShorterSide, AsTorchvision) {
  EXPECT_EQ(ResizedSizeForShorterSide(480, 640, 256), (Size2d{256, 341}));  // int(341.33)
  EXPECT_EQ(ResizedSizeForShorterSide(640, 480, 256), (Size2d{341, 256}));
  EXPECT_EQ(ResizedSizeForShorterSide(100, 100, 32), (Size2d{32, 32}));
  EXPECT_EQ(ResizedSizeForShorterSide(3, 1000, 2), (Size2d{2, 666}));
  EXPECT_EQ(ResizedSizeForShorterSide(7, 7, 300), (Size2d{300, 300}));
}

// Resize to the image's own size is the identity (weights 1 and 0), so the output is the
// pixel / 255, normalised.
TEST(ResizeCropNormalize, IdentityScalesAndNormalises) {
  const RgbImage image = Make(5, 6, 1);
  TransformOptions o{{5, 6}, {5, 6}, true, {0.5f, 0.25f, 0.f}, {0.5f, 2.f, 1.f}};
  const auto out = Transform(image, o);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 6; ++x) {
        const float v = image.pixels[(y * 6 + x) * 3 + c] / 255.0f;
        ASSERT_EQ(out[(c * 5 + y) * 6 + x], (v - o.mean[c]) / o.std[c]);
      }
}

TEST(ResizeCropNormalize, FlatImageStaysFlat) {
  RgbImage image{37, 23, {}};
  for (int i = 0; i < 37 * 23; ++i) image.pixels.insert(image.pixels.end(), {0, 128, 255});
  for (bool antialias : {true, false}) {
    for (Size2d size : {Size2d{7, 9}, Size2d{100, 80}, Size2d{23, 5}}) {
      const auto out = Transform(image, {size, size, antialias});
      const size_t plane = static_cast<size_t>(size.height) * size.width;
      for (size_t i = 0; i < plane; ++i) {
        ASSERT_EQ(out[i], 0.0f);
        ASSERT_EQ(out[plane + i], 128 / 255.0f);
        ASSERT_EQ(out[2 * plane + i], 1.0f);
      }
    }
  }
}

// Center crop offset: round((size - crop) / 2) with half-to-even (Python's round).
TEST(ResizeCropNormalize, CropOffsetRoundsHalfToEven) {
  struct Case { int width, crop, first_column; };
  for (const Case& c : {Case{7, 4, 2} /*1.5->2*/, Case{9, 4, 2} /*2.5->2*/, Case{11, 4, 4} /*3.5->4*/,
                        Case{8, 4, 2}, Case{4, 4, 0}}) {
    RgbImage image{c.width, 1, {}};
    for (int x = 0; x < c.width; ++x) image.pixels.insert(image.pixels.end(), {uint8_t(x), 0, 0});
    const auto out = Transform(image, {{1, c.width}, {1, c.crop}});
    for (int x = 0; x < c.crop; ++x) {
      ASSERT_EQ(out[x], (c.first_column + x) / 255.0f) << c.width << " " << c.crop;
    }
  }
}

// A crop larger than the image pads with zero pixels, (crop - size) // 2 before.
TEST(ResizeCropNormalize, CropLargerThanImagePadsWithZero) {
  RgbImage image{2, 1, {10, 10, 10, 20, 20, 20}};
  TransformOptions o{{1, 2}, {3, 5}, true, {0.5f, 0.5f, 0.5f}, {0.25f, 0.25f, 0.25f}};
  const auto out = Transform(image, o);
  const float pad = (0.0f - 0.5f) / 0.25f;
  // rows: pad top 1, image row 1, pad bottom 1; columns: pad left 1, 2 pixels, pad 2.
  const float expected[3][5] = {{pad, pad, pad, pad, pad},
                                {pad, (10 / 255.0f - 0.5f) / 0.25f, (20 / 255.0f - 0.5f) / 0.25f, pad, pad},
                                {pad, pad, pad, pad, pad}};
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 5; ++x) ASSERT_EQ(out[(c * 3 + y) * 5 + x], expected[y][x]) << y << "," << x;
}

// An independent double-precision implementation of the antialiased bilinear filter
// (triangle of support max(scale, 1), centres at scale * (i + 0.5), normalised weights).
std::vector<double> ReferenceAxis(const std::vector<double>& in, int out_size, bool antialias) {
  const int n = static_cast<int>(in.size());
  const double scale = static_cast<double>(n) / out_size;
  const double support = antialias ? std::max(scale, 1.0) : 1.0;
  std::vector<double> out(out_size);
  for (int i = 0; i < out_size; ++i) {
    const double center = scale * (i + 0.5);
    double sum = 0, total = 0;
    for (int j = 0; j < n; ++j) {
      const double w = std::max(0.0, 1.0 - std::abs((j + 0.5 - center) / support));
      sum += w * in[j];
      total += w;
    }
    out[i] = sum / total;
  }
  return out;
}

TEST(ResizeCropNormalize, MatchesAnIndependentReference) {
  for (bool antialias : {true, false}) {
    for (auto [h, w, oh, ow] : {std::array<int, 4>{40, 60, 13, 17}, {9, 5, 20, 31}, {64, 48, 32, 24}}) {
      const RgbImage image = Make(h, w, h * 100 + w);
      const auto out = Transform(image, {{oh, ow}, {oh, ow}, antialias});
      for (int c = 0; c < 3; ++c) {
        // width pass per row, then height pass per column
        std::vector<std::vector<double>> rows(h);
        for (int y = 0; y < h; ++y) {
          std::vector<double> line(w);
          for (int x = 0; x < w; ++x) line[x] = image.pixels[(y * w + x) * 3 + c];
          rows[y] = ReferenceAxis(line, ow, antialias);
        }
        for (int x = 0; x < ow; ++x) {
          std::vector<double> column(h);
          for (int y = 0; y < h; ++y) column[y] = rows[y][x];
          const auto ref = ReferenceAxis(column, oh, antialias);
          for (int y = 0; y < oh; ++y) {
            const double got = out[(static_cast<size_t>(c) * oh + y) * ow + x] * 255.0;
            // Rounded to uint8 on both sides; a float/double tie may differ by one level.
            ASSERT_LE(std::abs(got - std::nearbyint(ref[y])), 1.0001)
                << antialias << " " << h << "x" << w << "->" << oh << "x" << ow << " at " << c << "," << y << "," << x;
          }
        }
      }
    }
  }
}

// Antialiasing matters when shrinking: a one-pixel checkerboard averages to grey with
// it, and aliases (keeps full contrast samples) without it at an odd-ratio.
TEST(ResizeCropNormalize, AntialiasAveragesFineDetail) {
  RgbImage image{64, 64, {}};
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) {
      const uint8_t v = ((x + y) % 2) ? 255 : 0;
      image.pixels.insert(image.pixels.end(), {v, v, v});
    }
  const auto smooth = Transform(image, {{16, 16}, {16, 16}, true});
  for (int i = 0; i < 256; ++i) ASSERT_NEAR(smooth[i], 0.5f, 0.06f);
}

}  // namespace
}  // namespace infera::processing
