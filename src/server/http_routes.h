// The HTTP routes of `infera serve`: which module answers which path, in one declarative
// table (http/route_table.h). Server::Start builds each module and hands its handler
// here; this file owns only the paths, the methods the table itself enforces, and the
// precedence (the order below; http_routes_test pins it, and that every pattern matches
// exactly the paths its module's own Matches() accepts).
//
// Thread-safety: MakeServerRoutes runs once at start-up; the table is then read-only.
#ifndef INFERA_SERVER_HTTP_ROUTES_H_
#define INFERA_SERVER_HTTP_ROUTES_H_

#include "http/http_server.h"
#include "http/route_table.h"

namespace infera {

struct ServerHttpHandlers {
  HttpHandler console;         // /, /console, /console/*, /v2/console/stream
  HttpHandler trace_settings;  // /v2/trace/setting, /v2/models/{m}/trace/setting (GET, POST)
  HttpHandler embeddings;      // /v1/embeddings
  HttpHandler openai;          // /v1, /v1/*
  HttpHandler metrics;         // /metrics; null when metrics are off (the KServe routes answer 404)
  HttpHandler logging;         // /v2/logging (GET, POST)
  HttpHandler shared_memory;   // /v2/systemsharedmemory/..., /v2/cudasharedmemory/...
  HttpHandler diagnosis;       // /v2/models/{m}[/versions/{v}]/diagnosis (GET)
  HttpHandler repository;      // /v2/repository/...
  HttpHandler kserve;          // every other path (KServe v2 and its 404s)
};

RouteTable MakeServerRoutes(ServerHttpHandlers handlers);

}  // namespace infera

#endif  // INFERA_SERVER_HTTP_ROUTES_H_
