// Test-only encoders for the image_preprocess tests: JPEG (libjpeg-turbo) and PNG
// (libpng) in every colour type the decoder handles, plus header-only "bombs".
// Not thread-safe; tests only.
#ifndef INFERA_BACKEND_PROCESSING_IMAGE_TEST_UTIL_H_
#define INFERA_BACKEND_PROCESSING_IMAGE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace infera::processing::testing {

enum class JpegKind { kRgb, kGray, kCmyk, kYcck };

// `samples`: width * height * components bytes (3 for kRgb, 1 for kGray, 4 for CMYK as
// stored in the file, i.e. Adobe-inverted).
std::string EncodeJpeg(int width, int height, JpegKind kind, const std::vector<uint8_t>& samples,
                       int quality = 100, bool progressive = false);

// `samples`: rows of width * channels samples, each 1 byte (bit_depth <= 8) or 2 bytes
// big-endian (16); for bit_depth < 8 one sample per byte (values < 2^bit_depth), packed
// here. color_type is a PNG_COLOR_TYPE_*; `palette` RGB triples for palette images,
// `trns` alpha per palette entry (optional).
std::string EncodePng(int width, int height, int color_type, int bit_depth,
                      const std::vector<uint8_t>& samples, bool interlaced = false,
                      const std::vector<uint8_t>& palette = {},
                      const std::vector<uint8_t>& trns = {});

// A valid small image whose header claims width x height (JPEG: SOF patched; PNG: IHDR
// patched with a correct CRC), for decompression-bomb tests.
std::string JpegClaiming(int width, int height);
std::string PngClaiming(int width, int height);

}  // namespace infera::processing::testing

#endif  // INFERA_BACKEND_PROCESSING_IMAGE_TEST_UTIL_H_
