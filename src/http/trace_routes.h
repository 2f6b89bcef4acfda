// Triton's trace extension over HTTP: read and change the trace settings at run time.
//
//   GET  /v2/trace/setting                  -> the global settings
//   POST /v2/trace/setting                  {"trace_rate": "10", ...} -> the settings after
//   GET  /v2/models/{m}/trace/setting       -> the settings model m traces with
//   POST /v2/models/{m}/trace/setting       {"trace_level": null, ...} -> the same, after
//
// Answers are Triton's shape: {"trace_level": ["TIMESTAMPS"], "trace_rate": "1000",
// "trace_count": "-1", "log_frequency": "0", "trace_file": "", "trace_mode":
// "opentelemetry"} — trace_level an array, every other value a string. A request value
// is a string, an array of strings, an integer (taken as its decimal string) or null
// (clears a model's setting). What the settings mean and which values are refused:
// tracing/trace_settings.h; the answer is built by protocol/model_answers.h
// (BuildTraceSetting), the one source gRPC TraceSetting answers from too.
//
// The routes are in the AdminGuard's trace category (api/admin_guard.h): a configured
// restricted-API header for GET and POST; POST is an admin operation: with --admin-token
// it needs the bearer token, with neither token nor restriction it is closed (403) unless
// the operator opened it with --allow-admin-api=trace. GET stays open.
// Errors: 400 naming the setting, 404 for an unknown model, 405 for other methods.
//
// Thread-safe.
#ifndef INFERA_HTTP_TRACE_ROUTES_H_
#define INFERA_HTTP_TRACE_ROUTES_H_

#include <string_view>

#include "api/admin_guard.h"
#include "http/http_message.h"
#include "manager/model_manager.h"
#include "tracing/trace_settings.h"

namespace infera {

// True for /v2/trace/setting and /v2/models/{m}/trace/setting.
bool IsTraceSettingPath(std::string_view path);

HttpResponse HandleTraceSettingRequest(const HttpRequest& request, const ModelManager& manager,
                                       TraceSettings& settings, const AdminGuard& guard);

}  // namespace infera

#endif  // INFERA_HTTP_TRACE_ROUTES_H_
