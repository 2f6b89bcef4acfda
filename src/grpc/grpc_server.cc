#include "grpc/grpc_server.h"

#include <limits>

#include "common/str_cat.h"
#include "grpc/health_service.h"
#include "grpc/inference_service.h"
#include "grpc/metadata_handlers.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/security/server_credentials.h"
#include "security/grpc_tls_credentials.h"

namespace infera {

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(const Options& options,
                                                              ModelManager& manager) {
  if (options.max_message_bytes == 0 ||
      options.max_message_bytes > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(StrCat("gRPC message limit ", options.max_message_bytes,
                                             " must be in [1, ", std::numeric_limits<int>::max(),
                                             "]"));
  }
  if (options.infer_threads < 1) {
    return absl::InvalidArgumentError(
        StrCat("gRPC infer threads ", options.infer_threads, " must be at least 1 (--grpc-infer-threads)"));
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (options.tls.enabled()) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> tls = MakeGrpcServerTlsCredentials(options.tls);
    if (!tls.ok()) return tls.status();
    credentials = *std::move(tls);
  }
  std::unique_ptr<GrpcServer> server(new GrpcServer());
  server->handlers_ = std::make_unique<MetadataHandlers>(
      manager, MetadataHandlers::Options{options.server_name, options.server_version,
                                         options.server_ready, options.trace_settings});
  AdminGuard::Options guard_options;
  guard_options.admin_token = options.admin_token;
  guard_options.restrictions = options.restricted_protocols;
  guard_options.header_prefix = "triton-grpc-protocol-";  // Triton's metadata names
  guard_options.explicit_mode = manager.mode() == ModelControlMode::kExplicit;
  guard_options.opened = options.opened_admin_api;
  if (ApiKeyStore* keys = options.api_keys) {
    guard_options.api_key_admin = ApiKeyAdminCheck(keys);
    guard_options.credential_of = ApiKeyCredentialOf(keys);
  }
  absl::StatusOr<AdminGuard> guard = AdminGuard::Create(std::move(guard_options));
  if (!guard.ok()) return guard.status();
  AdminExecutor* admin = options.admin_executor;
  if (admin == nullptr) {
    server->own_admin_ = std::make_unique<AdminExecutor>(AdminExecutor::Options{});
    admin = server->own_admin_.get();
  }
  server->inference_ = std::make_unique<InferenceService>(manager, *server->handlers_, *admin,
                                                          options.shared_memory, std::move(*guard), options.api_keys);
  AsyncInferContext& infer = server->infer_context_;
  infer.service = &server->inference_->service();
  infer.manager = &manager;
  infer.api_keys = options.api_keys;
  infer.guard = &server->inference_->guard();
  infer.infer.max_response_bytes = options.max_message_bytes;
  infer.infer.trace = InferTrace::Sink{options.trace_settings, options.tracer, options.trace_file};
  infer.infer.shared_memory = options.shared_memory;
  infer.max_pending_per_stream = options.max_pending_per_stream;
  infer.streams = &server->streams_;
  infer.live_calls = &server->live_calls_;
  server->infer_threads_ = std::make_unique<InferCqThreads>(options.infer_threads);
  server->health_ = std::make_unique<HealthService>(options.server_ready);
  // Every other RPC of both services, served on the same queues (no callback method).
  server->methods_ = server->inference_->Methods(&server->live_calls_);
  for (auto& method : server->health_->Methods(&server->live_calls_)) {
    server->methods_.push_back(std::move(method));
  }
  for (const auto& method : server->methods_) infer.methods.push_back(method.get());

  // An IPv6 literal needs brackets before the port ("[::]:8001").
  const bool ipv6 = options.address.find(':') != std::string::npos && options.address[0] != '[';
  const std::string address = ipv6 ? StrCat("[", options.address, "]:", options.port)
                                    : StrCat(options.address, ":", options.port);
  const int limit = static_cast<int>(options.max_message_bytes);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, credentials, &server->port_);
  builder.SetMaxReceiveMessageSize(limit);
  builder.SetMaxSendMessageSize(limit);
  builder.RegisterService(&server->inference_->service());
  builder.RegisterService(&server->health_->service());
  server->infer_threads_->AddQueues(builder);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    if (server->server_ != nullptr) server->server_->Shutdown();
    server->infer_threads_->Shutdown();
    return absl::UnavailableError(StrCat("cannot serve gRPC on ", address,
                                         " (address in use or not valid?)"));
  }
  server->infer_threads_->Start(infer);
  return server;
}

GrpcServer::~GrpcServer() {
  Shutdown(std::chrono::milliseconds(0));
  if (infer_threads_) infer_threads_->Shutdown();  // a server that never started
}

void GrpcServer::Shutdown(std::chrono::milliseconds timeout) {
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  if (own_admin_) own_admin_->Shutdown();  // answers its calls, so Wait() can return
  streams_.DrainAll();
  // The infer threads keep polling meanwhile: they run what completes the calls in
  // flight. gRPC's Shutdown cancels what is left at the deadline but does not wait for
  // the application's calls; those end when their model requests complete (the models
  // drain beside this), and no call may start an operation on a queue once it is shut
  // down, so the queues stop only when no call is left.
  server_->Shutdown(std::chrono::system_clock::now() + timeout);
  server_->Wait();
  live_calls_.AwaitNone();
  infer_threads_->Shutdown();
}

}  // namespace infera
