// Cost of the image_preprocess backend's work per image (docs/pipelines.md, "Measured"):
// decode a 640x480 JPEG (libjpeg-turbo), resize its shorter side to 256 with torchvision's
// antialiased bilinear, center crop 224, normalise — one thread, as one backend instance.
//   build/bench/micro/image_preprocess_benchmark --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <png.h>

#include <random>

#include "backend/processing/image_decode.h"
#include "backend/processing/image_resize.h"
#include "backend/processing/image_test_util.h"

namespace infera::processing {
namespace {

// A photo-like 640x480 image: smooth gradients plus sensor-like noise, so the JPEG (q 90)
// is about as large (~100 KB) and as costly to decode as a camera picture of that size.
std::vector<uint8_t> PhotoLike(int w, int h) {
  std::mt19937 rng(1);
  std::vector<uint8_t> pixels;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        const int v = (x * (c + 1) / 3 + y * (3 - c) / 2) % 256 + static_cast<int>(rng() % 24) - 12;
        pixels.push_back(static_cast<uint8_t>(std::clamp(v, 0, 255)));
      }
  return pixels;
}

const std::string& Jpeg640x480() {
  static const std::string jpeg =
      testing::EncodeJpeg(640, 480, testing::JpegKind::kRgb, PhotoLike(640, 480), 90);
  return jpeg;
}

TransformOptions ImageNet(const RgbImage& image) {
  TransformOptions o;
  o.resize = ResizedSizeForShorterSide(image.height, image.width, 256);
  o.crop = {224, 224};
  o.mean = {0.485f, 0.456f, 0.406f};
  o.std = {0.229f, 0.224f, 0.225f};
  return o;
}

void BM_DecodeJpeg640x480(benchmark::State& state) {
  state.counters["jpeg_bytes"] = static_cast<double>(Jpeg640x480().size());
  for (auto _ : state) benchmark::DoNotOptimize(DecodeImage(Jpeg640x480(), {}));
}
BENCHMARK(BM_DecodeJpeg640x480)->Unit(benchmark::kMillisecond);

void BM_ResizeCropNormalize640x480(benchmark::State& state) {
  const RgbImage image = *DecodeImage(Jpeg640x480(), {});
  std::vector<float> out(3 * 224 * 224);
  const TransformOptions o = ImageNet(image);
  for (auto _ : state) {
    ResizeCropNormalize(image, o, out.data());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_ResizeCropNormalize640x480)->Unit(benchmark::kMillisecond);

void BM_DecodeResizeCrop640x480(benchmark::State& state) {
  std::vector<float> out(3 * 224 * 224);
  for (auto _ : state) {
    const RgbImage image = *DecodeImage(Jpeg640x480(), {});
    ResizeCropNormalize(image, ImageNet(image), out.data());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_DecodeResizeCrop640x480)->Unit(benchmark::kMillisecond);

void BM_DecodePng640x480(benchmark::State& state) {
  static const std::string png = testing::EncodePng(640, 480, PNG_COLOR_TYPE_RGB, 8, PhotoLike(640, 480));
  state.counters["png_bytes"] = static_cast<double>(png.size());
  for (auto _ : state) benchmark::DoNotOptimize(DecodeImage(png, {}));
}
BENCHMARK(BM_DecodePng640x480)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace infera::processing

BENCHMARK_MAIN();
