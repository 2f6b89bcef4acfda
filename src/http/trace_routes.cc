#include "http/trace_routes.h"

#include <string>
#include <vector>

#include "common/json_reader.h"
#include "common/json_writer.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "http/admin_access.h"
#include "http/http_status.h"
#include "http/url_path.h"
#include "protocol/model_answers.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

// The model named by the path: "" for /v2/trace/setting, nullopt when it is not a
// trace setting path.
std::optional<std::string_view> ModelSegment(std::string_view path) {
  const std::vector<std::string_view> parts = SplitPath(path);
  if (parts.size() == 3 && parts[0] == "v2" && parts[1] == "trace" && parts[2] == "setting") {
    return std::string_view();
  }
  if (parts.size() == 5 && parts[0] == "v2" && parts[1] == "models" && parts[3] == "trace" &&
      parts[4] == "setting") {
    return parts[2];
  }
  return std::nullopt;
}

// The request body as Triton's gRPC request carries it (null = no values = clear).
absl::Status ParseBody(const std::string& body, inference::TraceSettingRequest* request) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return absl::OkStatus();
  rapidjson::Document doc;
  RETURN_IF_ERROR(ReadJson(body, "trace settings", doc));
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError("trace settings must be a JSON object such as {\"trace_rate\": \"100\"}");
  }
  for (const auto& member : doc.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (request->settings().count(name) != 0) {
      return absl::InvalidArgumentError(StrCat("trace setting '", name, "' is given more than once"));
    }
    auto& values = (*request->mutable_settings())[name];
    const rapidjson::Value& value = member.value;
    if (value.IsNull()) continue;
    if (value.IsString()) {
      values.add_value(value.GetString(), value.GetStringLength());
    } else if (value.IsInt64()) {
      values.add_value(std::to_string(value.GetInt64()));
    } else if (value.IsArray()) {
      for (const auto& element : value.GetArray()) {
        if (!element.IsString()) {
          return absl::InvalidArgumentError(StrCat("trace setting '", name, "' must be an array of strings"));
        }
        values.add_value(element.GetString(), element.GetStringLength());
      }
      if (values.value().empty()) {
        return absl::InvalidArgumentError(StrCat("trace setting '", name, "' is an empty array (use null to clear)"));
      }
    } else {
      return absl::InvalidArgumentError(
          StrCat("trace setting '", name, "' must be a string, an array of strings or null"));
    }
  }
  return absl::OkStatus();
}

HttpResponse Render(const inference::TraceSettingResponse& response) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  // Sorted, for a stable answer (protobuf maps have no order).
  std::vector<std::pair<std::string, const inference::TraceSettingResponse::SettingValue*>> sorted;
  for (const auto& [name, value] : response.settings()) sorted.emplace_back(name, &value);
  std::sort(sorted.begin(), sorted.end());
  w.StartObject();
  for (const auto& [name, value] : sorted) {
    WriteString(w, name);
    if (name == "trace_level") {
      w.StartArray();
      for (const std::string& v : value->value()) WriteString(w, v);
      w.EndArray();
    } else {
      WriteString(w, value->value().empty() ? std::string_view() : std::string_view(value->value(0)));
    }
  }
  w.EndObject();
  return HttpResponse{200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
}

// The settings after `request` (a GET or POST already let through the guard).
HttpResponse AnswerTraceSetting(const HttpRequest& request, bool server_wide, const std::optional<std::string>& model,
                                const ModelManager& manager, TraceSettings& settings) {
  inference::TraceSettingRequest message;
  if (!server_wide) {
    if (!model) return ErrorResponse(400, "malformed percent-escape in model name");
    message.set_model_name(*model);
  }
  if (request.method == "POST") {
    if (absl::Status parsed = ParseBody(request.body, &message); !parsed.ok()) return ErrorResponse(parsed);
  }
  inference::TraceSettingResponse response;
  if (absl::Status built = BuildTraceSetting(manager, settings, message, &response); !built.ok()) {
    return ErrorResponse(built);
  }
  return Render(response);
}

}  // namespace

bool IsTraceSettingPath(std::string_view path) { return ModelSegment(path).has_value(); }

HttpResponse HandleTraceSettingRequest(const HttpRequest& request, const ModelManager& manager,
                                       TraceSettings& settings, const AdminGuard& guard) {
  const std::optional<std::string_view> segment = ModelSegment(request.path());
  if (!segment) return ErrorResponse(404, StrCat("no route for ", request.path()));
  const bool post = request.method == "POST";
  if (!post && request.method != "GET") {
    HttpResponse response = ErrorResponse(405, "method not allowed; use GET or POST");
    response.headers.emplace_back("Allow", "GET, POST");
    return response;
  }
  // The audit target: the model as sent (still percent-encoded when it does not decode).
  const std::optional<std::string> model = segment->empty() ? std::optional<std::string>() : PercentDecode(*segment);
  const std::string_view target = segment->empty() ? std::string_view("server")
                                  : model          ? std::string_view(*model)
                                                   : *segment;
  if (absl::Status denied = CheckAdminAccess(guard, ApiCategory::kTrace,
                                             post ? AdminGuard::Operation::kAdmin : AdminGuard::Operation::kRead,
                                             request, post ? "trace.update" : "trace.read", target);
      !denied.ok()) {
    return AdminDeniedResponse(denied);
  }
  HttpResponse response = AnswerTraceSetting(request, segment->empty(), model, manager, settings);
  if (post) AuditHttpResponse(HttpAdminAudit(guard, ApiCategory::kTrace, request, "trace.update", target), response);
  return response;
}

}  // namespace infera
