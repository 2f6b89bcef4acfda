// SimpleHttpGet: one blocking HTTP/1.1 request on its own short-lived connection, for
// the control-plane calls of a run (model metadata and config before it, server
// statistics at window boundaries) — never on the load path.
//
// Thread-safe (no shared state).
//
// Usage:
//   ASSIGN_OR_RETURN(HttpReply reply, SimpleHttpGet("127.0.0.1", 8000, "/v2/models/simple", 5000));
#ifndef INFERA_TOOLS_BENCH_SIMPLE_HTTP_H_
#define INFERA_TOOLS_BENCH_SIMPLE_HTTP_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::bench {

struct HttpReply {
  int status = 0;
  std::string body;
};

// Unavailable for connection problems and timeouts (the message names host:port and
// the path), InvalidArgument for a malformed response. Any HTTP status is a reply.
absl::StatusOr<HttpReply> SimpleHttpGet(const std::string& host, uint16_t port, const std::string& path,
                                        int timeout_ms);
// The same with any method, a body (sent with Content-Length) and extra headers.
absl::StatusOr<HttpReply> SimpleHttpRequest(const std::string& method, const std::string& host, uint16_t port,
                                            const std::string& path, const std::string& body,
                                            const std::vector<std::pair<std::string, std::string>>& headers,
                                            int timeout_ms);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_SIMPLE_HTTP_H_
