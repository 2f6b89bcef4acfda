// Triton's logging extension: read and change the log settings at run time.
//
//   GET  /v2/logging  -> {"log_file":"","log_info":true,"log_warning":true,"log_error":true,
//                         "log_verbose_level":0,"log_format":"text"}
//   POST /v2/logging  with any subset of those keys (log_file must stay "": infera logs
//                     to stderr) -> the settings after the change
//
// infera's levels nest (verbose > info > warning > error), so log_info=false means
// "warnings and errors only", log_warning=false "errors only"; log_error cannot be
// turned off. Unknown keys or wrong types are a 400 naming the key. The rules are
// protocol/log_settings.h, shared with gRPC LogSettings: this route converts the JSON body
// to the LogSettingsRequest and renders the answer as JSON.
//
// The route is in the AdminGuard's logging category (api/admin_guard.h), GET and POST
// alike admin operations: a configured restricted-API header (403), with --admin-token
// `Authorization: Bearer <token>` (401), and with neither closed (403) unless the
// operator opened it with --allow-admin-api=logging.
//
// Thread-safe.
#ifndef INFERA_HTTP_LOGGING_ROUTES_H_
#define INFERA_HTTP_LOGGING_ROUTES_H_

#include "api/admin_guard.h"
#include "http/http_message.h"

namespace infera {

// Handles GET/POST /v2/logging after `guard` lets the request through.
HttpResponse HandleLoggingRequest(const HttpRequest& request, const AdminGuard& guard);

}  // namespace infera

#endif  // INFERA_HTTP_LOGGING_ROUTES_H_
