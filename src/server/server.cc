#include "server/server.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <cstdlib>
#include <thread>

#include "absl/time/time.h"
#include "backend/builtin/builtin_backends.h"
#include "backend/processing/processing_backends.h"
#include "backend/torch/torch_backend.h"
#include "common/allocator_info.h"
#include "common/cpu_budget.h"
#include "common/cpu_placement.h"
#include "common/cpu_topology.h"
#include "common/process_uptime.h"
#include "common/log_switches.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "console/console_readings.h"
#include "http/admin_access.h"
#include "http/api_key_access.h"
#include "http/http_status.h"
#include "http/logging_routes.h"
#include "http/trace_routes.h"
#include "llm/llm_backend.h"
#include "metrics/response_cache_metrics.h"
#include "security/grpc_tls_credentials.h"
#include "openai/openai_errors.h"
#include "repository/config_limits.h"
#include "security/audit_log.h"
#include "server/http_routes.h"
#include "server/version.h"

namespace infera {

using openai::EmbeddingsRoutes;
using openai::OpenAiRoutes;

namespace {

// Repository loads / unloads that may wait for a worker; more are answered 429 /
// RESOURCE_EXHAUSTED (each holds only its request until its turn).
constexpr size_t kMaxQueuedAdminJobs = 64;

// --cpu-placement pinned (docs/cpu_placement.md): logs the topology and the plan,
// installs the placement pytorch instances reserve their CPUs from, and pins the calling
// thread to the I/O CPUs before the server starts any thread: every thread it starts
// (HTTP, gRPC, loaders, metrics) inherits that mask. MachineLimits reads the affinity
// mask once; it is read here first, while the mask is still the whole budget.
absl::Status ApplyCpuPlacement(const ServeOptions& options, int cores) {
  ASSIGN_OR_RETURN(CpuPlacementMode mode, ParseCpuPlacementMode(options.cpu_placement));
  if (mode == CpuPlacementMode::kNone) return absl::OkStatus();
  absl::StatusOr<CpuTopology> topology = ReadProcessCpuTopology();
  if (!topology.ok()) {
    return absl::Status(topology.status().code(),
                        StrCat("--cpu-placement pinned: ", topology.status().message()));
  }
  const int io_threads = options.http_thread_count > 0 ? options.http_thread_count : std::min(cores, 4);
  std::shared_ptr<CpuPlacement> placement = CpuPlacement::Create(*topology, cores, io_threads);
  INFERA_LOG(INFO) << "cpu placement: topology: " << topology->Describe()
                   << (cores < static_cast<int>(topology->cpus.size())
                           ? StrCat("; the cgroup CPU quota allows ", cores, " of them")
                           : std::string());
  INFERA_LOG(INFO) << "cpu placement: plan: " << placement->DescribePlan();
  (void)MachineLimits::Current();
  RETURN_IF_ERROR(PinCurrentThread(placement->io_cpus()));
  SetProcessCpuPlacement(std::move(placement));
  return absl::OkStatus();
}

std::string Seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f s", seconds);
  return buffer;
}

double SecondsOf(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One line: where the time from the process's start to readiness went
// (docs/cold_start.md), e.g. "startup: ready 1.84 s after the process started: 0.90 s
// before Server::Start (dynamic linking, static initialisers), 0.01 s HTTP/gRPC/metrics,
// 0.93 s models (16 versions on 2 loader threads) ...; critical path: ...".
void LogStartupSummary(std::optional<std::chrono::duration<double>> uptime_at_start,
                       std::chrono::steady_clock::duration transports, const ModelManager::StartupLoads& loads,
                       std::chrono::steady_clock::duration since_start) {
  size_t failed = 0;
  for (const auto& v : loads.versions) failed += v.ok ? 0 : 1;
  const double before = uptime_at_start ? uptime_at_start->count() : 0;
  std::string line = StrCat("startup: ready ", Seconds(before + SecondsOf(since_start)), " after the process started",
                            uptime_at_start ? "" : " (process start time unknown: counted from Server::Start)", ": ",
                            Seconds(before), " before Server::Start (dynamic linking, static initialisers), ",
                            Seconds(SecondsOf(transports)), " HTTP/gRPC/metrics, ", Seconds(SecondsOf(loads.wall)),
                            " models (", loads.versions.size(), " versions on ", loads.threads, " loader thread",
                            loads.threads == 1 ? "" : "s", failed ? StrCat(", ", failed, " failed") : "", ")");
  if (const ModelManager::VersionLoadRecord* last = loads.CriticalPath()) {
    line += StrCat("; critical path (the longest load): '", last->model, "' version ", last->version, " from ",
                   RoundedMillis(last->start), " to ", RoundedMillis(last->end), " ms of the models' ",
                   RoundedMillis(loads.wall), " (", last->ok ? "" : "failed; ", last->timings.Describe(), ")");
  }
  INFERA_LOG(INFO) << line;
}

// For the "listening on" lines: whether the port serves TLS, and its client-auth mode.
std::string TlsDescription(const TlsConfig& tls) {
  if (!tls.enabled()) return " (plaintext)";
  return StrCat(" (TLS, client certificates: ", TlsClientAuthName(tls.client_auth), ")");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServeOptions& options) {
  // For the start-up summary: what came before (dynamic linking, static initialisers).
  const std::optional<std::chrono::duration<double>> uptime_at_start = ProcessUptime();
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Server> server(new Server(options));
  server->backends_.Register(CreateTorchBackend(), {std::string(kTorchPlatformName)});
  server->backends_.Register(CreateAddSubBackend());
  server->backends_.Register(CreateAccumulateBackend());
  server->backends_.Register(CreateIdentityBackend());
  server->backends_.Register(CreateImagePreprocessBackend());
  server->backends_.Register(CreateClassifyBackend());
  server->backends_.Register(CreateDetectPostprocessBackend());
  server->backends_.Register(CreatePoolBackend());
  server->backends_.Register(CreateTokenizeBackend());
  server->backends_.Register(llm::CreateLlmBackend());
  server->backends_.Register(CreateFaultInjectionBackend());
  server->backends_.Register(CreateRepeatBackend());

  // The CPUs the process may use (affinity, cgroup quota), not the node's.
  const int cores = AvailableCpus();
  INFERA_LOG(INFO) << "allocator: " << ActiveAllocator().Describe();
  RETURN_IF_ERROR(ApplyCpuPlacement(options, cores));
  ModelManager::Options manager_options;
  manager_options.repository = options.model_repository;
  manager_options.backends = &server->backends_;
  manager_options.num_cores = cores;
  manager_options.max_queue_size = options.max_queue_size;
  const int load_threads = LoadThreads(options, cores);
  manager_options.max_parallel_loads = load_threads;
  manager_options.mode = options.model_control_mode == "poll"       ? ModelControlMode::kPoll
                         : options.model_control_mode == "explicit" ? ModelControlMode::kExplicit
                                                                    : ModelControlMode::kNone;
  manager_options.startup_models = options.load_models;
  manager_options.poll_interval = std::chrono::seconds(options.repository_poll_secs);
  manager_options.drain_timeout = std::chrono::seconds(options.exit_timeout_secs);
  if (options.allow_metrics) {
    TritonMetricsOptions triton_metrics;
    triton_metrics.enabled = options.triton_metrics;
    triton_metrics.latency_counters = options.metrics_counter_latencies;
    triton_metrics.latency_summaries = options.metrics_summary_latencies;
    if (!options.metrics_summary_quantiles.empty()) triton_metrics.summary_quantiles = options.metrics_summary_quantiles;
    server->metrics_ = std::make_unique<ServerMetrics>(triton_metrics);
    manager_options.metrics = server->metrics_.get();
  }
  if (options.response_cache_bytes > 0) {
    server->response_cache_ = std::make_unique<ResponseCache>(ResponseCache::Options{options.response_cache_bytes});
    manager_options.response_cache = server->response_cache_.get();
    INFERA_LOG(INFO) << "response cache: local, " << options.response_cache_bytes << " bytes";
  }
  auto manager = ModelManager::Create(std::move(manager_options));
  if (!manager.ok()) return manager.status();
  server->manager_ = std::move(*manager);

  // Tracing: trace mode triton writes Triton's JSON traces to a file, opentelemetry
  // exports OTLP (ParseServeOptions resolved the mode and checked its destination).
  const bool triton_mode = options.trace_mode != "opentelemetry";
  if (!options.trace_endpoint.empty()) {
    Tracer::Options trace_options;
    trace_options.endpoint = options.trace_endpoint;
    trace_options.service_version = std::string(kInferaVersion);
    auto tracer = Tracer::Create(std::move(trace_options));
    if (!tracer.ok()) return tracer.status();
    server->tracer_ = std::move(*tracer);
  }
  if (triton_mode && !options.trace_file.empty()) {
    auto writer = TraceFileWriter::Create(TraceFileWriter::Options{options.trace_file});
    if (!writer.ok()) return absl::InvalidArgumentError(StrCat("--trace-config triton,file: ", writer.status().message()));
    server->trace_file_ = std::move(*writer);
  }
  const bool exporter = triton_mode ? server->trace_file_ != nullptr : server->tracer_ != nullptr;
  TraceSettings::Initial initial;
  if (options.trace_level.empty()) {
    initial.level = triton_mode ? TraceSettings::Level::kOff : TraceSettings::Level::kTimestamps;
  } else {
    for (const std::string& level : options.trace_level) {
      if (level == "TIMESTAMPS") initial.level |= TraceSettings::Level::kTimestamps;
      if (level == "TENSORS") initial.level |= TraceSettings::Level::kTensors;
    }
  }
  initial.rate = options.trace_rate.value_or(triton_mode ? 1000 : 100);
  initial.count = options.trace_count;
  initial.log_frequency = options.trace_log_frequency;
  TraceSettings::Output output;
  output.mode = triton_mode ? TraceSettings::Mode::kTriton : TraceSettings::Mode::kOpenTelemetry;
  if (triton_mode) output.file = options.trace_file;
  if (initial.level != TraceSettings::Level::kOff && !exporter) {
    INFERA_LOG(WARNING) << "trace level set but no trace file (--trace-config triton,file=PATH): tracing is off";
  }
  server->trace_settings_ = std::make_unique<TraceSettings>(initial, exporter, std::move(output));
  if (exporter) {
    const TraceSettings::Map settings = server->trace_settings_->Get("");
    INFERA_LOG(INFO) << "tracing (mode " << options.trace_mode << ", level " << StrJoin(settings.at("trace_level"), ",")
                     << ") every " << settings.at("trace_rate")[0] << "-th request to "
                     << (triton_mode ? options.trace_file : options.trace_endpoint);
  }

  // The audit log of admin actions (security/audit_log.h), before either port opens.
  if (options.audit_log_file.empty()) {
    InstallAuditLog(AuditLog::ToServerLog());
  } else {
    ASSIGN_OR_RETURN(std::unique_ptr<AuditLog> audit_log, AuditLog::OpenFile(options.audit_log_file));
    InstallAuditLog(std::move(audit_log));
  }

  // API keys (docs/api_keys.md): null unless --api-key, INFERA_API_KEY or --api-key-file.
  {
    ApiKeyStore::Options key_options;
    key_options.api_key = options.api_key;
    if (key_options.api_key.empty()) {
      if (const char* from_env = std::getenv("INFERA_API_KEY")) key_options.api_key = from_env;
    }
    key_options.key_file = options.api_key_file;
    key_options.admin_token = options.admin_token;
    ASSIGN_OR_RETURN(server->api_keys_, ApiKeyStore::Create(std::move(key_options)));
    if (server->api_keys_) {
      INFERA_LOG(INFO) << "API keys: " << server->api_keys_->size()
                       << " configured; every route but health and the metrics port needs one";
    }
  }
  // One guard per transport in front of the admin API (api/admin_guard.h): the same
  // rules, each with its transport's restricted-API groups.
  const bool explicit_mode = server->manager_->mode() == ModelControlMode::kExplicit;
  AdminGuard::Options http_guard_options;
  http_guard_options.admin_token = options.admin_token;
  for (const std::string& group : options.http_restricted_api) {
    ASSIGN_OR_RETURN(ApiRestriction restriction, ParseApiRestriction(group));
    http_guard_options.restrictions.push_back(std::move(restriction));
  }
  http_guard_options.explicit_mode = explicit_mode;
  http_guard_options.opened = options.allow_admin_api;
  if (server->api_keys_) {
    http_guard_options.api_key_admin = ApiKeyAdminCheck(server->api_keys_.get());
    http_guard_options.credential_of = ApiKeyCredentialOf(server->api_keys_.get());
  }
  ASSIGN_OR_RETURN(AdminGuard http_guard, AdminGuard::Create(std::move(http_guard_options)));
  std::vector<ApiRestriction> grpc_restrictions;
  for (const std::string& group : options.grpc_restricted_protocol) {
    ASSIGN_OR_RETURN(ApiRestriction restriction, ParseApiRestriction(group));
    grpc_restrictions.push_back(std::move(restriction));
  }
  {
    // The gRPC server builds its own guard from the same options (GrpcServer::Start);
    // this copy only decides the start-up warnings.
    AdminGuard::Options grpc_guard_options;
    grpc_guard_options.admin_token = options.admin_token;
    grpc_guard_options.restrictions = grpc_restrictions;
    grpc_guard_options.explicit_mode = explicit_mode;
    grpc_guard_options.opened = options.allow_admin_api;
    if (server->api_keys_) grpc_guard_options.api_key_admin = ApiKeyAdminCheck(server->api_keys_.get());
    ASSIGN_OR_RETURN(AdminGuard grpc_guard, AdminGuard::Create(std::move(grpc_guard_options)));
    for (const std::string& warning : OpenAdminApiWarnings(http_guard, grpc_guard)) {
      INFERA_LOG(WARNING) << warning;
    }
  }
  for (const std::string& setting : options.metrics_config_ignored) {
    INFERA_LOG(WARNING) << "--metrics-config " << setting
                        << ": accepted for Triton compatibility and not acted on (infera "
                           "exports its latencies as histograms, nv_inference_* counters and summaries)";
  }

  KServeRoutes::Options route_options;
  route_options.server_name = options.server_id;
  route_options.server_version = std::string(kInferaVersion);
  route_options.trace = InferTrace::Sink{server->trace_settings_.get(), server->tracer_.get(), server->trace_file_.get()};
  route_options.shared_memory = &server->shared_memory_;
  Server* raw = server.get();
  route_options.server_ready = [raw] { return raw->IsReady(); };
  server->routes_ = std::make_unique<KServeRoutes>(*server->manager_, std::move(route_options));
  // Repository load / unload run here, off the transport threads (both HTTP and gRPC).
  server->admin_ = std::make_unique<AdminExecutor>(
      AdminExecutor::Options{load_threads, kMaxQueuedAdminJobs});
  server->repository_routes_ =
      std::make_unique<RepositoryRoutes>(*server->manager_, *server->admin_, http_guard);
  server->openai_routes_ = std::make_unique<OpenAiRoutes>(
      *server->manager_, InferTrace::Sink{server->trace_settings_.get(), server->tracer_.get(), server->trace_file_.get()});
  server->shared_memory_routes_ = std::make_unique<SharedMemoryRoutes>(server->shared_memory_, http_guard);
  server->embeddings_routes_ = std::make_unique<EmbeddingsRoutes>(
      *server->manager_, InferTrace::Sink{server->trace_settings_.get(), server->tracer_.get(), server->trace_file_.get()});
  server->diagnosis_sampler_ =
      std::make_unique<diagnosis::DiagnosisSampler>(*server->manager_, diagnosis::DiagnosisSampler::Options{});
  server->diagnosis_routes_ = std::make_unique<diagnosis::DiagnosisRoutes>(*server->diagnosis_sampler_);
  {
    ConsoleStream::Options console_options;
    const ModelManager* manager = server->manager_.get();
    console_options.read_models = [manager] { return ReadConsoleModels(*manager); };
    const std::string control_mode = options.model_control_mode;
    const bool token_required = !options.admin_token.empty() || server->api_keys_ != nullptr;
    console_options.read_server = [raw, control_mode, token_required] {
      return ConsoleServerReading{std::string(kInferaVersion), raw->IsReady(), control_mode, token_required, 0};
    };
    server->console_stream_ = std::make_unique<ConsoleStream>(std::move(console_options));
    server->console_routes_ = std::make_unique<ConsoleRoutes>(*server->console_stream_);
  }

  HttpServer::Options http_options;
  http_options.address = options.http_address;
  http_options.port = static_cast<uint16_t>(options.http_port);
  http_options.num_threads =
      options.http_thread_count > 0 ? options.http_thread_count : std::min(cores, 4);
  http_options.max_body_bytes = options.http_max_input_size;
  http_options.read_timeout = std::chrono::seconds(options.http_read_timeout_secs);
  http_options.write_timeout = std::chrono::seconds(options.http_write_timeout_secs);
  http_options.max_buffered_response_bytes = options.http_max_buffered_response_bytes;
  http_options.tls = options.tls;
  // Responses per status code are counted by the HTTP server per I/O thread and read at
  // each scrape (MetricsResponse): no shared counter on the request path.
  // Each module's handler; the paths, their precedence and the table's 405s are in
  // server/http_routes.cc.
  ServerHttpHandlers handlers;
  const ConsoleRoutes* console = server->console_routes_.get();
  handlers.console = [console](HttpRequest&& request, HttpResponder responder) {
    console->Handle(std::move(request), std::move(responder));
  };
  auto guard = std::make_shared<const AdminGuard>(std::move(http_guard));
  handlers.trace_settings = [raw, guard](HttpRequest&& request, HttpResponder responder) {
    std::move(responder).Send(HandleTraceSettingRequest(request, *raw->manager_, *raw->trace_settings_, *guard));
  };
  const EmbeddingsRoutes* embeddings = server->embeddings_routes_.get();
  handlers.embeddings = [embeddings](HttpRequest&& request, HttpResponder responder) {
    embeddings->Handle(std::move(request), std::move(responder));
  };
  const OpenAiRoutes* openai = server->openai_routes_.get();
  handlers.openai = [openai](HttpRequest&& request, HttpResponder responder) {
    openai->Handle(std::move(request), std::move(responder));
  };
  if (server->metrics_) {
    handlers.metrics = [raw](HttpRequest&&, HttpResponder responder) {
      std::move(responder).Send(raw->MetricsResponse());
    };
  }
  handlers.logging = [guard](HttpRequest&& request, HttpResponder responder) {
    std::move(responder).Send(HandleLoggingRequest(request, *guard));
  };
  const SharedMemoryRoutes* shared_memory = server->shared_memory_routes_.get();
  handlers.shared_memory = [shared_memory](HttpRequest&& request, HttpResponder responder) {
    std::move(responder).Send(shared_memory->Handle(request));
  };
  const diagnosis::DiagnosisRoutes* diagnosis = server->diagnosis_routes_.get();
  handlers.diagnosis = [diagnosis](HttpRequest&& request, HttpResponder responder) {
    std::move(responder).Send(diagnosis->Handle(request));
  };
  const RepositoryRoutes* repository = server->repository_routes_.get();
  handlers.repository = [repository](HttpRequest&& request, HttpResponder responder) {
    repository->Handle(std::move(request), std::move(responder));
  };
  const KServeRoutes* kserve = server->routes_.get();
  handlers.kserve = [kserve](HttpRequest&& request, HttpResponder responder) {
    kserve->Handle(std::move(request), std::move(responder));
  };
  ApiKeyStore* keys = server->api_keys_.get();
  auto http = HttpServer::Start(http_options, [routes = MakeServerRoutes(std::move(handlers)), keys, guard](
                                                  HttpRequest&& request, HttpResponder responder) {
    // Triton's protocol categories (health, metadata, ...) when restricted: before anything
    // else, as Triton checks them first (http/admin_access.h).
    if (absl::Status denied = CheckHttpProtocolRestriction(*guard, request); !denied.ok()) {
      return std::move(responder).Send(request.path().starts_with("/v1") ? openai::OpenAiErrorResponse(denied)
                                                                         : ErrorResponse(denied));
    }
    // With API keys, one check before the route table (http/api_key_access.h).
    if (keys != nullptr) {
      if (absl::Status denied = CheckHttpApiKey(*keys, request); !denied.ok()) {
        HttpResponse rendered = request.path().starts_with("/v1") ? openai::OpenAiErrorResponse(denied)
                                                                  : ErrorResponse(denied);
        return std::move(responder).Send(ApiKeyDeniedResponse(std::move(rendered), denied));
      }
    }
    routes.Dispatch(std::move(request), std::move(responder));
  });
  if (!http.ok()) return http.status();
  server->http_ = std::move(*http);
  // Tests and scripts read the chosen port from this line.
  INFERA_LOG(INFO) << "HTTP server listening on " << options.http_address << ":"
                   << server->http_->port() << TlsDescription(options.tls);
  if (options.http_health_port >= 0) {
    absl::Status health_started = server->StartHealthServer(kserve);
    if (!health_started.ok()) return health_started;
  }

  GrpcServer::Options grpc_options;
  grpc_options.address = options.grpc_address;
  grpc_options.port = options.grpc_port;
  grpc_options.max_message_bytes = options.grpc_max_message_bytes;
  grpc_options.infer_threads = options.grpc_infer_threads > 0 ? options.grpc_infer_threads : std::max(cores, 1);
  grpc_options.server_name = options.server_id;
  grpc_options.server_version = std::string(kInferaVersion);
  grpc_options.server_ready = [raw] { return raw->IsReady(); };
  grpc_options.admin_token = options.admin_token;
  grpc_options.restricted_protocols = std::move(grpc_restrictions);
  grpc_options.opened_admin_api = options.allow_admin_api;
  grpc_options.admin_executor = server->admin_.get();
  grpc_options.trace_settings = server->trace_settings_.get();
  grpc_options.trace_file = server->trace_file_.get();
  grpc_options.tracer = server->tracer_.get();
  grpc_options.shared_memory = &server->shared_memory_;
  grpc_options.tls = options.grpc_tls;
  grpc_options.api_keys = server->api_keys_.get();
  auto grpc = GrpcServer::Start(grpc_options, *server->manager_);
  if (!grpc.ok()) return grpc.status();
  server->grpc_ = std::move(*grpc);
  INFERA_LOG(INFO) << "gRPC server listening on " << options.grpc_address << ":"
                   << server->grpc_->port();
  if (options.grpc_tls.enabled()) {
    INFERA_LOG(INFO) << "gRPC TLS on (client certificates: " << TlsClientAuthName(options.grpc_tls.client_auth)
                     << "; certificate " << options.grpc_tls.cert_file << ", re-read every "
                     << kGrpcTlsRefreshSeconds << " s)";
  } else {
    INFERA_LOG(INFO) << "gRPC TLS off (plaintext)";
  }
  if (server->metrics_) {
    absl::Status metrics_started = server->StartMetricsServer();
    if (!metrics_started.ok()) return metrics_started;
  }

  const auto transports_up = std::chrono::steady_clock::now();
  const ModelManager::StartupLoads loads = server->manager_->LoadAll();
  server->manager_->StartBackgroundTasks();
  server->models_loaded_ = true;
  for (const ModelIndexEntry& entry : server->manager_->Index()) {
    if (entry.state != ModelState::kReady) {
      INFERA_LOG(WARNING) << "model '" << entry.name << "' is " << ModelStateName(entry.state)
                          << ": " << entry.reason;
    }
  }
  LogStartupSummary(uptime_at_start, transports_up - start, loads, std::chrono::steady_clock::now() - start);
  if (server->manager_->AllModelsReady()) {
    INFERA_LOG(INFO) << "server is ready";
  } else if (server->IsReady()) {
    INFERA_LOG(INFO) << "server is ready (--strict-readiness=false; a model failed to load)";
  } else {
    INFERA_LOG(INFO) << "server is NOT ready (a model failed to load; --strict-readiness=false "
                        "would report ready)";
  }
  server->started_ = true;
  return server;
}

Server::~Server() { Shutdown(); }

absl::Status Server::StartMetricsServer() {
  HttpServer::Options metrics_options;
  metrics_options.address = options_.http_address;
  metrics_options.port = static_cast<uint16_t>(options_.metrics_port);
  metrics_options.num_threads = 1;
  metrics_options.max_body_bytes = 1 << 16;
  metrics_options.tls = options_.tls;
  auto metrics_http = HttpServer::Start(metrics_options, [this](HttpRequest request, HttpResponder responder) {
    if (request.path() != "/metrics") {
      return std::move(responder).Send(ErrorResponse(404, "the metrics port serves only /metrics"));
    }
    std::move(responder).Send(MetricsResponse());
  });
  if (!metrics_http.ok()) return metrics_http.status();
  metrics_http_ = std::move(*metrics_http);
  INFERA_LOG(INFO) << "Metrics server listening on " << options_.http_address << ":"
                   << metrics_http_->port() << TlsDescription(options_.tls);
  return absl::OkStatus();
}

// --http-health-port: plaintext, one I/O thread, the HTTP port's health answers only.
absl::Status Server::StartHealthServer(const KServeRoutes* kserve) {
  HttpServer::Options health_options;
  health_options.address = options_.http_address;
  health_options.port = static_cast<uint16_t>(options_.http_health_port);
  health_options.num_threads = 1;
  health_options.max_body_bytes = 1 << 16;
  health_options.read_timeout = std::chrono::seconds(options_.http_read_timeout_secs);
  auto health_http = HttpServer::Start(health_options, [kserve](HttpRequest&& request, HttpResponder responder) {
    if (request.path() != "/v2/health/live" && request.path() != "/v2/health/ready") {
      return std::move(responder).Send(
          ErrorResponse(404, "the health port serves only /v2/health/live and /v2/health/ready"));
    }
    kserve->Handle(std::move(request), std::move(responder));
  });
  if (!health_http.ok()) return health_http.status();
  health_http_ = std::move(*health_http);
  INFERA_LOG(INFO) << "Health server listening on " << options_.http_address << ":" << health_http_->port()
                   << " (plaintext, /v2/health/live and /v2/health/ready only)";
  return absl::OkStatus();
}

HttpResponse Server::MetricsResponse() const {
  manager_->RefreshMetrics();
  std::vector<ServerMetrics::VersionReadiness> readiness;
  for (const ModelIndexEntry& entry : manager_->Index()) {
    if (entry.version) readiness.push_back({entry.name, *entry.version, entry.state == ModelState::kReady});
  }
  metrics_->SetReadiness(readiness, IsReady());
  std::vector<ServerMetrics::CanaryReading> canaries;
  for (const CanaryStatus& c : manager_->Canaries()) {
    canaries.push_back({c.model, static_cast<int>(c.state), c.weight_percent});
  }
  metrics_->SetCanaries(canaries);
  if (http_) {
    metrics_->SetHttpInflight(http_->InFlight());
    metrics_->SetHttpResponseCounts(http_->ResponseCounts());
    const HttpServer::Stats stats = http_->GetStats();
    metrics_->SetHttpWriteStats(static_cast<double>(stats.buffered_response_bytes), stats.write_timeouts,
                                stats.rejected_over_buffer_limit);
    uint64_t handshake_failures = stats.tls_handshake_failures;
    if (metrics_http_) handshake_failures += metrics_http_->GetStats().tls_handshake_failures;
    metrics_->SetHttpTlsHandshakeFailures(handshake_failures);
  }
  std::string text = metrics_->Serialize();
  if (api_keys_) api_keys_->AppendMetrics(text);
  if (response_cache_) AppendCacheMetrics(text);
  return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", std::move(text), {}};
}

void Server::AppendCacheMetrics(std::string& text) const {
  const ResponseCache::Stats c = response_cache_->GetStats();
  std::vector<ResponseCacheModelReading> models;
  if (auto snapshots = manager_->Snapshots("", std::nullopt); snapshots.ok()) {
    for (const ModelVersionSnapshot& v : *snapshots) {
      if (!v.config->response_cache().enable()) continue;
      const StatisticsSnapshot& s = v.statistics;
      models.push_back({v.name, v.version, s.cache_hit.count, s.cache_hit.ns, s.cache_miss.count, s.cache_miss.ns});
    }
  }
  AppendResponseCacheMetrics({c.entries, c.bytes, c.capacity_bytes, c.lookups, c.hits, c.insertions, c.evictions,
                              c.refused_too_large},
                             models, text);
}

bool Server::IsReady() const {
  if (!models_loaded_.load() || draining_.load()) return false;
  return !options_.strict_readiness || manager_->AllModelsReady();
}

void Server::Shutdown() {
  draining_ = true;
  if (shut_down_.exchange(true)) return;
  // A start that failed tears down what it built without a word: the error that stopped
  // it is the last thing the operator should read, not "shutdown complete".
  const bool started = started_.load();
  if (started) {
    INFERA_LOG(INFO) << "shutting down: finishing in-flight requests (up to "
                     << options_.exit_timeout_secs << " s)";
  }
  // Open console streams would hold the HTTP drain until its timeout: end them first.
  if (console_stream_) console_stream_->Shutdown();
  const std::chrono::seconds grace(options_.exit_timeout_secs);
  const absl::Time drain_deadline = absl::Now() + absl::FromChrono(grace);
  // 1. Intake stops: each transport stops accepting (connections, calls) at once, then
  //    waits — bounded by the exit timeout — until every request it admitted has been
  //    answered, and only then stops its threads. They wait beside steps 2 and 3, which
  //    are what complete those requests, so a response is never posted to a transport
  //    that has already stopped.
  std::thread http_stop([this, grace] {
    if (http_) http_->Shutdown(grace);
  });
  std::thread grpc_stop([this, grace] {
    if (grpc_) grpc_->Shutdown(grace);
  });
  // 2. Model administration: queued loads / unloads are refused (503 / UNAVAILABLE), a
  //    running one finishes and is answered; none can race the unload below.
  if (admin_) admin_->Shutdown();
  // 3. The models drain: queued requests run at once (no batching delay), running ones
  //    finish, every response goes out through the still-running transports. The
  //    Requests that hold a handle (generations, decoupled requests, requests being
  //    looked up) are waited for within the same exit timeout as the transports; what
  //    outlives it is cancelled, and each version's scheduler drain is bounded by it too.
  if (manager_) manager_->UnloadAll(drain_deadline);
  // 4. The transports stop once their last response is written (or the timeout passed).
  http_stop.join();
  grpc_stop.join();
  grpc_.reset();
  if (metrics_http_) metrics_http_->Shutdown(std::chrono::seconds(0));
  metrics_http_.reset();
  if (health_http_) health_http_->Shutdown(std::chrono::seconds(0));
  health_http_.reset();
  http_.reset();
  if (started) INFERA_LOG(INFO) << "shutdown complete";
}

int RunServe(const ServeOptions& options) {
  SetLogLevel(options.log_verbose > 0 ? LogLevel::kVerbose : LogLevel::kInfo);
  SetLogFormat(options.log_format == "json" ? LogFormat::kJson : LogFormat::kText);
  SetIso8601Timestamps(options.log_format == "ISO8601");
  SetSeverityEnabled(LogLevel::kInfo, options.log_info);
  SetSeverityEnabled(LogLevel::kWarning, options.log_warning);
  SetSeverityEnabled(LogLevel::kError, options.log_error);

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
  // A second signal during the drain exits at once. The watcher polls (sigtimedwait) so
  // that it can be joined when the drain completes.
  std::atomic<bool> drained{false};
  std::thread second_signal([&signals, &drained] {
    const timespec poll{0, 100'000'000};
    while (!drained.load()) {
      const int second = sigtimedwait(&signals, nullptr, &poll);
      if (second > 0) {
        INFERA_LOG(WARNING) << "second signal " << second << ": exiting without draining";
        std::_Exit(1);
      }
    }
  });
  // Readiness false now; keep serving while load balancers notice, then drain.
  (*server)->BeginDrain();
  if (options.shutdown_delay_secs > 0) {
    INFERA_LOG(INFO) << "not ready; serving for " << options.shutdown_delay_secs
                     << " s more before draining (--shutdown-delay-secs)";
    std::this_thread::sleep_for(std::chrono::seconds(options.shutdown_delay_secs));
  }
  (*server)->Shutdown();
  drained = true;
  second_signal.join();
  return 0;
}

}  // namespace infera
