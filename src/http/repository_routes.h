// Triton's model repository extension (load/unload) plus infera's canary promotion:
//
//   POST /v2/repository/models/{m}/load     optional body {"parameters":{"config":"<JSON>"}}
//   POST /v2/repository/models/{m}/unload
//   POST /v2/repository/models/{m}/canary/promote
//
// Admin operations: refused with 409 unless the server runs in explicit model control
// mode (promotion works in every mode), and when an admin token is configured they
// need `Authorization: Bearer <token>` (401 otherwise). The index lives with the other
// extension routes.
//
// Thread-safe. Load and unload block the calling I/O thread's request until done, as
// Triton's API does; they run on a separate thread so the I/O thread is not held.
#ifndef INFERA_HTTP_REPOSITORY_ROUTES_H_
#define INFERA_HTTP_REPOSITORY_ROUTES_H_

#include <string>

#include "absl/synchronization/mutex.h"
#include "http/http_server.h"
#include "manager/model_manager.h"

namespace infera {

class RepositoryRoutes {
 public:
  RepositoryRoutes(ModelManager& manager, std::string admin_token);
  ~RepositoryRoutes();  // waits for load/unload operations still running

  // True for the paths this class serves.
  static bool Matches(std::string_view path);
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  ModelManager& manager_;
  const std::string admin_token_;
  mutable absl::Mutex mu_;
  mutable int running_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace infera

#endif  // INFERA_HTTP_REPOSITORY_ROUTES_H_
