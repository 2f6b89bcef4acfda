// Decoding of an encoded image (JPEG or PNG, told apart by their magic bytes) into 8-bit
// RGB, safe on hostile input.
//
// - JPEG: libjpeg-turbo with an error manager that longjmps back (libjpeg's default
//   calls exit()); warnings (corrupt data the library recovers from, a truncated scan
//   it pads with grey) are errors here, so a truncated file is refused, not half grey.
//   Grayscale -> RGB (replicated), CMYK / YCCK -> RGB assuming Adobe's inverted CMYK
//   (what Photoshop writes; Pillow assumes it for every CMYK JPEG, and so does this),
//   rounded as Pillow's cmyk2rgb rounds. Progressive files with more than 500 scans are
//   refused (a CPU bomb; TurboJPEG's TJFLAG_LIMITSCANS limit). Default
//   decoding settings (ISLOW DCT, fancy upsampling), so pixels equal Pillow's and
//   torchvision.io.decode_jpeg's, which use the same library and settings. EXIF
//   orientation is ignored, as torchvision 0.14's decode_jpeg and Pillow's Image.open
//   ignore it (the reference pipelines).
// - PNG: libpng with longjmp error handling and libpng's own chunk/size limits; palette
//   -> RGB, gray (1/2/4/8/16 bit) -> RGB, 16-bit -> 8-bit (the high byte, as Pillow),
//   alpha dropped (not composited, as Pillow's convert("RGB")), tRNS ignored,
//   interlaced images de-interlaced. CRC errors are errors.
// - Limits are checked on the header, before the pixel buffer is allocated
//   (decompression bombs): width * height <= max_pixels and
//   max(w, h) / min(w, h) <= max_aspect_ratio.
//
// Errors: InvalidArgument naming the problem ("not a JPEG or PNG image", "truncated
// JPEG", "image is 30000x30000 pixels: more than max_pixels 40000000", ...).
//
// Thread-safe: no shared state (libjpeg/libpng state is per call).
#ifndef INFERA_BACKEND_PROCESSING_IMAGE_DECODE_H_
#define INFERA_BACKEND_PROCESSING_IMAGE_DECODE_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "backend/processing/image_resize.h"

namespace infera::processing {

struct DecodeLimits {
  int64_t max_pixels = 40'000'000;
  double max_aspect_ratio = 100.0;
};

absl::StatusOr<RgbImage> DecodeImage(std::string_view encoded, const DecodeLimits& limits);

}  // namespace infera::processing

#endif  // INFERA_BACKEND_PROCESSING_IMAGE_DECODE_H_
