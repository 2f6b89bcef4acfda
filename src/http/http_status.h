// The one place that maps an absl::Status to an HTTP response.
//
//   InvalidArgument, OutOfRange, FailedPrecondition -> 400   NotFound -> 404
//   ResourceExhausted -> 429 (+ Retry-After)   Unavailable -> 503 (+ Retry-After)
//   (Retry-After is 1 s unless the status carries a hint, see common/retry_after.h)
//   DeadlineExceeded -> 504   Cancelled -> 499   Unimplemented -> 501
//   AlreadyExists, Aborted -> 409   PermissionDenied -> 403   Unauthenticated -> 401
//   anything else -> 500
// The body is KServe's error object: {"error": "<message>"}.
#ifndef INFERA_HTTP_HTTP_STATUS_H_
#define INFERA_HTTP_HTTP_STATUS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "http/http_message.h"

namespace infera {

int HttpStatusCode(absl::StatusCode code);

// {"error": message}, JSON-escaped; bytes of `message` that are not valid UTF-8 (client
// text echoed back, e.g. a URL path) become U+FFFD, so the body is always valid JSON.
std::string ErrorJson(std::string_view message);

// Response for a non-OK status. REQUIRES: !status.ok().
HttpResponse ErrorResponse(const absl::Status& status);
HttpResponse ErrorResponse(int http_status, std::string_view message);

}  // namespace infera

#endif  // INFERA_HTTP_HTTP_STATUS_H_
