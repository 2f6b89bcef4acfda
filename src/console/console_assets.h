// The web console's static files (web/console/), compiled into the binary by
// cmake/EmbedAssets.cmake, so the console works offline and needs no files at run time.
//
//   const EmbeddedAsset* a = FindConsoleAsset("console.js");  // null when unknown
//
// Lookup is an exact match on the file's name relative to web/console/ (no path
// normalisation: "../x", "a//b" or percent-encoded names are simply not found).
//
// Thread-safe (immutable data).
#ifndef INFERA_CONSOLE_CONSOLE_ASSETS_H_
#define INFERA_CONSOLE_CONSOLE_ASSETS_H_

#include <cstddef>
#include <string_view>

namespace infera {

struct EmbeddedAsset {
  std::string_view name;          // "index.html", "console.js", ...
  std::string_view bytes;
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view etag;          // quoted strong ETag: "\"<16 hex of SHA-256>\""
};

const EmbeddedAsset* FindConsoleAsset(std::string_view name);

namespace console_internal {
// Defined in the generated console_assets_data.cc.
extern const EmbeddedAsset kEmbeddedAssets[];
extern const size_t kEmbeddedAssetCount;
}  // namespace console_internal

}  // namespace infera

#endif  // INFERA_CONSOLE_CONSOLE_ASSETS_H_
