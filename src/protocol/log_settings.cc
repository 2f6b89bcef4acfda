#include "protocol/log_settings.h"

#include <string>

#include "common/logging.h"
#include "common/str_cat.h"

namespace infera {
namespace {

using Value = inference::LogSettingsRequest::SettingValue;

// Applies one setting to `level` / `format` (not yet to the process).
absl::Status ApplyOne(const std::string& key, const Value& value, LogLevel& level, LogFormat& format) {
  if (key == "log_verbose_level") {
    if (value.parameter_choice_case() != Value::kUint32Param) {
      return absl::InvalidArgumentError("log_verbose_level must be an integer >= 0");
    }
    if (value.uint32_param() > 0) {
      level = LogLevel::kVerbose;
    } else if (level == LogLevel::kVerbose) {
      level = LogLevel::kInfo;
    }
    return absl::OkStatus();
  }
  if (key == "log_info" || key == "log_warning" || key == "log_error") {
    if (value.parameter_choice_case() != Value::kBoolParam) {
      return absl::InvalidArgumentError(StrCat(key, " must be true or false"));
    }
    const bool on = value.bool_param();
    if (key == "log_error" && !on) return absl::InvalidArgumentError("log_error cannot be turned off");
    const LogLevel threshold = key == "log_info"      ? LogLevel::kInfo
                               : key == "log_warning" ? LogLevel::kWarning
                                                      : LogLevel::kError;
    if (on && level < threshold) level = threshold;
    if (!on && level >= threshold) level = static_cast<LogLevel>(static_cast<int>(threshold) - 1);
    return absl::OkStatus();
  }
  if (key == "log_format") {
    const std::string text =
        value.parameter_choice_case() == Value::kStringParam ? value.string_param() : std::string();
    if (text == "json") {
      format = LogFormat::kJson;
    } else if (text == "text" || text == "default") {
      format = LogFormat::kText;
    } else {
      return absl::InvalidArgumentError("log_format must be 'default' (or 'text') or 'json'");
    }
    return absl::OkStatus();
  }
  if (key == "log_file") {
    if (value.parameter_choice_case() != Value::kStringParam || !value.string_param().empty()) {
      return absl::InvalidArgumentError(
          "log file location can not be updated through network protocol (infera logs to stderr; "
          "log_file must stay \"\")");
    }
    return absl::OkStatus();
  }
  // An oversized key is cut in the message: gRPC carries it in a size-limited trailer.
  constexpr size_t kShownKey = 64;
  return absl::InvalidArgumentError(StrCat("unknown logging setting '", key.substr(0, kShownKey),
                                           key.size() > kShownKey ? "...'" : "'"));
}

void Current(inference::LogSettingsResponse* response) {
  const LogLevel level = GetLogLevel();
  auto& settings = *response->mutable_settings();
  settings.clear();
  settings["log_file"].set_string_param("");
  settings["log_info"].set_bool_param(level >= LogLevel::kInfo);
  settings["log_warning"].set_bool_param(level >= LogLevel::kWarning);
  settings["log_error"].set_bool_param(true);
  settings["log_verbose_level"].set_uint32_param(level >= LogLevel::kVerbose ? 1 : 0);
  settings["log_format"].set_string_param(GetLogFormat() == LogFormat::kJson ? "json" : "default");
}

}  // namespace

absl::Status BuildLogSettings(const inference::LogSettingsRequest& request,
                              inference::LogSettingsResponse* response) {
  if (!request.settings().empty()) {
    LogLevel level = GetLogLevel();
    LogFormat format = GetLogFormat();
    for (const auto& [key, value] : request.settings()) {
      if (absl::Status applied = ApplyOne(key, value, level, format); !applied.ok()) return applied;
    }
    SetLogLevel(level);
    SetLogFormat(format);
    INFERA_LOG(INFO) << "log settings changed";
  }
  Current(response);
  return absl::OkStatus();
}

}  // namespace infera
