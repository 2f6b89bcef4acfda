// Fuzz target: the system shared-memory HTTP routes (http/shared_memory_routes.h): the
// URL path (region names, percent-escapes) and the register body (JSON through ReadJson,
// then the key / offset / byte_size checks of shm/shared_memory_registry.h).
//
// Input: byte 0 selects the method (even GET, odd POST); then the path up to the first
// '\n' (prefixed with "/v2/systemsharedmemory" when byte 0 & 2, "/v2/cudasharedmemory"
// otherwise); the rest is the body. Keys the fuzzer invents name no existing object (or
// the object does not hold the range), so registrations fail cleanly; every answer must be
// a well-formed status, never a crash or a sanitizer report.
#include <cstdint>
#include <string>
#include <string_view>

#include "api/admin_guard.h"
#include "http/http_message.h"
#include "http/shared_memory_routes.h"
#include "shm/shared_memory_registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static infera::SharedMemoryRegistry registry(/*max_regions=*/8);
  static const infera::SharedMemoryRoutes routes(registry, *infera::AdminGuard::Create({}));
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t newline = rest.find('\n');
  infera::HttpRequest request;
  request.method = (data[0] & 1) ? "POST" : "GET";
  request.target = std::string((data[0] & 2) ? "/v2/systemsharedmemory" : "/v2/cudasharedmemory") +
                   std::string(rest.substr(0, newline));
  if (newline != std::string_view::npos) request.body = std::string(rest.substr(newline + 1));
  if (!infera::SharedMemoryRoutes::Matches(request.path())) return 0;
  infera::HttpResponse response = routes.Handle(request);
  if (response.status < 200 || response.status > 599) __builtin_trap();
  return 0;
}
