#include "common/logging.h"

#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/log_switches.h"
#include "common/string_escape.h"
#include "common/utf8.h"

namespace infera {
namespace logging_internal {
std::atomic<int> g_log_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_log_format{static_cast<int>(LogFormat::kText)};
namespace {

// Bit i set: severity i (LogLevel's value) switched off (log_switches.h).
std::atomic<unsigned> g_disabled_severities{0};
std::atomic<bool> g_iso8601{false};

const char* Basename(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void AppendJsonEscaped(std::string& out, std::string_view raw) {
  // A JSON line must be UTF-8: client bytes that are not become U+FFFD.
  AppendEscaped(out, ReplaceInvalidUtf8(raw), kJsonEscapes);
}
}  // namespace

void AppendControlEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
}

LogMessage::LogMessage(LogLevel level, const char* file, int line)
    : level_(level), file_(file), line_(line) {}

LogMessage::~LogMessage() {
  static constexpr char kLetters[] = {'E', 'W', 'I', 'V'};
  static constexpr const char* kNames[] = {"error", "warning", "info", "verbose"};
  if (!SeverityEnabled(level_)) return;
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm utc;
  gmtime_r(&tv.tv_sec, &utc);
  const int level = static_cast<int>(level_);
  std::string line;
  std::string text = stream_.str();
  if (g_log_format.load(std::memory_order_relaxed) == static_cast<int>(LogFormat::kJson)) {
    char ts[64];
    std::snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<long>(tv.tv_usec));
    line.reserve(text.size() + 96);
    line += "{\"ts\":\"";
    line += ts;
    line += "\",\"level\":\"";
    line += kNames[level];
    line += "\",\"src\":\"";
    line += Basename(file_);
    line += ':';
    line += std::to_string(line_);
    line += "\",\"msg\":\"";
    AppendJsonEscaped(line, text);
    line += "\"}\n";
  } else {
    char prefix[96];
    if (g_iso8601.load(std::memory_order_relaxed)) {  // Triton's ISO8601 format
      std::snprintf(prefix, sizeof(prefix), "%04d-%02d-%02dT%02d:%02d:%02dZ %c %s:%d] ", utc.tm_year + 1900,
                    utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, kLetters[level],
                    Basename(file_), line_);
    } else {
      std::snprintf(prefix, sizeof(prefix), "%c%02d%02d %02d:%02d:%02d.%06ld %s:%d] ",
                    kLetters[level], utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                    utc.tm_sec, static_cast<long>(tv.tv_usec), Basename(file_), line_);
    }
    line.reserve(text.size() + 64);
    line = prefix;
    // Messages carry client strings (request ids, model names, URLs): escaping control
    // characters here, for every log site, means no client can forge or split a line.
    AppendControlEscaped(line, text);
    line += '\n';
  }
  // One write per message keeps lines whole across threads.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}
}  // namespace logging_internal

void SetLogLevel(LogLevel level) {
  logging_internal::g_log_level.store(static_cast<int>(level), std::memory_order_relaxed);
}
LogLevel GetLogLevel() {
  return static_cast<LogLevel>(logging_internal::g_log_level.load(std::memory_order_relaxed));
}
LogFormat GetLogFormat() {
  return static_cast<LogFormat>(logging_internal::g_log_format.load(std::memory_order_relaxed));
}

void SetLogFormat(LogFormat format) {
  logging_internal::g_log_format.store(static_cast<int>(format), std::memory_order_relaxed);
}

void SetSeverityEnabled(LogLevel level, bool enabled) {
  if (level == LogLevel::kVerbose) return;
  const unsigned bit = 1u << static_cast<int>(level);
  if (enabled) {
    logging_internal::g_disabled_severities.fetch_and(~bit, std::memory_order_relaxed);
  } else {
    logging_internal::g_disabled_severities.fetch_or(bit, std::memory_order_relaxed);
  }
}
bool SeverityEnabled(LogLevel level) {
  return (logging_internal::g_disabled_severities.load(std::memory_order_relaxed) &
          (1u << static_cast<int>(level))) == 0;
}
void SetIso8601Timestamps(bool on) { logging_internal::g_iso8601.store(on, std::memory_order_relaxed); }
bool Iso8601Timestamps() { return logging_internal::g_iso8601.load(std::memory_order_relaxed); }

}  // namespace infera
