#include "http/logging_routes.h"

#include "common/json_reader.h"
#include "common/logging.h"
#include "common/str_cat.h"
#include "http/admin_access.h"
#include "http/http_status.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

HttpResponse CurrentSettings() {
  const LogLevel level = GetLogLevel();
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("log_file");
  w.String("");
  w.Key("log_info");
  w.Bool(level >= LogLevel::kInfo);
  w.Key("log_warning");
  w.Bool(level >= LogLevel::kWarning);
  w.Key("log_error");
  w.Bool(true);
  w.Key("log_verbose_level");
  w.Int(level >= LogLevel::kVerbose ? 1 : 0);
  w.Key("log_format");
  w.String(GetLogFormat() == LogFormat::kJson ? "json" : "text");
  w.EndObject();
  return HttpResponse{200, "application/json", std::string(buffer.GetString(), buffer.GetSize()), {}};
}

HttpResponse Update(const std::string& body) {
  rapidjson::Document doc;
  if (absl::Status parsed = ReadJson(body, "logging settings", doc); !parsed.ok()) {
    return ErrorResponse(parsed);
  }
  if (!doc.IsObject()) return ErrorResponse(400, "the logging settings must be a JSON object");
  LogLevel level = GetLogLevel();
  LogFormat format = GetLogFormat();
  for (const auto& member : doc.GetObject()) {
    const std::string key(member.name.GetString(), member.name.GetStringLength());
    const auto& value = member.value;
    if (key == "log_verbose_level") {
      if (!value.IsInt() || value.GetInt() < 0) return ErrorResponse(400, "log_verbose_level must be an integer >= 0");
      if (value.GetInt() > 0) level = LogLevel::kVerbose;
      else if (level == LogLevel::kVerbose) level = LogLevel::kInfo;
    } else if (key == "log_info" || key == "log_warning" || key == "log_error") {
      if (!value.IsBool()) return ErrorResponse(400, StrCat(key, " must be true or false"));
      const LogLevel threshold = key == "log_info" ? LogLevel::kInfo
                                 : key == "log_warning" ? LogLevel::kWarning : LogLevel::kError;
      if (key == "log_error" && !value.GetBool()) return ErrorResponse(400, "log_error cannot be turned off");
      if (value.GetBool() && level < threshold) level = threshold;
      if (!value.GetBool() && level >= threshold) level = static_cast<LogLevel>(static_cast<int>(threshold) - 1);
    } else if (key == "log_format") {
      const std::string text = value.IsString() ? value.GetString() : "";
      if (text == "json") format = LogFormat::kJson;
      else if (text == "text" || text == "default") format = LogFormat::kText;
      else return ErrorResponse(400, "log_format must be 'text' or 'json'");
    } else if (key == "log_file") {
      if (!value.IsString() || value.GetStringLength() != 0) {
        return ErrorResponse(400, "log_file is not supported: infera logs to stderr");
      }
    } else {
      return ErrorResponse(400, StrCat("unknown logging setting '", key, "'"));
    }
  }
  SetLogLevel(level);
  SetLogFormat(format);
  INFERA_LOG(INFO) << "log settings changed over HTTP";
  return CurrentSettings();
}

}  // namespace

HttpResponse HandleLoggingRequest(const HttpRequest& request, const AdminGuard& guard) {
  // Reading the settings is guarded too: with --admin-token the whole route is admin.
  if (request.method == "GET" || request.method == "POST") {
    if (absl::Status denied = CheckAdminAccess(guard, ApiCategory::kLogging,
                                               AdminGuard::Operation::kAdmin, request);
        !denied.ok()) {
      return AdminDeniedResponse(denied);
    }
  }
  if (request.method == "GET") return CurrentSettings();
  if (request.method == "POST") return Update(request.body);
  HttpResponse response = ErrorResponse(405, "method not allowed; use GET or POST");
  response.headers.emplace_back("Allow", "GET, POST");
  return response;
}

}  // namespace infera
