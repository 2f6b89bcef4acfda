#include "security/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "common/logging.h"
#include "common/str_cat.h"
#include "common/utf8.h"

namespace infera {
namespace {

std::chrono::system_clock::time_point SystemNow() { return std::chrono::system_clock::now(); }

// `text` as a JSON string literal (quotes included).
void AppendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string valid = ReplaceInvalidUtf8(text);
  out += '"';
  for (char c : valid) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  if (out.size() > 1) out += ',';
  AppendJsonString(out, name);
  out += ':';
  AppendJsonString(out, value);
}

}  // namespace

AuditOutcome AuditOutcome::Of(const absl::Status& status) {
  if (status.ok()) return Ok();
  return {StrCat("error: ", status.message())};
}

std::string FormatRfc3339Millis(std::chrono::system_clock::time_point time) {
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  // Floor division, so times before 1970 still get a non-negative millisecond part.
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  int64_t ms = millis % 1000;
  if (ms < 0) {
    ms += 1000;
    --seconds;
  }
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms));
  return buffer;
}

std::string FormatAuditLine(const AuditEvent& event, std::chrono::system_clock::time_point time) {
  std::string line = "{";
  AppendField(line, "time", FormatRfc3339Millis(time));
  AppendField(line, "audit", "admin");
  AppendField(line, "credential", event.credential);
  AppendField(line, "peer", event.peer.empty() ? std::string_view("unknown") : event.peer);
  AppendField(line, "transport", event.transport);
  AppendField(line, "action", event.action);
  AppendField(line, "target", event.target);
  AppendField(line, "outcome", event.outcome.text);
  line += "}\n";
  return line;
}

AuditLog::AuditLog(int fd, bool owns_fd, WallClock clock)
    : fd_(fd), owns_fd_(owns_fd), clock_(clock ? std::move(clock) : WallClock(SystemNow)) {}

AuditLog::~AuditLog() {
  if (owns_fd_) ::close(fd_);
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::OpenFile(const std::string& path, WallClock clock) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        StrCat("--audit-log-file: cannot open '", path, "' for appending: ", std::strerror(errno)));
  }
  return std::unique_ptr<AuditLog>(new AuditLog(fd, /*owns_fd=*/true, std::move(clock)));
}

std::unique_ptr<AuditLog> AuditLog::ToServerLog(WallClock clock) { return ToFd(STDERR_FILENO, std::move(clock)); }

std::unique_ptr<AuditLog> AuditLog::ToFd(int fd, WallClock clock) {
  return std::unique_ptr<AuditLog>(new AuditLog(fd, /*owns_fd=*/false, std::move(clock)));
}

void AuditLog::Record(const AuditEvent& event) {
  bool report = false;
  int error = 0;
  {
    absl::MutexLock lock(&mutex_);
    // The time is taken under the lock, so the file's lines are in time order.
    const std::string line = FormatAuditLine(event, clock_());
    ssize_t written;
    do {
      written = ::write(fd_, line.data(), line.size());
    } while (written < 0 && errno == EINTR);
    if (written == static_cast<ssize_t>(line.size())) {
      failing_ = false;
      return;
    }
    error = written < 0 ? errno : ENOSPC;
    ++failed_writes_;
    report = !failing_;
    failing_ = true;
  }
  if (report) {
    INFERA_LOG(ERROR) << "audit log: a line could not be written (" << std::strerror(error)
                      << "); further failures are counted until a write succeeds";
  }
}

uint64_t AuditLog::failed_writes() const {
  absl::MutexLock lock(&mutex_);
  return failed_writes_;
}

namespace {

std::atomic<AuditLog*> g_audit_log{nullptr};

// Every log ever installed stays alive until exit: a thread may still be writing to the
// one it loaded when another is installed.
absl::Mutex g_installed_mutex;
std::vector<std::unique_ptr<AuditLog>>& Installed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_installed_mutex) {
  static auto* installed = new std::vector<std::unique_ptr<AuditLog>>();
  return *installed;
}

}  // namespace

void InstallAuditLog(std::unique_ptr<AuditLog> log) {
  absl::MutexLock lock(&g_installed_mutex);
  g_audit_log.store(log.get(), std::memory_order_release);
  Installed().push_back(std::move(log));
}

void RecordAudit(const AuditEvent& event) {
  AuditLog* log = g_audit_log.load(std::memory_order_acquire);
  if (log == nullptr) {
    absl::MutexLock lock(&g_installed_mutex);
    log = g_audit_log.load(std::memory_order_acquire);
    if (log == nullptr) {
      std::unique_ptr<AuditLog> server_log = AuditLog::ToServerLog();
      log = server_log.get();
      g_audit_log.store(log, std::memory_order_release);
      Installed().push_back(std::move(server_log));
    }
  }
  log->Record(event);
}

void RecordAudit(AuditEvent event, const absl::Status& status) {
  event.outcome = AuditOutcome::Of(status);
  RecordAudit(event);
}

}  // namespace infera
