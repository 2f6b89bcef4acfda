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
// Thread-safe. Load and unload block the calling I/O thread's request until done, as
// Triton's API does; they run on a separate thread so the I/O thread is not held.
#ifndef INFERA_HTTP_REPOSITORY_ROUTES_H_
#define INFERA_HTTP_REPOSITORY_ROUTES_H_

#include <string>

#include "absl/synchronization/mutex.h"
#include "api/admin_guard.h"
#include "http/http_server.h"
#include "manager/model_manager.h"

namespace infera {

class RepositoryRoutes {
 public:
  RepositoryRoutes(ModelManager& manager, AdminGuard guard);
  ~RepositoryRoutes();  // waits for load/unload operations still running

  // True for the paths this class serves.
  static bool Matches(std::string_view path);
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  ModelManager& manager_;
  const AdminGuard guard_;
  mutable absl::Mutex mu_;
  mutable int running_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace infera

#endif  // INFERA_HTTP_REPOSITORY_ROUTES_H_
