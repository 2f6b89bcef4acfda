// Leveled logging to stderr.
//
// Thread-safe: each message is formatted into its own buffer and written with one
// write(2), so lines from different threads never interleave. Messages below the
// current level cost one relaxed atomic load.
//
// Usage:
//   INFERA_LOG(INFO) << "loaded model " << name << " version " << version;
//   INFERA_LOG(VERBOSE) << "request " << id;        // shown with --log-verbose=1
//
// Levels: ERROR, WARNING, INFO, VERBOSE. The format is either a human line
// (`I1130 05:29:59.123 model_manager.cc:42] text`) or one JSON object per line
// (`--log-format json`). Either way one message is exactly one line: the text format
// writes control characters in the message as `\n`, `\r`, `\t` or `\xNN` (the JSON
// format escapes them as JSON does), so client strings logged as part of a message (a
// request id with a newline, say) cannot forge a log line. Log sites need no escaping.
#ifndef INFERA_COMMON_LOGGING_H_
#define INFERA_COMMON_LOGGING_H_

#include <atomic>
#include <sstream>
#include <string>
#include <string_view>

namespace infera {

enum class LogLevel : int { kError = 0, kWarning = 1, kInfo = 2, kVerbose = 3 };
enum class LogFormat : int { kText = 0, kJson = 1 };

// Process-wide settings; safe to change at run time.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
void SetLogFormat(LogFormat format);
LogFormat GetLogFormat();
inline bool LogEnabled(LogLevel level);

namespace logging_internal {
extern std::atomic<int> g_log_level;

// Collects one message and emits it when destroyed.
class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
};

// Appends `text` to `out` with control characters (< 0x20 and 0x7f) written as `\n`,
// `\r`, `\t` or `\xNN`; other bytes unchanged. Used for the text format.
void AppendControlEscaped(std::string& out, std::string_view text);

// Lets the macro below swallow a stream expression in a ternary.
struct Voidify {
  void operator&(std::ostream&) {}
};
}  // namespace logging_internal

inline bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) <=
         logging_internal::g_log_level.load(std::memory_order_relaxed);
}

}  // namespace infera

#define INFERA_LOG_LEVEL_ERROR ::infera::LogLevel::kError
#define INFERA_LOG_LEVEL_WARNING ::infera::LogLevel::kWarning
#define INFERA_LOG_LEVEL_INFO ::infera::LogLevel::kInfo
#define INFERA_LOG_LEVEL_VERBOSE ::infera::LogLevel::kVerbose

#define INFERA_LOG(severity)                                                    \
  !::infera::LogEnabled(INFERA_LOG_LEVEL_##severity)                            \
      ? (void)0                                                                 \
      : ::infera::logging_internal::Voidify() &                                 \
            ::infera::logging_internal::LogMessage(INFERA_LOG_LEVEL_##severity, \
                                                   __FILE__, __LINE__)          \
                .stream()

#endif  // INFERA_COMMON_LOGGING_H_
