// Triton's model repository extension plus infera's canary promotion:
//
//   POST /v2/repository/index               {"ready": bool}? (kserve_extension_routes.h)
//   POST /v2/repository/models/{m}/load     optional body {"parameters":{"config":"<JSON>"}}
//   POST /v2/repository/models/{m}/unload
//   POST /v2/repository/models/{m}/canary/promote
//
// Every route is in the AdminGuard's model-repository category (api/admin_guard.h):
// a restricted-API header when one is configured (403), and for the admin operations
// (load, unload, promote) `Authorization: Bearer <token>` when --admin-token is set
// (401). Load and unload are refused with 409 unless the server runs in explicit model
// control mode; promotion works in every mode, but outside explicit mode only with a
// token or restriction configured (403 otherwise).
//
// Thread-safe. A load or unload answers when it is done, as Triton's API does; it runs
// on the server's AdminExecutor, never on the I/O thread. When that queue is full the
// answer is 429 with Retry-After; once the server is shutting down, 503.
#ifndef INFERA_HTTP_REPOSITORY_ROUTES_H_
#define INFERA_HTTP_REPOSITORY_ROUTES_H_

#include <string>

#include "api/admin_guard.h"
#include "http/http_server.h"
#include "manager/admin_executor.h"
#include "manager/model_manager.h"

namespace infera {

class RepositoryRoutes {
 public:
  // `manager` and `admin` outlive this; `admin` is shut down (its jobs answered) before
  // the HTTP server these routes answer through stops.
  RepositoryRoutes(ModelManager& manager, AdminExecutor& admin, AdminGuard guard);

  // True for the paths this class serves.
  static bool Matches(std::string_view path);
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  ModelManager& manager_;
  AdminExecutor& admin_;
  const AdminGuard guard_;
};

}  // namespace infera

#endif  // INFERA_HTTP_REPOSITORY_ROUTES_H_
