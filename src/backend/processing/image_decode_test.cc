#include "backend/processing/image_decode.h"

#include <png.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "backend/processing/image_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::processing {
namespace {

using ::testing::HasSubstr;
using testing::EncodeJpeg;
using testing::EncodePng;
using testing::JpegKind;

std::vector<uint8_t> Flat(int w, int h, std::vector<uint8_t> value) {
  std::vector<uint8_t> out;
  for (int i = 0; i < w * h; ++i) out.insert(out.end(), value.begin(), value.end());
  return out;
}

// Every pixel within `tolerance` of `rgb` (JPEG is lossy, even at quality 100).
void ExpectFlat(const RgbImage& image, int r, int g, int b, int tolerance) {
  for (size_t i = 0; i < image.pixels.size(); i += 3) {
    ASSERT_NEAR(image.pixels[i], r, tolerance) << i;
    ASSERT_NEAR(image.pixels[i + 1], g, tolerance) << i;
    ASSERT_NEAR(image.pixels[i + 2], b, tolerance) << i;
  }
}

void ExpectInvalid(const absl::StatusOr<RgbImage>& result, const std::string& needle) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(needle));
}

TEST(DecodeImage, RgbJpeg) {
  const std::string jpeg = EncodeJpeg(24, 16, JpegKind::kRgb, Flat(24, 16, {200, 100, 30}));
  auto image = DecodeImage(jpeg, {});
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, 24);
  EXPECT_EQ(image->height, 16);
  ASSERT_EQ(image->pixels.size(), 24u * 16 * 3);
  ExpectFlat(*image, 200, 100, 30, 3);
}

TEST(DecodeImage, ProgressiveJpeg) {
  auto image = DecodeImage(EncodeJpeg(17, 9, JpegKind::kRgb, Flat(17, 9, {10, 220, 90}), 95, true), {});
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, 17);
  ExpectFlat(*image, 10, 220, 90, 4);
}

TEST(DecodeImage, GrayscaleJpegBecomesRgb) {
  auto image = DecodeImage(EncodeJpeg(8, 8, JpegKind::kGray, Flat(8, 8, {77})), {});
  ASSERT_TRUE(image.ok()) << image.status();
  ExpectFlat(*image, 77, 77, 77, 1);
}

// Stored (Adobe-inverted) C, M, Y, K = 255, 127, 0, 200: C = 0, M = 128, Y = 255,
// 255 - K = 200; R = 200 - 0, G = 200 - 128 * 200 / 255 = 99.6, B = 200 - 200 = 0.
TEST(DecodeImage, CmykJpegIsAdobeInverted) {
  auto image = DecodeImage(EncodeJpeg(16, 16, JpegKind::kCmyk, Flat(16, 16, {255, 127, 0, 200})), {});
  ASSERT_TRUE(image.ok()) << image.status();
  ExpectFlat(*image, 200, 100, 0, 2);
}

TEST(DecodeImage, YcckJpeg) {
  auto image = DecodeImage(EncodeJpeg(16, 16, JpegKind::kYcck, Flat(16, 16, {255, 127, 0, 200})), {});
  ASSERT_TRUE(image.ok()) << image.status();
  ExpectFlat(*image, 200, 100, 0, 3);
}

std::vector<uint8_t> Gradient(int w, int h, int channels, int bytes_per_sample = 1) {
  std::vector<uint8_t> out;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        for (int b = 0; b < bytes_per_sample; ++b) out.push_back(static_cast<uint8_t>(x * 7 + y * 13 + c * 50 + b * 91));
  return out;
}

TEST(DecodeImage, RgbPngIsExact) {
  const auto pixels = Gradient(13, 7, 3);
  auto image = DecodeImage(EncodePng(13, 7, PNG_COLOR_TYPE_RGB, 8, pixels), {});
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->pixels, pixels);
}

TEST(DecodeImage, InterlacedPngEqualsPlain) {
  const auto pixels = Gradient(33, 19, 3);
  auto image = DecodeImage(EncodePng(33, 19, PNG_COLOR_TYPE_RGB, 8, pixels, /*interlaced=*/true), {});
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->pixels, pixels);
}

TEST(DecodeImage, RgbaPngDropsAlpha) {
  const auto rgba = Gradient(5, 4, 4);
  auto image = DecodeImage(EncodePng(5, 4, PNG_COLOR_TYPE_RGBA, 8, rgba), {});
  ASSERT_TRUE(image.ok()) << image.status();
  for (int i = 0; i < 20; ++i) {
    for (int c = 0; c < 3; ++c) ASSERT_EQ(image->pixels[3 * i + c], rgba[4 * i + c]);
  }
}

TEST(DecodeImage, GrayAndGrayAlphaPngReplicate) {
  const auto gray = Gradient(6, 3, 1);
  auto image = DecodeImage(EncodePng(6, 3, PNG_COLOR_TYPE_GRAY, 8, gray), {});
  ASSERT_TRUE(image.ok()) << image.status();
  for (int i = 0; i < 18; ++i) {
    for (int c = 0; c < 3; ++c) ASSERT_EQ(image->pixels[3 * i + c], gray[i]);
  }
  const auto gray_alpha = Gradient(6, 3, 2);
  image = DecodeImage(EncodePng(6, 3, PNG_COLOR_TYPE_GRAY_ALPHA, 8, gray_alpha), {});
  ASSERT_TRUE(image.ok()) << image.status();
  for (int i = 0; i < 18; ++i) ASSERT_EQ(image->pixels[3 * i + 1], gray_alpha[2 * i]);
}

TEST(DecodeImage, OneBitGrayPngExpandsTo255) {
  const std::vector<uint8_t> bits = {0, 1, 1, 0, 1, 0, 0, 1, 1};  // 9 x 1
  auto image = DecodeImage(EncodePng(9, 1, PNG_COLOR_TYPE_GRAY, 1, bits), {});
  ASSERT_TRUE(image.ok()) << image.status();
  for (int i = 0; i < 9; ++i) ASSERT_EQ(image->pixels[3 * i], bits[i] ? 255 : 0) << i;
}

TEST(DecodeImage, SixteenBitPngKeepsTheHighByte) {
  const auto rgb16 = Gradient(4, 4, 3, 2);  // big-endian samples
  auto image = DecodeImage(EncodePng(4, 4, PNG_COLOR_TYPE_RGB, 16, rgb16), {});
  ASSERT_TRUE(image.ok()) << image.status();
  for (int i = 0; i < 16 * 3; ++i) ASSERT_EQ(image->pixels[i], rgb16[2 * i]) << i;
  const auto gray16 = Gradient(4, 4, 1, 2);
  image = DecodeImage(EncodePng(4, 4, PNG_COLOR_TYPE_GRAY, 16, gray16), {});
  ASSERT_TRUE(image.ok()) << image.status();
  for (int i = 0; i < 16; ++i) ASSERT_EQ(image->pixels[3 * i + 2], gray16[2 * i]) << i;
}

TEST(DecodeImage, PalettePngWithTransparencyGivesThePaletteColours) {
  const std::vector<uint8_t> palette = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  const std::vector<uint8_t> trns = {0, 128};  // entries 0 and 1 (partly) transparent
  const std::vector<uint8_t> index = {0, 1, 2, 3, 3, 2, 1, 0};  // 4 x 2, 2-bit
  auto image = DecodeImage(EncodePng(4, 2, PNG_COLOR_TYPE_PALETTE, 2, index, false, palette, trns), {});
  ASSERT_TRUE(image.ok()) << image.status();
  for (int i = 0; i < 8; ++i) {
    for (int c = 0; c < 3; ++c) ASSERT_EQ(image->pixels[3 * i + c], palette[3 * index[i] + c]) << i;
  }
}

// ---- hostile input ------------------------------------------------------------------------

TEST(DecodeImage, EmptyAndRandomBytes) {
  ExpectInvalid(DecodeImage("", {}), "empty image (0 bytes)");
  std::mt19937 rng(7);
  std::string noise(1000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  noise[0] = 'x';
  ExpectInvalid(DecodeImage(noise, {}), "not a JPEG or PNG image");
  ExpectInvalid(DecodeImage("\xFF\xD8\xFF", {}), "JPEG");
  ExpectInvalid(DecodeImage(std::string("\x89PNG\r\n\x1a\n", 8), {}), "truncated PNG");
}

TEST(DecodeImage, TruncatedJpegIsRefusedNotGrey) {
  std::vector<uint8_t> pixels = Gradient(64, 64, 3);
  const std::string jpeg = EncodeJpeg(64, 64, JpegKind::kRgb, pixels, 90);
  for (size_t cut : {jpeg.size() / 2, jpeg.size() - 2, size_t{200}, size_t{20}}) {
    ExpectInvalid(DecodeImage(jpeg.substr(0, cut), {}), "JPEG");
  }
  ExpectInvalid(DecodeImage(jpeg.substr(0, jpeg.size() / 2), {}), "truncated JPEG");
}

TEST(DecodeImage, TruncatedOrCorruptPng) {
  const std::string png = EncodePng(64, 64, PNG_COLOR_TYPE_RGB, 8, Gradient(64, 64, 3));
  for (size_t cut : {png.size() / 2, png.size() - 13, size_t{30}}) {
    ExpectInvalid(DecodeImage(png.substr(0, cut), {}), "truncated PNG");
  }
  std::string bad_crc = png;
  bad_crc[30] ^= 0x40;  // inside IHDR's CRC
  ExpectInvalid(DecodeImage(bad_crc, {}), "invalid PNG");
}

TEST(DecodeImage, DecompressionBombsFailBeforeAllocating) {
  const auto start = std::chrono::steady_clock::now();
  ExpectInvalid(DecodeImage(testing::JpegClaiming(30000, 30000), {}),
                "JPEG image is 30000x30000 pixels: more than max_pixels 40000000");
  ExpectInvalid(DecodeImage(testing::PngClaiming(30000, 30000), {}),
                "PNG image is 30000x30000 pixels: more than max_pixels 40000000");
  // Refused on the header: no 2.7 GB allocation, no decode.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  DecodeLimits small;
  small.max_pixels = 100;
  ExpectInvalid(DecodeImage(EncodePng(11, 10, PNG_COLOR_TYPE_RGB, 8, Gradient(11, 10, 3)), small),
                "more than max_pixels 100");
  EXPECT_TRUE(DecodeImage(EncodePng(10, 10, PNG_COLOR_TYPE_RGB, 8, Gradient(10, 10, 3)), small).ok());
}

TEST(DecodeImage, ExtremeAspectRatio) {
  ExpectInvalid(DecodeImage(EncodePng(100000, 1, PNG_COLOR_TYPE_GRAY, 8, std::vector<uint8_t>(100000, 9)), {}),
                "PNG image is 100000x1: aspect ratio above max_aspect_ratio 100");
  ExpectInvalid(DecodeImage(testing::JpegClaiming(1, 60000), {}), "aspect ratio above max_aspect_ratio");
  DecodeLimits wide;
  wide.max_aspect_ratio = 200;
  EXPECT_TRUE(DecodeImage(EncodePng(200, 1, PNG_COLOR_TYPE_GRAY, 8, std::vector<uint8_t>(200, 9)), wide).ok());
}

// Mutated valid files: each either decodes or is refused with InvalidArgument; never a
// crash (the fuzz target fuzz_image_decode explores this much further).
TEST(DecodeImage, MutatedFilesNeverCrash) {
  const std::string jpeg = EncodeJpeg(32, 24, JpegKind::kRgb, Gradient(32, 24, 3), 80, true);
  const std::string png = EncodePng(32, 24, PNG_COLOR_TYPE_PALETTE, 8, Gradient(32, 24, 1), true,
                                    std::vector<uint8_t>(256 * 3, 7));
  std::mt19937 rng(42);
  for (const std::string& original : {jpeg, png}) {
    for (int round = 0; round < 300; ++round) {
      std::string mutated = original;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) mutated[rng() % mutated.size()] = static_cast<char>(rng());
      auto result = DecodeImage(mutated, {});
      if (!result.ok()) {
        EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
      } else {
        EXPECT_EQ(result->pixels.size(), static_cast<size_t>(result->width) * result->height * 3);
      }
    }
  }
}

}  // namespace
}  // namespace infera::processing
