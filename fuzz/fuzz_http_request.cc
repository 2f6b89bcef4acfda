// Fuzz target: the HTTP request path, in process (no socket).
//
// Input: raw HTTP/1.1 request bytes (request line, headers, body). They go through the
// same Boost.Beast parser settings as HttpServer's sessions (header and body limits) and
// the same conversion into an HttpRequest (lower-cased header names), then to the routes
// the server dispatches to: KServe v2 (health, metadata, infer with JSON or binary
// tensors, Triton's config/stats extensions), the repository API and /v2/logging.
// Served by a ModelManager over a temporary repository with the built-in backends (the
// demo repository's `simple` add_sub and `identity_fp32` models). Responses are dropped
// (a responder without a session); ASan/UBSan and crashes are the oracle.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "api/admin_guard.h"
#include "backend/backend_registry.h"
#include "backend/builtin/builtin_backends.h"
#include "common/logging.h"
#include "http/http_framing.h"
#include "http/http_message.h"
#include "http/http_server.h"
#include "http/kserve_routes.h"
#include "http/logging_routes.h"
#include "http/repository_routes.h"
#include "manager/admin_executor.h"
#include "manager/model_manager.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;

constexpr size_t kMaxHeaderBytes = 16 << 10;  // HttpServer::Options defaults
constexpr size_t kMaxBodyBytes = 1 << 20;     // smaller than the server's: keeps runs fast

void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// One server's worth of routes, built once per process.
struct Routes {
  infera::BackendRegistry backends;
  std::unique_ptr<infera::ModelManager> manager;
  std::unique_ptr<infera::KServeRoutes> kserve;
  std::unique_ptr<infera::AdminExecutor> admin;
  // No token, no restriction, --allow-admin-api=logging (so /v2/logging bodies reach the
  // parser); otherwise the default server.
  std::optional<infera::AdminGuard> guard;
  std::unique_ptr<infera::RepositoryRoutes> repository;
};

std::filesystem::path MakeRepository() {
  char pattern[] = "/tmp/infera-fuzz-http-XXXXXX";
  const char* dir = mkdtemp(pattern);
  if (dir == nullptr) std::abort();
  const std::filesystem::path root(dir);
  std::filesystem::create_directories(root / "simple" / "1");
  WriteFile(root / "simple" / "config.pbtxt", R"(name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
)");
  std::filesystem::create_directories(root / "identity_fp32" / "1");
  WriteFile(root / "identity_fp32" / "config.pbtxt", R"(name: "identity_fp32"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
)");
  std::filesystem::create_directories(root / "bytes_identity" / "1");
  WriteFile(root / "bytes_identity" / "config.pbtxt", R"(name: "bytes_identity"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
)");
  return root;
}

Routes* BuildRoutes() {
  auto* routes = new Routes();  // lives for the process
  routes->backends.Register(infera::CreateAddSubBackend());
  routes->backends.Register(infera::CreateIdentityBackend());
  infera::ModelManager::Options options;
  options.repository = MakeRepository();
  options.backends = &routes->backends;
  options.num_cores = 1;
  auto manager = infera::ModelManager::Create(std::move(options));
  if (!manager.ok()) {
    std::fprintf(stderr, "fuzz_http_request: %s\n", manager.status().ToString().c_str());
    std::abort();
  }
  routes->manager = std::move(*manager);
  routes->manager->LoadAll();
  infera::KServeRoutes::Options route_options;
  route_options.server_version = "fuzz";
  route_options.server_ready = [] { return true; };
  routes->kserve = std::make_unique<infera::KServeRoutes>(*routes->manager, route_options);
  routes->admin = std::make_unique<infera::AdminExecutor>(infera::AdminExecutor::Options{});
  infera::AdminGuard::Options guard_options;
  guard_options.opened = {infera::ApiCategory::kLogging};
  auto guard = infera::AdminGuard::Create(std::move(guard_options));
  if (!guard.ok()) std::abort();
  routes->guard.emplace(std::move(*guard));
  routes->repository = std::make_unique<infera::RepositoryRoutes>(*routes->manager, *routes->admin, *routes->guard);
  return routes;
}

Routes* g_routes = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  infera::SetLogLevel(infera::LogLevel::kError);
  g_routes = BuildRoutes();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(kMaxHeaderBytes);
  parser.body_limit(kMaxBodyBytes);
  parser.eager(true);
  beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec == http::error::need_more) parser.put_eof(ec);
  if (ec || !parser.is_done()) return 0;  // HttpServer answers 4xx without a route

  // HttpServer's framing check (http_framing.h): an ambiguous body length is a 400 and
  // the connection closes before any route sees the request.
  infera::HttpFraming framing;
  for (const auto& field : parser.get()) {
    const std::string_view value(field.value().data(), field.value().size());
    if (field.name() == http::field::content_length) framing.AddContentLength(value);
    if (field.name() == http::field::transfer_encoding) framing.AddTransferEncoding(value);
  }
  if (framing.Problem()) return 0;

  // What HttpServer's session hands to the handler (http_server.cc, Dispatch).
  http::request<http::string_body> message = parser.release();
  infera::HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  request.body = std::move(message.body());
  request.received_time = std::chrono::steady_clock::now();

  // The server's dispatch (server.cc) minus OpenAI (fuzz_openai_protocol) and /metrics.
  infera::HttpResponder responder(nullptr, std::make_shared<infera::CancellationToken>());
  if (request.path() == "/v2/logging") {
    (void)infera::HandleLoggingRequest(request, *g_routes->guard);
    // Keep the process quiet and each run independent of the last.
    infera::SetLogLevel(infera::LogLevel::kError);
    infera::SetLogFormat(infera::LogFormat::kText);
    return 0;
  }
  if (infera::RepositoryRoutes::Matches(request.path())) {
    g_routes->repository->Handle(std::move(request), std::move(responder));
    return 0;
  }
  g_routes->kserve->Handle(std::move(request), std::move(responder));
  return 0;
}
