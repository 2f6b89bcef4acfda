#include "http/logging_routes.h"

#include "common/json_reader.h"
#include "http/admin_access.h"
#include "http/http_status.h"
#include "protocol/log_settings.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

// Renders the settings in Triton's JSON shape, keys in a fixed order.
HttpResponse Render(const inference::LogSettingsResponse& settings) {
  using Value = inference::LogSettingsResponse::SettingValue;
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  for (const char* key : {"log_file", "log_info", "log_warning", "log_error", "log_verbose_level", "log_format"}) {
    const auto found = settings.settings().find(key);
    if (found == settings.settings().end()) continue;
    w.Key(key);
    const Value& value = found->second;
    switch (value.parameter_choice_case()) {
      case Value::kBoolParam: w.Bool(value.bool_param()); break;
      case Value::kUint32Param: w.Uint(value.uint32_param()); break;
      case Value::kStringParam: w.String(value.string_param().data(), value.string_param().size()); break;
      default: w.Null(); break;
    }
  }
  w.EndObject();
  return HttpResponse{200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
}

HttpResponse Answer(const inference::LogSettingsRequest& request) {
  inference::LogSettingsResponse response;
  if (absl::Status built = BuildLogSettings(request, &response); !built.ok()) return ErrorResponse(built);
  return Render(response);
}

// Converts the JSON body to the request: bool, unsigned 32-bit integer and string values
// map onto the oneof; any other value is left unset, which BuildLogSettings refuses as
// the wrong type for that key.
HttpResponse Update(const std::string& body) {
  rapidjson::Document doc;
  if (absl::Status parsed = ReadJson(body, "logging settings", doc); !parsed.ok()) {
    return ErrorResponse(parsed);
  }
  if (!doc.IsObject()) return ErrorResponse(400, "the logging settings must be a JSON object");
  inference::LogSettingsRequest request;
  for (const auto& member : doc.GetObject()) {
    const std::string key(member.name.GetString(), member.name.GetStringLength());
    auto& value = (*request.mutable_settings())[key];
    if (member.value.IsBool()) {
      value.set_bool_param(member.value.GetBool());
    } else if (member.value.IsUint()) {
      value.set_uint32_param(member.value.GetUint());
    } else if (member.value.IsString()) {
      value.set_string_param(std::string(member.value.GetString(), member.value.GetStringLength()));
    }
  }
  return Answer(request);
}

}  // namespace

HttpResponse HandleLoggingRequest(const HttpRequest& request, const AdminGuard& guard) {
  // Reading the settings is guarded too: the whole route is admin (closed by default).
  if (request.method == "GET" || request.method == "POST") {
    const std::string_view action = request.method == "GET" ? "logging.read" : "logging.update";
    if (absl::Status denied = CheckAdminAccess(guard, ApiCategory::kLogging,
                                               AdminGuard::Operation::kAdmin, request, action, "server");
        !denied.ok()) {
      return AdminDeniedResponse(denied);
    }
  }
  if (request.method == "GET") return Answer(inference::LogSettingsRequest());
  if (request.method == "POST") {
    HttpResponse response = Update(request.body);
    AuditHttpResponse(HttpAdminAudit(guard, ApiCategory::kLogging, request, "logging.update", "server"), response);
    return response;
  }
  HttpResponse response = ErrorResponse(405, "method not allowed; use GET or POST");
  response.headers.emplace_back("Allow", "GET, POST");
  return response;
}

}  // namespace infera
