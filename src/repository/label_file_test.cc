#include "repository/label_file.h"

#include <unistd.h>

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LabelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("label_file_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "model");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(LabelFileTest, OneLabelPerLineCrlfAndNoFinalNewline) {
  std::ofstream(dir_ / "model" / "labels.txt") << "cat\r\n\ndog";
  auto labels = LoadLabelFile(dir_ / "model", "labels.txt", "what");
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_THAT(*labels, ElementsAre("cat", "", "dog"));
  std::ofstream(dir_ / "model" / "labels.txt") << "a\nb\n";
  labels = LoadLabelFile(dir_ / "model", "labels.txt", "what");
  ASSERT_TRUE(labels.ok());
  EXPECT_THAT(*labels, ElementsAre("a", "b"));
}

TEST_F(LabelFileTest, NamesLeavingTheModelDirectoryOrMissingFilesAreErrors) {
  std::ofstream(dir_ / "outside.txt") << "x\n";
  auto labels = LoadLabelFile(dir_ / "model", "../outside.txt", "output 'x' label_filename");
  // A config naming a file it may not use is the config's fault: InvalidArgument (400 /
  // INVALID_ARGUMENT to a load request), never a retryable code.
  EXPECT_EQ(labels.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(labels.status().message(),
              HasSubstr("output 'x' label_filename must name a file inside the model directory"));
  std::filesystem::create_symlink(dir_ / "outside.txt", dir_ / "model" / "link.txt");
  labels = LoadLabelFile(dir_ / "model", "link.txt", "what");
  EXPECT_EQ(labels.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(labels.status().message(), HasSubstr("inside the model directory"));
  labels = LoadLabelFile(dir_ / "model", "missing.txt", "what");
  EXPECT_EQ(labels.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(labels.status().message(), HasSubstr("is not a readable file"));
}

}  // namespace
}  // namespace infera
