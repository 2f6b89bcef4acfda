// Fuzz target: the logging extension (protocol/log_settings.h BuildLogSettings, and the
// JSON-to-request conversion of http/logging_routes.h).
//
// Input: a POST /v2/logging body, and the same bytes parsed as a serialized
// inference.LogSettingsRequest (the gRPC LogSettings request). Oracle besides ASan/UBSan:
// a refused update (HTTP 4xx, a non-OK Status) changes nothing (all or nothing), and a
// GET still answers 200 afterwards. The settings are put back after each input.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "api/admin_guard.h"
#include "common/logging.h"
#include "grpc_service.pb.h"
#include "http/http_message.h"
#include "http/logging_routes.h"
#include "protocol/log_settings.h"

namespace {

void CheckUnchangedOnRefusal(bool refused, infera::LogLevel level, infera::LogFormat format) {
  if (refused && (infera::GetLogLevel() != level || infera::GetLogFormat() != format)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const infera::AdminGuard* guard = [] {
    infera::AdminGuard::Options options;  // no token, no restriction, --allow-admin-api=logging
    options.opened = {infera::ApiCategory::kLogging};
    auto created = infera::AdminGuard::Create(std::move(options));
    if (!created.ok()) std::abort();
    return new infera::AdminGuard(std::move(*created));  // lives for the process
  }();
  infera::SetLogLevel(infera::LogLevel::kError);  // keep the fuzzer's own output quiet
  infera::SetLogFormat(infera::LogFormat::kText);
  const std::string body(reinterpret_cast<const char*>(data), size);

  infera::LogLevel level = infera::GetLogLevel();
  infera::LogFormat format = infera::GetLogFormat();
  const infera::HttpResponse post =
      infera::HandleLoggingRequest(infera::HttpRequest{"POST", "/v2/logging", {}, body, {}, ""}, *guard);
  if (post.status != 200 && post.status != 400) std::abort();
  CheckUnchangedOnRefusal(post.status != 200, level, format);
  if (infera::HandleLoggingRequest(infera::HttpRequest{"GET", "/v2/logging", {}, "", {}, ""}, *guard).status != 200) {
    std::abort();
  }

  inference::LogSettingsRequest request;
  if (request.ParseFromString(body)) {
    level = infera::GetLogLevel();
    format = infera::GetLogFormat();
    inference::LogSettingsResponse response;
    const absl::Status status = infera::BuildLogSettings(request, &response);
    if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument) std::abort();
    CheckUnchangedOnRefusal(!status.ok(), level, format);
    if (status.ok() && response.settings_size() != 6) std::abort();
  }
  return 0;
}
