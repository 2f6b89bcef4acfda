// Request content codings (RFC 9110 section 8.4): gzip and deflate request bodies,
// inflated with zlib before any route reads them (tritonclient's
// `request_compression_algorithm=`). docs/http.md ("Request compression") has the design.
//
//   ParseContentEncoding   the Content-Encoding field's value -> one coding, or the 415
//                          naming what is not supported
//   InflateBody            a gzip / deflate body -> its bytes, bounded while inflating
//   DecodeRequestBody      both, on a whole HttpRequest, with the HTTP answer of a failure
//                          (the session calls it only when a Content-Encoding field came)
//
// Bounds: the compressed body is bounded by the server's body limit before this runs
// (the parser's 413); the inflated bytes by `max_bytes`, counted as zlib produces them:
// the output grows geometrically and never past max_bytes + 1, so a decompression bomb
// costs at most about 1.5 x max_bytes of memory and is answered 413, however far it
// would inflate.
//
// Thread-safe: free functions without shared state.
#ifndef INFERA_HTTP_CONTENT_CODING_H_
#define INFERA_HTTP_CONTENT_CODING_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "http/http_message.h"

namespace infera {

enum class ContentCoding : uint8_t {
  kIdentity,
  kGzip,     // RFC 1952, one or more members; "x-gzip" is the same (RFC 9110 8.4.1.3)
  kDeflate,  // RFC 1950 zlib stream (what HTTP's "deflate" is); a raw RFC 1951 stream,
             // which some clients send, is accepted too (told apart by the zlib header)
};

// `field_value`: every Content-Encoding field of the request, joined by ", ". Codings are
// case-insensitive; "identity" entries are dropped. Unimplemented naming the coding for
// anything else, and for more than one non-identity coding (stacked codings).
absl::StatusOr<ContentCoding> ParseContentEncoding(std::string_view field_value);

// Inflates `compressed` into `*out` (replaced). REQUIRES: coding != kIdentity. An empty
// body inflates to an empty body. Errors: OutOfRange when the inflated bytes would exceed
// `max_bytes` (nothing more is inflated); InvalidArgument naming the problem for a
// corrupt or truncated stream, or bytes after a deflate stream's end.
absl::Status InflateBody(ContentCoding coding, std::string_view compressed, size_t max_bytes, std::string* out);

// Replaces `request->body` by its decoded bytes (at most `max_bytes`), drops the
// Content-Encoding fields and sets Content-Length to the decoded size, so routes see an
// identity body (Inference-Header-Content-Length counts the decoded bytes, as in Triton).
// On failure returns the answer: 415 naming the coding (with Accept-Encoding: gzip,
// deflate), 413 naming the limit, 400 naming the stream's problem; `request` is then
// unspecified.
std::optional<HttpResponse> DecodeRequestBody(HttpRequest* request, size_t max_bytes);

}  // namespace infera

#endif  // INFERA_HTTP_CONTENT_CODING_H_
