#include "protocol/log_settings.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "common/log_switches.h"
#include "common/logging.h"
#include "common/str_cat.h"

namespace infera {
namespace {

using Value = inference::LogSettingsRequest::SettingValue;

// The settings a request asks for, applied to the process only when every one is valid.
struct Pending {
  LogLevel level;
  bool error, warning, info;  // Triton's independent switches (log_switches.h)
  LogFormat format;
  bool iso8601;
  uint32_t verbose_level;
};

// The log_verbose_level last set through the extension, read back as set (infera's
// logger has one verbose level: any value > 0 turns it on).
std::atomic<uint32_t> g_verbose_level{0};

Pending CurrentSettings() {
  const LogLevel level = GetLogLevel();
  const uint32_t verbose = level >= LogLevel::kVerbose ? std::max<uint32_t>(1, g_verbose_level.load()) : 0;
  return {level,      SeverityEnabled(LogLevel::kError), SeverityEnabled(LogLevel::kWarning),
          SeverityEnabled(LogLevel::kInfo), GetLogFormat(), Iso8601Timestamps(), verbose};
}

absl::Status ApplyOne(const std::string& key, const Value& value, Pending& p) {
  if (key == "log_verbose_level") {
    if (value.parameter_choice_case() != Value::kUint32Param) {
      return absl::InvalidArgumentError("log_verbose_level must be an integer >= 0");
    }
    p.verbose_level = value.uint32_param();
    if (p.verbose_level > 0) {
      p.level = LogLevel::kVerbose;
    } else if (p.level == LogLevel::kVerbose) {
      p.level = LogLevel::kInfo;
    }
    return absl::OkStatus();
  }
  if (key == "log_info" || key == "log_warning" || key == "log_error") {
    if (value.parameter_choice_case() != Value::kBoolParam) {
      return absl::InvalidArgumentError(StrCat(key, " must be true or false"));
    }
    bool& on = key == "log_info" ? p.info : key == "log_warning" ? p.warning : p.error;
    on = value.bool_param();
    // The threshold must let the severity through for its switch to mean anything.
    if (on && key == "log_info" && p.level < LogLevel::kInfo) p.level = LogLevel::kInfo;
    return absl::OkStatus();
  }
  if (key == "log_format") {
    const std::string text =
        value.parameter_choice_case() == Value::kStringParam ? value.string_param() : std::string();
    if (text == "json") {
      p.format = LogFormat::kJson;
      p.iso8601 = false;
    } else if (text == "text" || text == "default" || text == "ISO8601") {
      p.format = LogFormat::kText;
      p.iso8601 = text == "ISO8601";
    } else {
      return absl::InvalidArgumentError("log_format must be 'default' (or 'text'), 'ISO8601' or 'json'");
    }
    return absl::OkStatus();
  }
  if (key == "log_file") {
    if (value.parameter_choice_case() != Value::kStringParam || !value.string_param().empty()) {
      return absl::InvalidArgumentError(
          "log file location can not be updated through network protocol: updating log file was "
          "deprecated and no longer supported (infera logs to stderr; log_file must stay \"\")");
    }
    return absl::OkStatus();
  }
  // An oversized key is cut in the message: gRPC carries it in a size-limited trailer.
  constexpr size_t kShownKey = 64;
  return absl::InvalidArgumentError(StrCat("unknown logging setting '", key.substr(0, kShownKey),
                                           key.size() > kShownKey ? "...'" : "'"));
}

void Current(inference::LogSettingsResponse* response) {
  const Pending now = CurrentSettings();
  auto& settings = *response->mutable_settings();
  settings.clear();
  settings["log_file"].set_string_param("");
  settings["log_info"].set_bool_param(now.level >= LogLevel::kInfo && now.info);
  settings["log_warning"].set_bool_param(now.level >= LogLevel::kWarning && now.warning);
  settings["log_error"].set_bool_param(now.error);
  settings["log_verbose_level"].set_uint32_param(now.verbose_level);
  settings["log_format"].set_string_param(now.format == LogFormat::kJson ? "json"
                                          : now.iso8601                  ? "ISO8601"
                                                                         : "default");
}

}  // namespace

absl::Status BuildLogSettings(const inference::LogSettingsRequest& request,
                              inference::LogSettingsResponse* response) {
  if (!request.settings().empty()) {
    Pending p = CurrentSettings();
    for (const auto& [key, value] : request.settings()) {
      if (absl::Status applied = ApplyOne(key, value, p); !applied.ok()) return applied;
    }
    SetLogLevel(p.level);
    SetSeverityEnabled(LogLevel::kError, p.error);
    SetSeverityEnabled(LogLevel::kWarning, p.warning);
    SetSeverityEnabled(LogLevel::kInfo, p.info);
    SetLogFormat(p.format);
    SetIso8601Timestamps(p.iso8601);
    g_verbose_level.store(p.verbose_level);
    INFERA_LOG(INFO) << "log settings changed";
  }
  Current(response);
  return absl::OkStatus();
}

}  // namespace infera
