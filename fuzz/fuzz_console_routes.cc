// Fuzz target: the web console's request handling without sockets (console/console_routes.h
// ConsoleStaticResponse, console/console_stream.h ConsoleStream::ParseIntervalMs).
//
// Input: first byte picks the method, the rest is the request target (path + query), and
// the same bytes after "/console/" and "/v2/console/stream?". Oracle besides ASan/UBSan:
// the static answer is one of 200/302/304/404/405, a 200 body is exactly an embedded
// asset's bytes (nothing outside the table is ever served), a parsed interval is within
// its bounds, and a refused one names interval_ms or the unknown parameter.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "console/console_assets.h"
#include "console/console_routes.h"
#include "console/console_stream.h"

namespace {

void CheckStatic(const infera::HttpRequest& request) {
  const infera::HttpResponse r = infera::ConsoleStaticResponse(request);
  switch (r.status) {
    case 200: {
      bool embedded = false;
      for (size_t i = 0; i < infera::console_internal::kEmbeddedAssetCount; ++i) {
        embedded = embedded || infera::console_internal::kEmbeddedAssets[i].bytes == r.body;
      }
      if (!embedded && !(request.method == "HEAD" && r.body.empty())) std::abort();
      break;
    }
    case 302:
    case 304:
    case 404:
    case 405:
      break;
    default:
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kMethods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "get", ""};
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  infera::HttpRequest request;
  request.method = kMethods[data[0] % 8];
  request.target = rest;
  CheckStatic(request);
  request.target = "/console/" + rest;
  CheckStatic(request);
  if (data[0] & 0x80) request.headers.emplace_back("if-none-match", rest);
  CheckStatic(request);

  const absl::StatusOr<int> interval = infera::ConsoleStream::ParseIntervalMs("/v2/console/stream?" + rest);
  if (interval.ok()) {
    if (*interval < infera::ConsoleStream::kMinIntervalMs || *interval > infera::ConsoleStream::kMaxIntervalMs) {
      std::abort();
    }
  } else if (interval.status().code() != absl::StatusCode::kInvalidArgument) {
    std::abort();
  }
  return 0;
}
