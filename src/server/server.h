// Server: wiring only — builds the backend registry, the model manager and the HTTP and
// gRPC frontends from ServeOptions, and tears them down in the right order.
//
// Start order: HTTP, then gRPC (liveness answers while models load; readiness stays
// false), then every model. Shutdown order (every admitted request gets its answer):
//   1. readiness false; HTTP and gRPC stop accepting connections and calls at once;
//   2. the admin executor refuses queued loads / unloads and finishes the running one;
//   3. the models drain: queued and running requests complete, their responses go out
//      through the transports, which are still running;
//   4. each transport stops once its last response is written (its wait is bounded by
//      --exit-timeout-secs from step 1; gRPC then cancels what is left); only then are
//      the model versions destroyed (LLM streams run on the engine until then).
//
// Thread-safe.
#ifndef INFERA_SERVER_SERVER_H_
#define INFERA_SERVER_SERVER_H_

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "backend/backend_registry.h"
#include "diagnosis/diagnosis_routes.h"
#include "diagnosis/diagnosis_sampler.h"
#include "console/console_routes.h"
#include "console/console_stream.h"
#include "grpc/grpc_server.h"
#include "http/http_server.h"
#include "http/kserve_routes.h"
#include "http/repository_routes.h"
#include "http/shared_memory_routes.h"
#include "manager/admin_executor.h"
#include "manager/model_manager.h"
#include "manager/response_cache.h"
#include "security/api_key_store.h"
#include "shm/shared_memory_registry.h"
#include "metrics/server_metrics.h"
#include "openai/embeddings_routes.h"
#include "openai/openai_routes.h"
#include "tracing/trace_file_writer.h"
#include "tracing/trace_settings.h"
#include "tracing/tracer.h"
#include "server/options.h"

namespace infera {

class Server {
 public:
  // Starts the HTTP frontend and loads the repository. Fails only when the server as a
  // whole cannot run (bad repository path, port in use); a bad model fails alone.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServeOptions& options);
  ~Server();

  // The server's readiness (HTTP /v2/health/ready, gRPC ServerReady and health Check,
  // the console): started and not draining, and with --strict-readiness (the default)
  // every model ready too.
  bool IsReady() const;
  // First step of a graceful stop: readiness turns false; requests are still served.
  void BeginDrain() { draining_ = true; }
  // Graceful stop: see the class comment. Idempotent.
  void Shutdown();

 private:
  explicit Server(const ServeOptions& options) : options_(options) {}

  // GET /metrics: refreshes the scrape-time gauges and renders the registry.
  HttpResponse MetricsResponse() const;
  // The response cache's families (metrics/response_cache_metrics.h), appended to `text`.
  void AppendCacheMetrics(std::string& text) const;
  absl::Status StartMetricsServer();
  absl::Status StartHealthServer(const KServeRoutes* kserve);

  const ServeOptions options_;
  std::unique_ptr<ServerMetrics> metrics_;  // null with --allow-metrics=false
  std::unique_ptr<ApiKeyStore> api_keys_;   // null without --api-key / --api-key-file
  std::unique_ptr<Tracer> tracer_;          // null without --trace-endpoint
  std::unique_ptr<TraceFileWriter> trace_file_;  // trace mode triton's file; null without one
  std::unique_ptr<TraceSettings> trace_settings_;  // the trace extension's settings
  BackendRegistry backends_;
  // The response cache (docs/response_cache.md); null without --cache-config. Before
  // manager_: the versions it serves use it until they are destroyed.
  std::unique_ptr<ResponseCache> response_cache_;
  std::unique_ptr<ModelManager> manager_;
  // Runs repository loads / unloads for both transports. After manager_ (its jobs use
  // it), before the routes and servers that submit to it.
  std::unique_ptr<AdminExecutor> admin_;
  // System shared-memory regions (both transports); outlives the routes and servers.
  SharedMemoryRegistry shared_memory_;
  std::unique_ptr<KServeRoutes> routes_;
  std::unique_ptr<RepositoryRoutes> repository_routes_;
  std::unique_ptr<SharedMemoryRoutes> shared_memory_routes_;
  std::unique_ptr<openai::OpenAiRoutes> openai_routes_;
  std::unique_ptr<openai::EmbeddingsRoutes> embeddings_routes_;
  // The bottleneck diagnosis (docs/diagnosis.md): one sampling thread for all models.
  std::unique_ptr<diagnosis::DiagnosisSampler> diagnosis_sampler_;
  std::unique_ptr<diagnosis::DiagnosisRoutes> diagnosis_routes_;
  // The web console (docs/console.md): its stream reads the manager, so it is declared
  // after it (destroyed first) and ended first by Shutdown().
  std::unique_ptr<ConsoleStream> console_stream_;
  std::unique_ptr<ConsoleRoutes> console_routes_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<GrpcServer> grpc_;
  std::unique_ptr<HttpServer> metrics_http_;  // --metrics-port
  std::unique_ptr<HttpServer> health_http_;   // --http-health-port (plaintext, health routes only)
  std::atomic<bool> models_loaded_{false};
  std::atomic<bool> draining_{false};   // readiness false (BeginDrain or Shutdown)
  std::atomic<bool> shut_down_{false};  // Shutdown() has run
  std::atomic<bool> started_{false};    // Start() succeeded (else Shutdown() is silent)
};

// Runs `infera serve` until SIGTERM/SIGINT; returns the process exit code.
int RunServe(const ServeOptions& options);

}  // namespace infera

#endif  // INFERA_SERVER_SERVER_H_
