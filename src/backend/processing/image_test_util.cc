#include "backend/processing/image_test_util.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

namespace infera::processing::testing {

std::string EncodeJpeg(int width, int height, JpegKind kind, const std::vector<uint8_t>& samples,
                       int quality, bool progressive) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);  // test inputs are valid: libjpeg's exit() is fine here
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  int components = 3;
  switch (kind) {
    case JpegKind::kRgb: cinfo.in_color_space = JCS_RGB; break;
    case JpegKind::kGray: cinfo.in_color_space = JCS_GRAYSCALE; components = 1; break;
    case JpegKind::kCmyk:
    case JpegKind::kYcck: cinfo.in_color_space = JCS_CMYK; components = 4; break;
  }
  cinfo.input_components = components;
  jpeg_set_defaults(&cinfo);
  if (kind == JpegKind::kCmyk) jpeg_set_colorspace(&cinfo, JCS_CMYK);  // writes an Adobe marker
  if (kind == JpegKind::kYcck) jpeg_set_colorspace(&cinfo, JCS_YCCK);
  jpeg_set_quality(&cinfo, quality, TRUE);
  if (progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(&samples[static_cast<size_t>(cinfo.next_scanline) * width * components]);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<char*>(buffer), size);
  std::free(buffer);
  return out;
}

namespace {
void AppendPng(png_structp png, png_bytep data, png_size_t length) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<char*>(data), length);
}

int Channels(int color_type) {
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: case PNG_COLOR_TYPE_PALETTE: return 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3;
    default: return 4;
  }
}
}  // namespace

std::string EncodePng(int width, int height, int color_type, int bit_depth,
                      const std::vector<uint8_t>& samples, bool interlaced,
                      const std::vector<uint8_t>& palette, const std::vector<uint8_t>& trns) {
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &out, AppendPng, nullptr);
  png_set_IHDR(png, info, width, height, bit_depth, color_type,
               interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!palette.empty()) {
    std::vector<png_color> colors(palette.size() / 3);
    for (size_t i = 0; i < colors.size(); ++i) {
      colors[i] = {palette[3 * i], palette[3 * i + 1], palette[3 * i + 2]};
    }
    png_set_PLTE(png, info, colors.data(), static_cast<int>(colors.size()));
  }
  if (!trns.empty()) {
    png_set_tRNS(png, info, const_cast<png_bytep>(trns.data()), static_cast<int>(trns.size()), nullptr);
  }
  png_write_info(png, info);
  const int channels = Channels(color_type);
  const size_t in_row = static_cast<size_t>(width) * channels * (bit_depth == 16 ? 2 : 1);
  if (bit_depth < 8) png_set_packing(png);  // one sample per byte in, packed in the file
  std::vector<png_bytep> rows(height);
  for (int y = 0; y < height; ++y) rows[y] = const_cast<png_bytep>(&samples[y * in_row]);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

std::string JpegClaiming(int width, int height) {
  std::vector<uint8_t> pixels(8 * 8 * 3, 128);
  std::string jpeg = EncodeJpeg(8, 8, JpegKind::kRgb, pixels);
  for (size_t i = 2; i + 9 < jpeg.size(); ++i) {
    const uint8_t marker = static_cast<uint8_t>(jpeg[i + 1]);
    if (static_cast<uint8_t>(jpeg[i]) == 0xFF && (marker == 0xC0 || marker == 0xC2)) {
      jpeg[i + 5] = static_cast<char>(height >> 8);
      jpeg[i + 6] = static_cast<char>(height & 0xFF);
      jpeg[i + 7] = static_cast<char>(width >> 8);
      jpeg[i + 8] = static_cast<char>(width & 0xFF);
      return jpeg;
    }
  }
  std::abort();
}

std::string PngClaiming(int width, int height) {
  std::vector<uint8_t> pixels(8 * 8 * 3, 128);
  std::string png = EncodePng(8, 8, PNG_COLOR_TYPE_RGB, 8, pixels);
  // signature (8) | length (4) "IHDR" (4) width (4) height (4) ... crc over type+data.
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) png[at + i] = static_cast<char>(v >> (24 - 8 * i));
  };
  put32(16, static_cast<uint32_t>(width));
  put32(20, static_cast<uint32_t>(height));
  const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 17);
  put32(29, static_cast<uint32_t>(crc));
  return png;
}

}  // namespace infera::processing::testing
