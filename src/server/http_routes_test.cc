#include "server/http_routes.h"

#include <string>
#include <string_view>
#include <vector>

#include "console/console_routes.h"
#include "diagnosis/diagnosis_routes.h"
#include "gtest/gtest.h"
#include "openai/openai_routes.h"
#include "http/repository_routes.h"
#include "http/shared_memory_routes.h"
#include "http/trace_routes.h"

namespace infera {
namespace {

// The dispatch Server::Start had before the route table (an if-chain over each module's
// own Matches), kept here as the reference the table must reproduce path for path.
std::string_view ChainRoute(std::string_view path, bool metrics) {
  if (ConsoleRoutes::Matches(path)) return "console";
  if (IsTraceSettingPath(path)) return "trace_settings";
  if (path == "/v1/embeddings") return "embeddings";
  if (openai::OpenAiRoutes::Matches(path)) return "openai";
  if (path == "/metrics" && metrics) return "metrics";
  if (path == "/v2/logging") return "logging";
  if (SharedMemoryRoutes::Matches(path)) return "shared_memory";
  if (diagnosis::DiagnosisRoutes::Matches(path)) return "diagnosis";
  if (RepositoryRoutes::Matches(path)) return "repository";
  return "kserve";
}

RouteTable Table(bool metrics) {
  const HttpHandler ignore = [](HttpRequest&&, HttpResponder) {};
  ServerHttpHandlers handlers{ignore, ignore, ignore, ignore, metrics ? ignore : nullptr,
                              ignore, ignore, ignore, ignore, ignore};
  return MakeServerRoutes(std::move(handlers));
}

// Every path of up to four segments over the words the routes look at (and others),
// each also with a doubled slash and a trailing slash, plus hand-picked ones.
std::vector<std::string> Paths() {
  const std::vector<std::string> words = {"v2",         "v1",      "models",  "m",        "versions",
                                          "1",          "trace",   "setting", "diagnosis", "repository",
                                          "logging",    "systemsharedmemory", "cudasharedmemory", "metrics",
                                          "embeddings", "console"};
  std::vector<std::string> paths = {"", "/", "//", "/console", "/console/", "/console/app.js", "/consolex",
                                    "/v1", "/v1/", "/v1x", "/v1//embeddings", "/v1/embeddings/", "/metrics/",
                                    "/v2/logging/", "//v2/logging", "*", "http://h/v2/models/m/infer",
                                    "/v2/models/m/versions/1/diagnosis", "/v2/models/m/versions/x/y/diagnosis",
                                    "/v2/models/m/trace/setting/x", "/v2/console/stream", "/v2/console/stream/"};
  std::vector<std::string> level = {""};
  for (int depth = 0; depth < 4; ++depth) {
    std::vector<std::string> next;
    for (const std::string& prefix : level) {
      for (const std::string& word : words) next.push_back(prefix + "/" + word);
    }
    for (const std::string& path : next) {
      paths.push_back(path);
      paths.push_back("/" + path);
      paths.push_back(path + "/");
    }
    level = std::move(next);
  }
  // Five and six segments for the versioned routes.
  for (const char* tail : {"/diagnosis", "/trace/setting", "/infer"}) {
    paths.push_back(std::string("/v2/models/m/versions/1") + tail);
    paths.push_back(std::string("/v2/models/diagnosis/versions/diagnosis") + tail);
  }
  return paths;
}

TEST(ServerHttpRoutesTest, PrecedenceAndPathsAreThoseOfTheFormerIfChain) {
  for (bool metrics : {true, false}) {
    const RouteTable table = Table(metrics);
    size_t checked = 0;
    for (const std::string& path : Paths()) {
      ASSERT_EQ(table.RouteFor(path), ChainRoute(path, metrics)) << "path '" << path << "', metrics " << metrics;
      ++checked;
    }
    EXPECT_GT(checked, 200000u);
  }
}

TEST(ServerHttpRoutesTest, EachModuleIsReachedAtItsPaths) {
  const RouteTable table = Table(/*metrics=*/true);
  EXPECT_EQ(table.RouteFor("/"), "console");
  EXPECT_EQ(table.RouteFor("/console/index.html"), "console");
  EXPECT_EQ(table.RouteFor("/v2/console/stream"), "console");
  EXPECT_EQ(table.RouteFor("/v2/trace/setting"), "trace_settings");
  EXPECT_EQ(table.RouteFor("/v2/models/m/trace/setting"), "trace_settings");
  EXPECT_EQ(table.RouteFor("/v1/embeddings"), "embeddings");
  EXPECT_EQ(table.RouteFor("/v1/chat/completions"), "openai");
  EXPECT_EQ(table.RouteFor("/metrics"), "metrics");
  EXPECT_EQ(table.RouteFor("/v2/logging"), "logging");
  EXPECT_EQ(table.RouteFor("/v2/systemsharedmemory/status"), "shared_memory");
  EXPECT_EQ(table.RouteFor("/v2/cudasharedmemory/region/r/register"), "shared_memory");
  EXPECT_EQ(table.RouteFor("/v2/models/m/diagnosis"), "diagnosis");
  EXPECT_EQ(table.RouteFor("/v2/repository/index"), "repository");
  EXPECT_EQ(table.RouteFor("/v2/models/m/infer"), "kserve");
  EXPECT_EQ(table.RouteFor("/v2/health/ready"), "kserve");
  EXPECT_EQ(Table(/*metrics=*/false).RouteFor("/metrics"), "kserve");
}

}  // namespace
}  // namespace infera
