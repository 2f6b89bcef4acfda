#include "security/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

// 2026-12-06T10:57:05.123Z
system_clock::time_point FixedTime() { return system_clock::time_point(milliseconds(1796554625123)); }

AuditEvent SampleEvent() {
  AuditEvent event;
  event.credential = "admin-token";
  event.peer = "10.1.2.3:51234";
  event.transport = "http";
  event.action = "model.load";
  event.target = "resnet";
  return event;
}

// The line parsed as JSON; fails the test when it is not exactly one object and "\n".
rapidjson::Document Parse(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size() - 1);
  EXPECT_FALSE(doc.HasParseError()) << line;
  EXPECT_TRUE(doc.IsObject()) << line;
  return doc;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/infera_audit_" + name + "_" +
                     std::to_string(::getpid());
  ::unlink(path.c_str());
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

TEST(AuditLogTest, FormatsRfc3339UtcWithMilliseconds) {
  EXPECT_EQ(FormatRfc3339Millis(FixedTime()), "2026-12-06T10:57:05.123Z");
  EXPECT_EQ(FormatRfc3339Millis(system_clock::time_point(milliseconds(0))), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339Millis(system_clock::time_point(milliseconds(-1))), "1969-12-31T23:59:59.999Z");
}

TEST(AuditLogTest, LineHasEveryFieldInOrder) {
  EXPECT_EQ(FormatAuditLine(SampleEvent(), FixedTime()),
            "{\"time\":\"2026-12-06T10:57:05.123Z\",\"audit\":\"admin\",\"credential\":\"admin-token\","
            "\"peer\":\"10.1.2.3:51234\",\"transport\":\"http\",\"action\":\"model.load\","
            "\"target\":\"resnet\",\"outcome\":\"ok\"}\n");
}

TEST(AuditLogTest, OutcomesAndUnknownPeer) {
  AuditEvent event = SampleEvent();
  event.peer.clear();
  event.outcome = AuditOutcome::Of(absl::NotFoundError("model 'x' not found"));
  rapidjson::Document doc = Parse(FormatAuditLine(event, FixedTime()));
  EXPECT_STREQ(doc["peer"].GetString(), "unknown");
  EXPECT_STREQ(doc["outcome"].GetString(), "error: model 'x' not found");
  EXPECT_EQ(AuditOutcome::Of(absl::OkStatus()).text, "ok");
  EXPECT_EQ(AuditOutcome::Denied().text, "denied");
  EXPECT_EQ(AuditEvent().credential, "none");
}

TEST(AuditLogTest, HostileStringsCannotBreakTheLineOrAddFields) {
  AuditEvent event = SampleEvent();
  event.target = std::string("evil\"}\n{\"outcome\":\"ok\\\r\t\x01\x7f") + std::string(1, '\0') + "\xff\xc3(";
  event.action = "model.load\",\"credential\":\"admin-token";
  const std::string line = FormatAuditLine(event, FixedTime());
  rapidjson::Document doc = Parse(line);
  EXPECT_EQ(doc.MemberCount(), 8u);
  EXPECT_EQ(std::string(doc["target"].GetString(), doc["target"].GetStringLength()),
            std::string("evil\"}\n{\"outcome\":\"ok\\\r\t\x01\x7f") + std::string(1, '\0') +
                "\xef\xbf\xbd\xef\xbf\xbd(");
  EXPECT_STREQ(doc["action"].GetString(), "model.load\",\"credential\":\"admin-token");
  // No raw control byte survives: the line is printable apart from its final newline.
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    EXPECT_GE(static_cast<unsigned char>(line[i]), 0x20) << i;
    EXPECT_NE(line[i], '\x7f') << i;
  }
  // Valid multi-byte UTF-8 passes unchanged.
  event.target = "modèle-模型";
  EXPECT_STREQ(Parse(FormatAuditLine(event, FixedTime()))["target"].GetString(), "modèle-模型");
}

TEST(AuditLogTest, FileIsCreated0600AndAppendedTo) {
  const std::string path = TempPath("mode");
  {
    auto log = AuditLog::OpenFile(path, FixedTime);
    ASSERT_TRUE(log.ok()) << log.status();
    (*log)->Record(SampleEvent());
  }
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  {
    auto log = AuditLog::OpenFile(path, FixedTime);
    ASSERT_TRUE(log.ok()) << log.status();
    AuditEvent second = SampleEvent();
    second.action = "model.unload";
    (*log)->Record(second);
    EXPECT_EQ((*log)->failed_writes(), 0u);
  }
  const std::string contents = ReadAll(path);
  const std::string first_line = FormatAuditLine(SampleEvent(), FixedTime());
  ASSERT_GT(contents.size(), first_line.size());
  EXPECT_EQ(contents.substr(0, first_line.size()), first_line);
  EXPECT_STREQ(Parse(contents.substr(first_line.size()))["action"].GetString(), "model.unload");
  ::unlink(path.c_str());
}

TEST(AuditLogTest, UnopenablePathIsAnErrorNamingIt) {
  auto log = AuditLog::OpenFile("/nonexistent-dir/audit.log");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(log.status().message().find("/nonexistent-dir/audit.log"), std::string::npos);
}

TEST(AuditLogTest, FailedWritesAreCounted) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  ::close(fds[1]);
  // fds[1] is closed: every write fails with EBADF (and reports once on the server log).
  auto log = AuditLog::ToFd(fds[1], FixedTime);
  log->Record(SampleEvent());
  log->Record(SampleEvent());
  EXPECT_EQ(log->failed_writes(), 2u);
}

TEST(AuditLogTest, ConcurrentWritersProduceWholeLines) {
  const std::string path = TempPath("threads");
  auto log = AuditLog::OpenFile(path);
  ASSERT_TRUE(log.ok()) << log.status();
  constexpr int kThreads = 8;
  constexpr int kLinesPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      AuditEvent event = SampleEvent();
      // Long targets make a torn write visible.
      event.target = std::string(512 + t, static_cast<char>('a' + t));
      for (int i = 0; i < kLinesPerThread; ++i) (*log)->Record(event);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::istringstream lines(ReadAll(path));
  std::vector<int> per_thread(kThreads, 0);
  std::string line;
  int total = 0;
  while (std::getline(lines, line)) {
    rapidjson::Document doc = Parse(line + "\n");
    ASSERT_TRUE(doc.IsObject());
    const std::string target = doc["target"].GetString();
    const int t = target[0] - 'a';
    ASSERT_GE(t, 0);
    ASSERT_LT(t, kThreads);
    EXPECT_EQ(target, std::string(512 + t, static_cast<char>('a' + t)));
    ++per_thread[t];
    ++total;
  }
  EXPECT_EQ(total, kThreads * kLinesPerThread);
  for (int count : per_thread) EXPECT_EQ(count, kLinesPerThread);
  ::unlink(path.c_str());
}

TEST(AuditLogTest, RecordAuditWritesToTheInstalledLog) {
  const std::string path = TempPath("installed");
  auto log = AuditLog::OpenFile(path, FixedTime);
  ASSERT_TRUE(log.ok()) << log.status();
  InstallAuditLog(*std::move(log));
  RecordAudit(SampleEvent());
  EXPECT_EQ(ReadAll(path), FormatAuditLine(SampleEvent(), FixedTime()));
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace infera
