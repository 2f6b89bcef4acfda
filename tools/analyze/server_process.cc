#include "tools/analyze/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "common/str_cat.h"

namespace infera::analyze {
namespace {

std::string Describe(int status) {
  if (WIFEXITED(status)) return StrCat("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return StrCat("killed by signal ", WTERMSIG(status));
  return "stopped";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(const std::string& binary,
                                                                     const std::string& repository,
                                                                     const std::string& log_path,
                                                                     const std::vector<std::string>& extra_args,
                                                                     std::chrono::milliseconds timeout) {
  std::vector<std::string> args = {binary,          "serve",         "--model-repository", repository,
                                   "--model-control-mode", "explicit", "--http-address",   "127.0.0.1",
                                   "--http-port",   "0",             "--grpc-address",     "127.0.0.1",
                                   "--grpc-port",   "0",             "--metrics-port",     "0"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return absl::UnavailableError(StrCat("cannot write ", log_path, ": ", std::strerror(errno)));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return absl::UnavailableError(StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only until exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    const char message[] = "infera analyze: exec of the server binary failed\n";
    (void)!write(STDERR_FILENO, message, sizeof(message) - 1);
    _exit(127);
  }
  close(log_fd);
  std::unique_ptr<ServerProcess> server(new ServerProcess(pid, log_path));
  const std::regex listening(R"(HTTP server listening on [^\s]*:(\d+))");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::smatch match;
    const std::string log = ReadFile(log_path);
    if (std::regex_search(log, match, listening)) {
      server->port_ = static_cast<uint16_t>(std::stoi(match[1].str()));
      return server;
    }
    if (auto how = server->Exited()) {
      return absl::UnavailableError(
          StrCat("the server (", binary, ") exited before listening (", *how, "); its log ends:\n",
                 server->LogTail(2000)));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError(StrCat("the server did not listen within ", timeout.count() / 1000,
                                                " s; its log ends:\n", server->LogTail(2000)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

ServerProcess::~ServerProcess() {
  if (exit_description_) return;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!Exited()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::optional<std::string> ServerProcess::Exited() {
  if (exit_description_) return exit_description_;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) exit_description_ = Describe(status);
  return exit_description_;
}

std::string ServerProcess::LogTail(size_t bytes) const {
  const std::string log = ReadFile(log_path_);
  return log.size() <= bytes ? log : log.substr(log.size() - bytes);
}

}  // namespace infera::analyze
