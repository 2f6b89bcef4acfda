// ServerProcess: the infera server `infera analyze` owns — this same binary (or
// --binary) started as `serve` on 127.0.0.1 with ephemeral HTTP/gRPC/metrics ports,
// `--model-control-mode explicit` and the given repository; its output goes to a log
// file, from which the HTTP port is read ("HTTP server listening on ADDR:PORT").
//
// The child runs in its own process group (Ctrl-C on the terminal reaches only the
// analyzer, which then stops the child itself) and gets SIGTERM if the analyzer dies
// (PR_SET_PDEATHSIG). The destructor sends SIGTERM, waits up to 10 s, then SIGKILL,
// and reaps it.
//
// Thread-compatible (one owner thread).
#ifndef INFERA_TOOLS_ANALYZE_SERVER_PROCESS_H_
#define INFERA_TOOLS_ANALYZE_SERVER_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::analyze {

class ServerProcess {
 public:
  // Starts `binary serve --model-repository <repository> ... <extra_args>` and waits
  // (up to `timeout`) for its HTTP port. Errors: the binary cannot be started, the
  // child exits first, or no port in time; the message ends with the log's tail.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(const std::string& binary,
                                                              const std::string& repository,
                                                              const std::string& log_path,
                                                              const std::vector<std::string>& extra_args,
                                                              std::chrono::milliseconds timeout);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }

  // nullopt while it runs; once it has exited, how ("exit status 1", "killed by signal 9").
  std::optional<std::string> Exited();

  // The last `bytes` of the log.
  std::string LogTail(size_t bytes) const;

 private:
  ServerProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}

  pid_t pid_;
  std::string log_path_;
  uint16_t port_ = 0;
  std::optional<std::string> exit_description_;
};

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_SERVER_PROCESS_H_
