#include "repository/model_repository.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

class ModelRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("infera_repo_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "b_model" / "1");
    fs::create_directories(root_ / "b_model" / "10");
    fs::create_directories(root_ / "b_model" / "2");
    fs::create_directories(root_ / "b_model" / "01");         // leading zero: not a version
    fs::create_directories(root_ / "b_model" / "reference");  // not a number
    fs::create_directories(root_ / "b_model" / "-3");
    std::ofstream(root_ / "b_model" / "5");  // a file, not a folder
    fs::create_directories(root_ / "a_model");
    fs::create_directories(root_ / ".hidden");
    std::ofstream(root_ / "README");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(ModelRepositoryTest, ListsModelsAndVersions) {
  auto repo = ModelRepository::Open(root_);
  ASSERT_TRUE(repo.ok()) << repo.status();
  EXPECT_THAT(*repo->ListModels(), ElementsAre("a_model", "b_model"));
  EXPECT_THAT(*repo->ListVersions("b_model"), ElementsAre(1, 2, 10));
  EXPECT_TRUE(repo->ListVersions("a_model")->empty());
}

TEST_F(ModelRepositoryTest, MissingRootAndFileRoot) {
  EXPECT_EQ(ModelRepository::Open(root_ / "nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ModelRepository::Open(root_ / "README").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ModelRepositoryNameTest, RejectsPathTricks) {
  EXPECT_TRUE(ModelRepository::IsValidModelName("resnet18"));
  EXPECT_TRUE(ModelRepository::IsValidModelName("my-model_v2.1"));
  EXPECT_FALSE(ModelRepository::IsValidModelName(""));
  EXPECT_FALSE(ModelRepository::IsValidModelName(".."));
  EXPECT_FALSE(ModelRepository::IsValidModelName("../etc"));
  EXPECT_FALSE(ModelRepository::IsValidModelName("a/b"));
  EXPECT_FALSE(ModelRepository::IsValidModelName(std::string("a\0b", 3)));
  EXPECT_FALSE(ModelRepository::IsValidModelName(".hidden"));
}

}  // namespace
}  // namespace infera
