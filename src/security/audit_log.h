// The audit log (docs/security.md, "Audit log"): one JSON line per admin action and per
// refused admin access, written to --audit-log-file or, without it, to the server log.
//
//   RecordAudit({.credential = "admin-token", .peer = "10.0.0.7:51234", .transport = "http",
//                .action = "model.load", .target = name, .outcome = AuditOutcome::Of(status)});
//
// The transports build the events (http/admin_access.h, grpc/inference_service.cc); this
// module only formats and writes them. Never put a secret in an event: `credential` names
// which credential was presented ("admin-token", "restricted:<category>", "none", later
// API-key ids), not its value.
#ifndef INFERA_SECURITY_AUDIT_LOG_H_
#define INFERA_SECURITY_AUDIT_LOG_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace infera {

// `ok`, `denied` or `error: <message>`.
struct AuditOutcome {
  static AuditOutcome Ok() { return {"ok"}; }
  static AuditOutcome Denied() { return {"denied"}; }
  // Ok() for an OK status, else `error: <status message>`.
  static AuditOutcome Of(const absl::Status& status);
  std::string text;
};

struct AuditEvent {
  std::string credential = "none";
  std::string peer;       // "ip:port"; empty is written as "unknown"
  std::string transport;  // "http" or "grpc"
  std::string action;     // "model.load", ...
  std::string target;     // model name, region name, "server", "*" (every region)
  AuditOutcome outcome = AuditOutcome::Ok();
};

using WallClock = std::function<std::chrono::system_clock::time_point()>;

// "2026-12-06T10:57:05.123Z" (UTC, RFC 3339, milliseconds).
std::string FormatRfc3339Millis(std::chrono::system_clock::time_point time);

// The event as one JSON object ending in '\n', every string escaped (control characters
// as \u00XX, bytes that are not UTF-8 as U+FFFD): no field value can end the line or add a
// field. Tagged "audit":"admin" so it stands out in the server log.
std::string FormatAuditLine(const AuditEvent& event, std::chrono::system_clock::time_point time);

// Where audit lines go. Thread-safe: each line is formatted in its own buffer and written
// with one write(2) under mutex_, so lines never interleave; the file is opened O_APPEND,
// so they stay whole against other writers of the same file too.
class AuditLog {
 public:
  // Appends to `path` (created 0600; an existing file keeps its mode). An error names
  // the path when it cannot be opened.
  static absl::StatusOr<std::unique_ptr<AuditLog>> OpenFile(const std::string& path, WallClock clock = {});
  // Writes to the server log's stream (stderr), whatever the log level and format.
  static std::unique_ptr<AuditLog> ToServerLog(WallClock clock = {});
  // Writes to `fd` (not owned; for tests).
  static std::unique_ptr<AuditLog> ToFd(int fd, WallClock clock = {});
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  void Record(const AuditEvent& event);
  // Lines that could not be written whole (disk full, closed fd).
  uint64_t failed_writes() const;

 private:
  AuditLog(int fd, bool owns_fd, WallClock clock);

  const int fd_;
  const bool owns_fd_;
  const WallClock clock_;
  mutable absl::Mutex mutex_;
  uint64_t failed_writes_ ABSL_GUARDED_BY(mutex_) = 0;
  bool failing_ ABSL_GUARDED_BY(mutex_) = false;  // the last write failed (report once per streak)
};

// The process's audit log: installed once at start, before the ports open (later calls
// replace it; the previous one stays alive, as a logger does). RecordAudit writes to it,
// or to the server log when none was installed. Thread-safe.
void InstallAuditLog(std::unique_ptr<AuditLog> log);
void RecordAudit(const AuditEvent& event);
// RecordAudit with the outcome AuditOutcome::Of(status).
void RecordAudit(AuditEvent event, const absl::Status& status);

}  // namespace infera

#endif  // INFERA_SECURITY_AUDIT_LOG_H_
