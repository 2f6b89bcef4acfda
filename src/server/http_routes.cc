#include "server/http_routes.h"

#include <utility>

namespace infera {

RouteTable MakeServerRoutes(ServerHttpHandlers handlers) {
  using P = PathPattern;
  RouteTable routes;
  routes.Add("console", MethodSet::Any(),
             {P::Exact("/"), P::Exact("/console"), P::Prefix("/console/"), P::Exact("/v2/console/stream")},
             std::move(handlers.console));
  routes.Add("trace_settings", MethodSet::Of({"GET", "POST"}),
             {P::Segments("/v2/trace/setting"), P::Segments("/v2/models/*/trace/setting")},
             std::move(handlers.trace_settings));
  // Before the other /v1 routes.
  routes.Add("embeddings", MethodSet::Any(), {P::Exact("/v1/embeddings")}, std::move(handlers.embeddings));
  routes.Add("openai", MethodSet::Any(), {P::Exact("/v1"), P::Prefix("/v1/")}, std::move(handlers.openai));
  if (handlers.metrics) routes.Add("metrics", MethodSet::Any(), {P::Exact("/metrics")}, std::move(handlers.metrics));
  routes.Add("logging", MethodSet::Of({"GET", "POST"}), {P::Exact("/v2/logging")}, std::move(handlers.logging));
  routes.Add("shared_memory", MethodSet::Any(),
             {P::Segments("/v2/systemsharedmemory/**"), P::Segments("/v2/cudasharedmemory/**")},
             std::move(handlers.shared_memory));
  routes.Add("diagnosis", MethodSet::Of({"GET"}),
             {P::Segments("/v2/models/*/diagnosis"), P::Segments("/v2/models/*/versions/*/diagnosis")},
             std::move(handlers.diagnosis));
  routes.Add("repository", MethodSet::Any(), {P::Segments("/v2/repository/**")}, std::move(handlers.repository));
  routes.Add("kserve", MethodSet::Any(), {P::Any()}, std::move(handlers.kserve));
  return routes;
}

}  // namespace infera
