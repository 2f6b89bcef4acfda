// GrpcServer: the KServe v2 gRPC frontend — inference.GRPCInferenceService and
// grpc.health.v1.Health on one port.
//
// Threads: every RPC runs on `infer_threads` threads of its own, each polling its own
// completion queue and running the calls it matches (infer_cq_threads.h). ModelInfer and
// ModelStreamInfer: decode, an inline model, encode and Finish on that thread; other
// models complete on the scheduler's workers, which write the answer themselves. The
// control-plane and health RPCs are answered inline on that thread (async_unary_call.h),
// RepositoryModelLoad/Unload from the admin executor's worker. No method is on gRPC's
// callback API, so gRPC runs no callback threads. No thread is held per call or stream.
//
// Limits: a request or response larger than `max_message_bytes` fails with
// RESOURCE_EXHAUSTED (gRPC's "Received message larger than max (N vs. M)" for requests;
// a message naming --grpc-max-message-bytes for responses).
//
// Shutdown(timeout): stops accepting calls at once (new ones get UNAVAILABLE); open
// streams stop reading, answer what they have and end with UNAVAILABLE (an idle stream
// ends at once); in-flight unary calls finish. After `timeout`, whatever is left is
// cancelled (its CancellationTokens fire). Returns when every call is done, the
// completion queues are drained and the infer threads joined.
//
// Thread-safe, except that Shutdown must not run concurrently with itself or the
// destructor. The manager must outlive the server.
//
// Usage:
//   ASSIGN_OR_RETURN(auto grpc, GrpcServer::Start(options, manager));
//   LOG << "gRPC on port " << grpc->port();
//   grpc->Shutdown(std::chrono::seconds(30));
#ifndef INFERA_GRPC_GRPC_SERVER_H_
#define INFERA_GRPC_GRPC_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/admin_guard.h"
#include "grpc/async_infer_context.h"
#include "grpc/async_unary_call.h"
#include "grpc/infer_cq_threads.h"
#include "grpc/live_calls.h"
#include "grpc/stream_registry.h"
#include "manager/admin_executor.h"
#include "manager/model_manager.h"
#include "security/tls_config.h"
#include "tracing/trace_file_writer.h"
#include "tracing/trace_settings.h"
#include "tracing/tracer.h"
#include "security/api_key_store.h"
#include "shm/shared_memory_registry.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace infera {

class HealthService;
class InferenceService;
class MetadataHandlers;

class GrpcServer {
 public:
  struct Options {
    std::string address = "0.0.0.0";
    int port = 8001;  // 0: pick a free port (see port())
    uint64_t max_message_bytes = 64ull << 20;
    // Unanswered requests one ModelStreamInfer stream may have before reading pauses.
    size_t max_pending_per_stream = 256;
    // Threads (each with its own completion queue) that serve every RPC
    // (--grpc-infer-threads); at least 1.
    int infer_threads = 1;
    std::string server_name = "infera";
    std::string server_version;
    // Whether the server as a whole is ready (Server::IsReady: started, not draining, and
    // under --strict-readiness every model ready).
    std::function<bool()> server_ready;
    // When set, RepositoryModelLoad/Unload need metadata "authorization: Bearer <token>".
    std::string admin_token;
    // --grpc-restricted-protocol groups: the repository RPCs of a restricted
    // model-repository category need metadata "triton-grpc-protocol-<key>: <value>"
    // (api/admin_guard.h).
    std::vector<ApiRestriction> restricted_protocols;
    // Admin API categories open to every client without a credential (--allow-admin-api,
    // --allow-client-shm; AdminGuard::Options::opened). Empty: closed by default.
    std::vector<ApiCategory> opened_admin_api;
    // Runs RepositoryModelLoad/Unload (not owned; outlives the server, and is shut down
    // before Shutdown() so its answers can still be sent). Null: the server owns one
    // worker of its own, shut down first thing in Shutdown().
    AdminExecutor* admin_executor = nullptr;
    // The trace extension's settings (TraceSetting; null: UNIMPLEMENTED) and, with an
    // exporter, where sampled inferences are traced. Not owned; outlive the server.
    TraceSettings* trace_settings = nullptr;
    Tracer* tracer = nullptr;
    TraceFileWriter* trace_file = nullptr;  // trace mode triton's file
    // The system shared-memory regions (not owned; outlives the server). Null: the
    // shared-memory RPCs answer UNAVAILABLE and requests naming a region fail.
    SharedMemoryRegistry* shared_memory = nullptr;
    // TLS on the port when tls.enabled() (docs/grpc.md, "TLS and mutual TLS"): the files
    // are checked at Start and re-read every kGrpcTlsRefreshSeconds; plaintext otherwise.
    TlsConfig tls;
    // API keys (docs/api_keys.md; grpc/api_key_check.h): every RPC but ServerLive,
    // ServerReady and grpc.health.v1 needs a key. Null: keys off. Not owned; outlives
    // the server.
    ApiKeyStore* api_keys = nullptr;
  };

  // Unavailable naming the address when the port cannot be bound; InvalidArgument for a
  // message limit gRPC cannot take (above INT32_MAX), fewer than 1 infer thread, or TLS
  // files that do not load (naming the file).
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(const Options& options,
                                                           ModelManager& manager);
  ~GrpcServer();  // Shutdown(0) if not done yet

  // The bound port (the chosen one when Options::port was 0).
  int port() const { return port_; }

  // See the class comment. Idempotent.
  void Shutdown(std::chrono::milliseconds timeout);

 private:
  GrpcServer() = default;

  int port_ = 0;
  // Services first: the grpc::Server that calls them is destroyed before them.
  std::unique_ptr<AdminExecutor> own_admin_;  // when Options::admin_executor is null
  std::unique_ptr<MetadataHandlers> handlers_;
  std::unique_ptr<InferenceService> inference_;
  std::unique_ptr<HealthService> health_;
  // The control-plane and health methods the queues serve; outlive the threads.
  std::vector<std::unique_ptr<AsyncMethod>> methods_;
  // What the infer calls share; outlives the threads that run them.
  AsyncInferContext infer_context_;
  StreamRegistry streams_;
  LiveCalls live_calls_;
  std::unique_ptr<InferCqThreads> infer_threads_;  // joined before server_ goes
  std::unique_ptr<grpc::Server> server_;
  bool shut_down_ = false;
};

}  // namespace infera

#endif  // INFERA_GRPC_GRPC_SERVER_H_
