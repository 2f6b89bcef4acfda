#include "server/server.h"

#include <csignal>
#include <cstdlib>
#include <thread>

#include "backend/builtin/builtin_backends.h"
#include "backend/torch/torch_backend.h"
#include "common/logging.h"
#include "common/str_cat.h"
#include "server/version.h"

namespace infera {

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServeOptions& options) {
  std::unique_ptr<Server> server(new Server(options));
  server->backends_.Register(CreateTorchBackend(), {std::string(kTorchPlatformName)});
  server->backends_.Register(CreateAddSubBackend());
  server->backends_.Register(CreateIdentityBackend());
  server->backends_.Register(CreateFaultInjectionBackend());

  const int cores = std::max(1u, std::thread::hardware_concurrency());
  ModelManager::Options manager_options;
  manager_options.repository = options.model_repository;
  manager_options.backends = &server->backends_;
  manager_options.num_cores = cores;
  manager_options.max_queue_size = options.max_queue_size;
  manager_options.max_parallel_loads = options.model_load_thread_count;
  auto manager = ModelManager::Create(std::move(manager_options));
  if (!manager.ok()) return manager.status();
  server->manager_ = std::move(*manager);

  KServeRoutes::Options route_options;
  route_options.server_version = std::string(kInferaVersion);
  Server* raw = server.get();
  route_options.server_ready = [raw] { return raw->IsReady(); };
  server->routes_ = std::make_unique<KServeRoutes>(*server->manager_, std::move(route_options));

  HttpServer::Options http_options;
  http_options.address = options.http_address;
  http_options.port = static_cast<uint16_t>(options.http_port);
  http_options.num_threads =
      options.http_thread_count > 0 ? options.http_thread_count : std::min(cores, 4);
  http_options.max_body_bytes = options.http_max_input_size;
  http_options.read_timeout = std::chrono::seconds(options.http_read_timeout_secs);
  const KServeRoutes* routes = server->routes_.get();
  auto http = HttpServer::Start(http_options, [routes](HttpRequest request, HttpResponder responder) {
    routes->Handle(std::move(request), std::move(responder));
  });
  if (!http.ok()) return http.status();
  server->http_ = std::move(*http);
  // Tests and scripts read the chosen port from this line.
  INFERA_LOG(INFO) << "HTTP server listening on " << options.http_address << ":"
                   << server->http_->port();
  INFERA_LOG(WARNING) << "gRPC (--grpc-port " << options.grpc_port << ") and metrics (--metrics-port "
                      << options.metrics_port << ") endpoints are not in this build; not serving them";

  server->manager_->LoadAll();
  server->models_loaded_ = true;
  for (const ModelIndexEntry& entry : server->manager_->Index()) {
    if (entry.state != ModelState::kReady) {
      INFERA_LOG(WARNING) << "model '" << entry.name << "' is " << ModelStateName(entry.state)
                          << ": " << entry.reason;
    }
  }
  INFERA_LOG(INFO) << "server is " << (server->IsReady() ? "ready" : "NOT ready (a model failed to load)");
  return server;
}

Server::~Server() { Shutdown(); }

bool Server::IsReady() const {
  return models_loaded_.load() && !draining_.load() && manager_->AllModelsReady();
}

void Server::Shutdown() {
  if (draining_.exchange(true)) return;
  INFERA_LOG(INFO) << "shutting down: finishing in-flight requests (up to "
                   << options_.exit_timeout_secs << " s)";
  if (http_) http_->Shutdown(std::chrono::seconds(options_.exit_timeout_secs));
  if (manager_) manager_->UnloadAll();
  http_.reset();
  INFERA_LOG(INFO) << "shutdown complete";
}

int RunServe(const ServeOptions& options) {
  SetLogLevel(options.log_verbose > 0 ? LogLevel::kVerbose : LogLevel::kInfo);
  SetLogFormat(options.log_format == "json" ? LogFormat::kJson : LogFormat::kText);

  // Block the stop signals in every thread (threads inherit the mask) so that only the
  // sigwait below sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  auto server = Server::Start(options);
  if (!server.ok()) {
    INFERA_LOG(ERROR) << "cannot start: " << server.status().message();
    return 1;
  }
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  INFERA_LOG(INFO) << "received signal " << signal_number;
  // A second signal during the drain exits at once.
  std::thread([signals]() mutable {
    int second = 0;
    sigwait(&signals, &second);
    INFERA_LOG(WARNING) << "second signal " << second << ": exiting without draining";
    std::_Exit(1);
  }).detach();
  (*server)->Shutdown();
  return 0;
}

}  // namespace infera
