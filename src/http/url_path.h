// Splitting and percent-decoding URL paths (RFC 3986) for the route tables.
//
// Thread-safe (pure functions).
#ifndef INFERA_HTTP_URL_PATH_H_
#define INFERA_HTTP_URL_PATH_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace infera {

// "/v2/models/a%20b/infer" -> {"v2", "models", "a%20b", "infer"}. Empty segments
// (from "//" or a trailing '/') are dropped.
std::vector<std::string_view> SplitPath(std::string_view path);

// The same into inline storage: no allocation for paths of up to 8 segments (the
// per-request route tables use this).
using PathSegments = absl::InlinedVector<std::string_view, 8>;
PathSegments SplitPathInline(std::string_view path);

// Decodes %XX escapes; nullopt for a malformed escape or a decoded NUL.
std::optional<std::string> PercentDecode(std::string_view text);

}  // namespace infera

#endif  // INFERA_HTTP_URL_PATH_H_
