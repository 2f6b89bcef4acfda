#include "tools/analyze/server_process.h"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infera::analyze {
namespace {

using ::testing::HasSubstr;

// A stand-in for the server binary: a shell script (the analyzer only needs a process
// that logs the listening line; the real server is driven by test_analyze.py).
class ServerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("analyze-server-process-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Script(const std::string& body) {
    const std::string path = (dir_ / "server.sh").string();
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  std::string Log() const { return (dir_ / "server.log").string(); }

  std::filesystem::path dir_;
};

TEST_F(ServerProcessTest, ReadsThePortAndStopsTheChild) {
  const std::string binary =
      Script("echo \"$@\" > \"$(dirname \"$0\")/args\"\n"
             "echo 'I0101 server.cc:1] HTTP server listening on 127.0.0.1:4242'\nexec sleep 60");
  auto server = ServerProcess::Start(binary, "/repo", Log(), {"--extra"}, std::chrono::seconds(30));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->port(), 4242);
  EXPECT_FALSE((*server)->Exited().has_value());
  std::string args;
  std::getline(std::ifstream(dir_ / "args"), args);
  EXPECT_THAT(args, HasSubstr("serve --model-repository /repo --model-control-mode explicit"));
  EXPECT_THAT(args, HasSubstr("--http-address 127.0.0.1 --http-port 0"));
  EXPECT_THAT(args, HasSubstr("--extra"));
  const pid_t pid = (*server)->pid();
  server->reset();  // SIGTERM, reaped
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(ServerProcessTest, ChildThatExitsFirstIsAnErrorWithItsLog) {
  auto server = ServerProcess::Start(Script("echo 'cannot open the repository' >&2\nexit 3"), "/repo", Log(), {},
                                     std::chrono::seconds(30));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("exited before listening (exit status 3)"));
  EXPECT_THAT(server.status().message(), HasSubstr("cannot open the repository"));
}

TEST_F(ServerProcessTest, NoPortInTimeIsDeadlineExceeded) {
  auto server = ServerProcess::Start(Script("echo starting\nexec sleep 60"), "/repo", Log(), {},
                                     std::chrono::milliseconds(300));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(server.status().message(), HasSubstr("starting"));
}

TEST_F(ServerProcessTest, MissingBinaryIsAnError) {
  auto server = ServerProcess::Start((dir_ / "nope").string(), "/repo", Log(), {}, std::chrono::seconds(30));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("exec of the server binary failed"));
}

TEST_F(ServerProcessTest, DeathIsNoticed) {
  // The script blocks reading a FIFO until the test lets it exit.
  const std::string fifo = (dir_ / "go").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto server = ServerProcess::Start(
      Script("echo 'HTTP server listening on 127.0.0.1:5000'\nread line < \"$(dirname \"$0\")/go\"\nexit 7"),
      "/repo", Log(), {}, std::chrono::seconds(30));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_FALSE((*server)->Exited().has_value());
  std::ofstream(fifo) << "go\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::optional<std::string> how;
  while (!(how = (*server)->Exited()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(how.has_value());
  EXPECT_EQ(*how, "exit status 7");
}

}  // namespace
}  // namespace infera::analyze
