#include "backend/processing/image_decode.h"

// libjpeg's and libpng's error handling is setjmp/longjmp. IMPORTANT: in the functions
// that call setjmp, every object with a destructor is constructed before setjmp, and
// nothing the error path reads is modified between setjmp and longjmp except through
// the (heap/struct) error records, so the jump skips no destructor.
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstring>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <jerror.h>  // message codes (after jpeglib.h)
#include <png.h>

#include "common/str_cat.h"

namespace infera::processing {
namespace {

constexpr uint8_t kJpegMagic[] = {0xFF, 0xD8, 0xFF};
constexpr uint8_t kPngMagic[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
// Progressive JPEGs can have any number of scans, each a full pass over the
// coefficients: a tiny file with thousands of scans is a CPU bomb. libjpeg-turbo's
// TurboJPEG API limits them to 500 (TJFLAG_LIMITSCANS); so does this.
constexpr int kMaxJpegScans = 500;

bool HasPrefix(std::string_view data, const uint8_t* magic, size_t n) {
  return data.size() >= n && std::memcmp(data.data(), magic, n) == 0;
}

absl::Status CheckLimits(const char* format, int64_t width, int64_t height,
                         const DecodeLimits& limits) {
  if (width <= 0 || height <= 0) {
    return absl::InvalidArgumentError(StrCat(format, " image has no pixels (", width, "x", height, ")"));
  }
  if (width * height > limits.max_pixels) {
    return absl::InvalidArgumentError(StrCat(format, " image is ", width, "x", height,
                                             " pixels: more than max_pixels ", limits.max_pixels));
  }
  const double ratio = static_cast<double>(std::max(width, height)) / std::min(width, height);
  if (ratio > limits.max_aspect_ratio) {
    return absl::InvalidArgumentError(StrCat(format, " image is ", width, "x", height,
                                             ": aspect ratio above max_aspect_ratio ",
                                             limits.max_aspect_ratio));
  }
  return absl::OkStatus();
}

// ---- JPEG -------------------------------------------------------------------------------

struct JpegErrorRecord {
  jpeg_error_mgr pub;  // first: libjpeg casts cinfo->err to this struct
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX + 64];
};

[[noreturn]] void OnJpegError(j_common_ptr cinfo) {
  auto* record = reinterpret_cast<JpegErrorRecord*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, record->message);
  std::longjmp(record->jump, 1);
}

// Warnings are corrupt data libjpeg would paper over (a truncated file decodes as grey
// rows): refused, except stray bytes between markers, which many cameras write.
void OnJpegMessage(j_common_ptr cinfo, int level) {
  if (level >= 0 || cinfo->err->msg_code == JWRN_EXTRANEOUS_DATA) return;
  OnJpegError(cinfo);
}

void OnJpegProgress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxJpegScans) {
    auto* record = reinterpret_cast<JpegErrorRecord*>(cinfo->err);
    std::snprintf(record->message, sizeof(record->message), "more than %d progressive scans",
                  kMaxJpegScans);
    std::longjmp(record->jump, 1);
  }
}

// Pillow's MULDIV255: a * b / 255 rounded.
inline int MulDiv255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

absl::StatusOr<RgbImage> DecodeJpeg(std::string_view data, const DecodeLimits& limits) {
  RgbImage image;
  std::vector<uint8_t> cmyk_row;
  absl::Status limit_error;
  jpeg_decompress_struct cinfo;
  JpegErrorRecord error;
  jpeg_progress_mgr progress;
  std::memset(&progress, 0, sizeof(progress));
  cinfo.err = jpeg_std_error(&error.pub);
  error.pub.error_exit = OnJpegError;
  error.pub.emit_message = OnJpegMessage;
  error.message[0] = '\0';
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&cinfo);
    const bool truncated = error.pub.msg_code == JWRN_JPEG_EOF || error.pub.msg_code == JERR_INPUT_EOF;
    return absl::InvalidArgumentError(
        StrCat(truncated ? "truncated JPEG: " : "invalid JPEG: ", error.message));
  }
  jpeg_create_decompress(&cinfo);
  progress.progress_monitor = OnJpegProgress;
  cinfo.progress = &progress;
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(data.data()),
               static_cast<unsigned long>(data.size()));
  jpeg_read_header(&cinfo, TRUE);
  limit_error = CheckLimits("JPEG", cinfo.image_width, cinfo.image_height, limits);
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  if (limit_error.ok() && !cmyk && cinfo.jpeg_color_space != JCS_GRAYSCALE &&
      cinfo.jpeg_color_space != JCS_YCbCr && cinfo.jpeg_color_space != JCS_RGB) {
    limit_error = absl::InvalidArgumentError(
        StrCat("JPEG with an unsupported colour space (", cinfo.num_components, " components)"));
  }
  if (!limit_error.ok()) {
    jpeg_destroy_decompress(&cinfo);
    return limit_error;
  }
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  image.width = static_cast<int>(cinfo.output_width);
  image.height = static_cast<int>(cinfo.output_height);
  image.pixels.resize(static_cast<size_t>(image.width) * image.height * 3);
  if (cmyk) cmyk_row.resize(static_cast<size_t>(image.width) * 4);
  while (cinfo.output_scanline < cinfo.output_height) {
    uint8_t* rgb = image.pixels.data() + static_cast<size_t>(cinfo.output_scanline) * image.width * 3;
    JSAMPROW row = cmyk ? cmyk_row.data() : rgb;
    jpeg_read_scanlines(&cinfo, &row, 1);
    if (!cmyk) continue;
    // Adobe's inverted CMYK (Pillow assumes it for every CMYK JPEG, and so does this):
    // stored s = 255 - value; R = (255 - K) - C * (255 - K) / 255 as Pillow's cmyk2rgb.
    for (int x = 0; x < image.width; ++x) {
      const uint8_t* s = &cmyk_row[static_cast<size_t>(x) * 4];
      const int nk = s[3];  // 255 - K
      for (int c = 0; c < 3; ++c) {
        const int v = nk - MulDiv255(255 - s[c], nk);
        rgb[3 * x + c] = static_cast<uint8_t>(v < 0 ? 0 : v);
      }
    }
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return image;
}

// ---- PNG --------------------------------------------------------------------------------

struct PngReader {
  const uint8_t* data;
  size_t size;
  size_t offset;
  char message[256];
};

void OnPngError(png_structp png, png_const_charp message) {
  auto* reader = static_cast<PngReader*>(png_get_error_ptr(png));
  std::snprintf(reader->message, sizeof(reader->message), "%s", message);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}  // ancillary-chunk problems: ignored

void ReadPngData(png_structp png, png_bytep out, png_size_t length) {
  auto* reader = static_cast<PngReader*>(png_get_io_ptr(png));
  if (length > reader->size - reader->offset) png_error(png, "truncated PNG: data ends early");
  std::memcpy(out, reader->data + reader->offset, length);
  reader->offset += length;
}

absl::StatusOr<RgbImage> DecodePng(std::string_view data, const DecodeLimits& limits) {
  RgbImage image;
  std::vector<uint8_t> decoded;
  std::vector<png_bytep> rows;
  absl::Status limit_error;
  PngReader reader{reinterpret_cast<const uint8_t*>(data.data()), data.size(), 0, {0}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, OnPngError, OnPngWarning);
  if (png == nullptr) return absl::ResourceExhaustedError("PNG: cannot create a decoder");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return absl::ResourceExhaustedError("PNG: cannot create a decoder");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    const bool truncated = std::strncmp(reader.message, "truncated", 9) == 0;
    return absl::InvalidArgumentError(
        truncated ? std::string(reader.message) : StrCat("invalid PNG: ", reader.message));
  }
  png_set_read_fn(png, &reader, ReadPngData);
  png_read_info(png, info);
  const int64_t width = png_get_image_width(png, info);
  const int64_t height = png_get_image_height(png, info);
  limit_error = CheckLimits("PNG", width, height, limits);
  if (!limit_error.ok()) {
    png_destroy_read_struct(&png, &info, nullptr);
    return limit_error;
  }
  const int color_type = png_get_color_type(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (bit_depth == 16) png_set_strip_16(png);  // the high byte, as Pillow's "RGB;16B"
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int channels = png_get_channels(png, info);
  if (png_get_bit_depth(png, info) != 8 || channels < 1 || channels > 4) {
    png_error(png, "unsupported PNG pixel format");
  }
  const size_t row_bytes = png_get_rowbytes(png, info);
  if (row_bytes != static_cast<size_t>(width) * channels) png_error(png, "unexpected PNG row size");
  decoded.resize(row_bytes * height);
  rows.resize(height);
  for (int64_t y = 0; y < height; ++y) rows[y] = decoded.data() + y * row_bytes;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);

  // gray, gray+alpha, RGB, RGBA -> RGB; alpha dropped.
  image.width = static_cast<int>(width);
  image.height = static_cast<int>(height);
  image.pixels.resize(static_cast<size_t>(width) * height * 3);
  const size_t n = static_cast<size_t>(width) * height;
  const uint8_t* s = decoded.data();
  uint8_t* d = image.pixels.data();
  for (size_t i = 0; i < n; ++i, s += channels, d += 3) {
    if (channels <= 2) {
      d[0] = d[1] = d[2] = s[0];
    } else {
      d[0] = s[0];
      d[1] = s[1];
      d[2] = s[2];
    }
  }
  return image;
}

}  // namespace

absl::StatusOr<RgbImage> DecodeImage(std::string_view encoded, const DecodeLimits& limits) {
  if (encoded.empty()) return absl::InvalidArgumentError("empty image (0 bytes)");
  if (HasPrefix(encoded, kJpegMagic, sizeof(kJpegMagic))) return DecodeJpeg(encoded, limits);
  if (HasPrefix(encoded, kPngMagic, sizeof(kPngMagic))) return DecodePng(encoded, limits);
  return absl::InvalidArgumentError(
      StrCat("not a JPEG or PNG image (", encoded.size(), " bytes, no JPEG or PNG signature)"));
}

}  // namespace infera::processing
