// Fuzz target: the trace extension's settings parsers (http/trace_routes.h,
// tracing/trace_settings.h, protocol/model_answers.h BuildTraceSetting).
//
// Input: a POST body. It goes to POST /v2/trace/setting and to
// POST /v2/models/simple/trace/setting against fresh TraceSettings (an exporter
// configured, so every level is reachable), then a GET of both must still answer 200 —
// a refused update never leaves the settings unreadable. Served by a ModelManager over
// a temporary repository with the built-in add_sub backend. ASan/UBSan, crashes and
// the GET check are the oracle.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "api/admin_guard.h"
#include "backend/backend_registry.h"
#include "backend/builtin/builtin_backends.h"
#include "common/logging.h"
#include "http/http_message.h"
#include "http/trace_routes.h"
#include "manager/model_manager.h"
#include "tracing/trace_settings.h"

namespace {

struct Fixture {
  infera::BackendRegistry backends;
  std::unique_ptr<infera::ModelManager> manager;
  std::optional<infera::AdminGuard> guard;
};

Fixture* Build() {
  auto* fixture = new Fixture();  // lives for the process
  char pattern[] = "/tmp/infera-fuzz-trace-XXXXXX";
  const char* dir = mkdtemp(pattern);
  if (dir == nullptr) std::abort();
  const std::filesystem::path root(dir);
  std::filesystem::create_directories(root / "simple" / "1");
  std::ofstream(root / "simple" / "config.pbtxt") << R"(name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
)";
  fixture->backends.Register(infera::CreateAddSubBackend());
  infera::ModelManager::Options options;
  options.repository = root;
  options.backends = &fixture->backends;
  options.num_cores = 1;
  auto manager = infera::ModelManager::Create(std::move(options));
  if (!manager.ok()) {
    std::fprintf(stderr, "fuzz_trace_settings: %s\n", manager.status().ToString().c_str());
    std::abort();
  }
  fixture->manager = std::move(*manager);
  fixture->manager->LoadAll();
  infera::AdminGuard::Options guard_options;  // --allow-admin-api=trace: updates reach the parser
  guard_options.opened = {infera::ApiCategory::kTrace};
  auto guard = infera::AdminGuard::Create(std::move(guard_options));
  if (!guard.ok()) std::abort();
  fixture->guard.emplace(std::move(*guard));
  return fixture;
}

Fixture* g_fixture = nullptr;

infera::HttpResponse Call(infera::TraceSettings& settings, const char* method, const char* target,
                          std::string body) {
  infera::HttpRequest request;
  request.method = method;
  request.target = target;
  request.body = std::move(body);
  return infera::HandleTraceSettingRequest(request, *g_fixture->manager, settings, *g_fixture->guard);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  infera::SetLogLevel(infera::LogLevel::kError);
  g_fixture = Build();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  infera::TraceSettings settings(infera::TraceSettings::FromFraction(0.01, true), true);
  for (const char* target : {"/v2/trace/setting", "/v2/models/simple/trace/setting"}) {
    (void)Call(settings, "POST", target, body);
    if (Call(settings, "GET", target, "").status != 200) std::abort();
    (void)settings.Sample("simple", std::nullopt);
  }
  return 0;
}
