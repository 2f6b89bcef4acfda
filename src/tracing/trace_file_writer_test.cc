#include "tracing/trace_file_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

class TraceFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trace_file_writer_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  bool Exists(const std::string& name) const {
    struct stat st {};
    return ::lstat(Path(name).c_str(), &st) == 0;
  }
  // The file's array; fails the test when it is not one.
  rapidjson::Document Read(const std::string& name) const {
    std::ifstream in(Path(name));
    std::stringstream text;
    text << in.rdbuf();
    rapidjson::Document doc;
    doc.Parse(text.str().c_str());
    EXPECT_FALSE(doc.HasParseError()) << name << ": " << text.str();
    EXPECT_TRUE(doc.IsArray()) << name;
    return doc;
  }
  // Trace id -> number of objects naming it, in `name`.
  std::map<uint64_t, int> Ids(const std::string& name) const {
    std::map<uint64_t, int> ids;
    rapidjson::Document doc = Read(name);
    if (!doc.IsArray()) return ids;
    for (const auto& object : doc.GetArray()) ids[object["id"].GetUint64()]++;
    return ids;
  }

  static TritonTraceRecord Record(TraceFileWriter& writer, int64_t log_frequency) {
    TritonTraceRecord record;
    record.id = writer.NextId();
    record.model_name = "simple";
    record.model_version = 1;
    record.timestamps = {{"REQUEST_START", 10}, {"REQUEST_END", 20}};
    record.log_frequency = log_frequency;
    return record;
  }

  std::string dir_;
};

TEST_F(TraceFileWriterTest, WritesTritonsObjectsAsOneArray) {
  {
    auto writer = TraceFileWriter::Create({Path("trace.json")});
    ASSERT_TRUE(writer.ok()) << writer.status();
    TritonTraceRecord record = Record(**writer, 0);
    Tensor input;
    input.name = "INPUT0";
    input.dtype = DataType::kInt32;
    input.shape = {1, 3};
    const int32_t values[] = {1, -2, 3};
    input.data = Buffer::Copy(values, sizeof(values));
    record.tensors.push_back({"TENSOR_QUEUE_INPUT", input});
    (*writer)->Submit(std::move(record));
    (*writer)->Submit(Record(**writer, 0));
  }
  rapidjson::Document doc = Read("trace.json");
  ASSERT_TRUE(doc.IsArray());
  // Per trace: its header, one object per timestamp; the first also a tensor activity.
  ASSERT_EQ(doc.Size(), 4u + 3u);
  EXPECT_EQ(doc[0]["id"].GetUint64(), 1u);
  EXPECT_STREQ(doc[0]["model_name"].GetString(), "simple");
  EXPECT_EQ(doc[0]["model_version"].GetInt64(), 1);
  EXPECT_STREQ(doc[1]["timestamps"][0]["name"].GetString(), "REQUEST_START");
  EXPECT_EQ(doc[1]["timestamps"][0]["ns"].GetInt64(), 10);
  EXPECT_STREQ(doc[3]["activity"].GetString(), "TENSOR_QUEUE_INPUT");
  EXPECT_STREQ(doc[3]["tensor"]["data"].GetString(), "1,-2,3");
  EXPECT_STREQ(doc[3]["tensor"]["shape"].GetString(), "1,3");
  EXPECT_STREQ(doc[3]["tensor"]["dtype"].GetString(), "INT32");
  EXPECT_EQ(doc[4]["id"].GetUint64(), 2u);
}

TEST_F(TraceFileWriterTest, LogFrequencyWritesAFileEveryNTraces) {
  {
    auto writer = TraceFileWriter::Create({Path("t.log")});
    ASSERT_TRUE(writer.ok());
    for (int i = 0; i < 5; ++i) (*writer)->Submit(Record(**writer, 2));
  }
  EXPECT_FALSE(Exists("t.log"));
  EXPECT_EQ(Ids("t.log.0").size(), 2u);
  EXPECT_EQ(Ids("t.log.1").size(), 2u);
  EXPECT_EQ(Ids("t.log.2").size(), 1u);  // the rest, closed at shutdown
  EXPECT_FALSE(Exists("t.log.3"));
}

TEST_F(TraceFileWriterTest, FromOneFileToIndexedOnesWhenLogFrequencyIsSet) {
  {
    auto writer = TraceFileWriter::Create({Path("t.log")});
    ASSERT_TRUE(writer.ok());
    for (int i = 0; i < 3; ++i) (*writer)->Submit(Record(**writer, 0));
    for (int i = 0; i < 2; ++i) (*writer)->Submit(Record(**writer, 2));
    (*writer)->Submit(Record(**writer, 0));  // `t.log` is closed: the next indexed file
  }
  EXPECT_EQ(Ids("t.log").size(), 3u);
  EXPECT_EQ(Ids("t.log.0").size(), 2u);
  EXPECT_EQ(Ids("t.log.1").size(), 1u);
}

TEST_F(TraceFileWriterTest, RefusesLinksAndMissingDirectories) {
  ASSERT_EQ(::symlink("/etc/passwd", Path("link").c_str()), 0);
  auto link = TraceFileWriter::Create({Path("link")});
  ASSERT_FALSE(link.ok());
  EXPECT_THAT(std::string(link.status().message()), HasSubstr("symbolic link"));
  auto missing = TraceFileWriter::Create({Path("no/such/trace.json")});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("does not exist"));
  EXPECT_FALSE(TraceFileWriter::Create({dir_}).ok());  // a directory
  EXPECT_FALSE(TraceFileWriter::Create({""}).ok());

  // A link planted at an indexed name later is not followed: that trace is dropped.
  const std::string victim = Path("victim");
  { std::ofstream(victim) << "keep"; }
  ASSERT_EQ(::symlink(victim.c_str(), Path("t.log.0").c_str()), 0);
  {
    auto writer = TraceFileWriter::Create({Path("t.log")});
    ASSERT_TRUE(writer.ok());
    (*writer)->Submit(Record(**writer, 1));
    (*writer)->Submit(Record(**writer, 1));
    writer->reset();
  }
  std::ifstream in(victim);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "keep");
  EXPECT_EQ(Ids("t.log.1").size(), 1u);
}

TEST_F(TraceFileWriterTest, AFullQueueDropsAndCounts) {
  TraceFileWriter::Options options{Path("t.log")};
  options.max_queued_traces = 0;  // nothing fits
  auto writer = TraceFileWriter::Create(options);
  ASSERT_TRUE(writer.ok());
  for (int i = 0; i < 3; ++i) (*writer)->Submit(Record(**writer, 0));
  EXPECT_EQ((*writer)->dropped_traces(), 3u);
}

}  // namespace
}  // namespace infera
