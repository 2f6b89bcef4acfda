// Triton's logging extension, once for both transports: gRPC LogSettings returns the
// message, HTTP GET/POST /v2/logging (http/logging_routes.h) converts its JSON body to
// the request and renders the answer as JSON.
//
//   BuildLogSettings  applies the request's settings (none: a read) and answers every
//                     setting in effect:
//     log_file           string, must stay "" (infera logs to stderr)
//     log_info           bool
//     log_warning        bool
//     log_error          bool, cannot be turned off
//     log_verbose_level  uint32 (0: off; any value > 0: verbose)
//     log_format         string "default" (text; "text" accepted) | "json"; read back
//                        as "default" or "json", as Triton names its text format
//
// infera's levels nest (verbose > info > warning > error), so log_info=false means
// "warnings and errors only", log_warning=false "errors only". An unknown key, a value
// of the wrong type (or none) or an unsupported value is InvalidArgument naming the key,
// and then nothing is changed: the update is all or nothing. The caller checks the
// admin guard's logging category first.
//
// Thread-safe (the log settings are process-wide atomics, common/logging.h).
#ifndef INFERA_PROTOCOL_LOG_SETTINGS_H_
#define INFERA_PROTOCOL_LOG_SETTINGS_H_

#include "absl/status/status.h"
#include "grpc_service.pb.h"

namespace infera {

absl::Status BuildLogSettings(const inference::LogSettingsRequest& request,
                              inference::LogSettingsResponse* response);

}  // namespace infera

#endif  // INFERA_PROTOCOL_LOG_SETTINGS_H_
