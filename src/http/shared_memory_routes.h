// Triton's shared-memory extensions over HTTP (docs/shared_memory.md):
//
//   GET|POST /v2/systemsharedmemory[/region/{name}]/status
//            -> [{"name","key","offset","byte_size"}...]  (404 for an unknown name)
//   POST     /v2/systemsharedmemory/region/{name}/register  {"key","offset","byte_size"}
//            (no name: 400 "'region name' is necessary to register system shared memory
//            region", Triton's text)
//   POST     /v2/systemsharedmemory[/region/{name}]/unregister  (no name: every region)
//   GET|POST /v2/cudasharedmemory[/region/{name}]/status   -> []  (404 for a name)
//   POST     /v2/cudasharedmemory[/region/{name}]/unregister -> 200 (nothing registered)
//   POST     /v2/cudasharedmemory/region/{name}/register
//            -> 400 "failed to register CUDA shared memory region: '<name>', GPUs not
//            supported" (a CPU-only Triton's answers: CudaSharedMemoryChange)
//
// The registry is shm/shared_memory_registry.h's (names, keys and ranges validated
// there); the gRPC counterpart is grpc/shared_memory_handlers.h with the same messages.
// Access goes through the AdminGuard's shared-memory category (api/admin_guard.h):
// register is an admin operation, closed (403) unless the operator opened it
// (--allow-client-shm=true, --admin-token, a restricted group); unregister needs the token
// when there is one (401) but is never closed; every route, status included, needs the
// header of an --http-restricted-api group naming shared-memory when one does (403), as
// in Triton.
//
// The register body goes through ReadJson (size and depth limits): "key" a string,
// "offset" and "byte_size" non-negative integers (offset may be omitted: 0); anything
// else is a 400 naming the field. Unknown fields are ignored (as KServe bodies). Region
// names in the URL are percent-decoded.
//
// Thread-safe.
#ifndef INFERA_HTTP_SHARED_MEMORY_ROUTES_H_
#define INFERA_HTTP_SHARED_MEMORY_ROUTES_H_

#include <string_view>

#include "api/admin_guard.h"
#include "http/http_message.h"
#include "shm/shared_memory_registry.h"

namespace infera {

class SharedMemoryRoutes {
 public:
  // `registry` outlives the routes.
  SharedMemoryRoutes(SharedMemoryRegistry& registry, AdminGuard guard)
      : registry_(registry), guard_(std::move(guard)) {}

  // Paths under /v2/systemsharedmemory and /v2/cudasharedmemory.
  static bool Matches(std::string_view path);

  HttpResponse Handle(const HttpRequest& request) const;

 private:
  HttpResponse HandleSystem(const HttpRequest& request, std::string_view name,
                            std::string_view action) const;

  SharedMemoryRegistry& registry_;
  const AdminGuard guard_;
};

}  // namespace infera

#endif  // INFERA_HTTP_SHARED_MEMORY_ROUTES_H_
