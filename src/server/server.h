// Server: wiring only — builds the backend registry, the model manager and the HTTP
// frontend from ServeOptions, and tears them down in the right order.
//
// Start order: HTTP first (liveness answers while models load; readiness stays false),
// then every model. Shutdown order: readiness false, HTTP stops accepting and finishes
// in-flight requests (bounded by --exit-timeout-secs), models drain and unload, then the
// HTTP threads go (responses still in flight need them to exist).
//
// Thread-safe.
#ifndef INFERA_SERVER_SERVER_H_
#define INFERA_SERVER_SERVER_H_

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "backend/backend_registry.h"
#include "http/http_server.h"
#include "http/kserve_routes.h"
#include "manager/model_manager.h"
#include "server/options.h"

namespace infera {

class Server {
 public:
  // Starts the HTTP frontend and loads the repository. Fails only when the server as a
  // whole cannot run (bad repository path, port in use); a bad model fails alone.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServeOptions& options);
  ~Server();

  bool IsReady() const;
  // Graceful stop: see the class comment. Idempotent.
  void Shutdown();

 private:
  explicit Server(const ServeOptions& options) : options_(options) {}

  const ServeOptions options_;
  BackendRegistry backends_;
  std::unique_ptr<ModelManager> manager_;
  std::unique_ptr<KServeRoutes> routes_;
  std::unique_ptr<HttpServer> http_;
  std::atomic<bool> models_loaded_{false};
  std::atomic<bool> draining_{false};
};

// Runs `infera serve` until SIGTERM/SIGINT; returns the process exit code.
int RunServe(const ServeOptions& options);

}  // namespace infera

#endif  // INFERA_SERVER_SERVER_H_
