// A minimal blocking HTTP/1.1 POST client for exporters (OTLP): http:// URLs only,
// one request per connection, every step bounded by `timeout`.
//
// Thread-safe (no shared state). Blocks the calling thread — call it from an exporter
// thread, never from a request thread.
#ifndef INFERA_TRACING_HTTP_POST_H_
#define INFERA_TRACING_HTTP_POST_H_

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace infera {

struct HttpUrl {
  std::string host;
  std::string port;
  std::string target;  // path (+ query), "/" when empty
};

// Parses "http://host[:port][/path]". InvalidArgument otherwise (https is not supported).
absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url);

// POSTs `body` and returns the response status code. Unavailable on connection
// failure or timeout.
absl::StatusOr<int> HttpPost(const HttpUrl& url, std::string_view content_type, std::string body,
                             std::chrono::milliseconds timeout);

}  // namespace infera

#endif  // INFERA_TRACING_HTTP_POST_H_
