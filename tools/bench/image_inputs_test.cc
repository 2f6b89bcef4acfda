#include "tools/bench/image_inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace infera::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The demo's resnet18_classify (scripts/make_demo_repo.py) as the server's config JSON.
const std::map<std::string, std::string> kConfigs = {
    {"resnet18_classify",
     R"({"name":"resnet18_classify","platform":"ensemble","max_batch_size":8,
         "input":[{"name":"IMAGE","data_type":"TYPE_STRING","dims":["1"]}],
         "ensemble_scheduling":{"step":[
           {"model_name":"resnet18_preprocess","model_version":"-1","input_map":{"IMAGE":"IMAGE"},
            "output_map":{"PIXELS":"pixels"}},
           {"model_name":"resnet18","input_map":{"INPUT__0":"pixels"}}]}})"},
    {"resnet18_preprocess",
     R"({"name":"resnet18_preprocess","backend":"image_preprocess",
         "input":[{"name":"IMAGE","data_type":"TYPE_STRING","dims":["1"]}]})"},
    {"outer",  // an ensemble of the ensemble, under another input name
     R"({"platform":"ensemble","input":[{"name":"PHOTO","data_type":"TYPE_STRING"},
                                        {"name":"NOTE","data_type":"TYPE_STRING"}],
         "ensemble_scheduling":{"step":[{"model_name":"resnet18_classify","input_map":{"IMAGE":"PHOTO"}},
                                        {"model_name":"text_tokenize","input_map":{"TEXT":"NOTE"}}]}})"},
    {"text_tokenize",
     R"({"backend":"tokenize","input":[{"name":"TEXT","data_type":"TYPE_STRING"}]})"},
    {"loop", R"({"platform":"ensemble","input":[{"name":"X","data_type":"TYPE_STRING"}],
                 "ensemble_scheduling":{"step":[{"model_name":"loop","input_map":{"X":"X"}}]}})"},
};

std::optional<std::string> Fetch(const std::string& model) {
  auto it = kConfigs.find(model);
  if (it == kConfigs.end()) return std::nullopt;
  return it->second;
}

TEST(ImageInputsTest, ImagePreprocessInputsAndTheEnsembleInputsFeedingThem) {
  EXPECT_THAT(EncodedImageInputs("resnet18_preprocess", Fetch), ElementsAre("IMAGE"));
  EXPECT_THAT(EncodedImageInputs("resnet18_classify", Fetch), ElementsAre("IMAGE"));
  EXPECT_THAT(EncodedImageInputs("outer", Fetch), ElementsAre("PHOTO"));  // not NOTE (text)
}

TEST(ImageInputsTest, NoImageInputsElsewhereOrWithoutAConfig) {
  EXPECT_THAT(EncodedImageInputs("text_tokenize", Fetch), IsEmpty());
  EXPECT_THAT(EncodedImageInputs("unknown", Fetch), IsEmpty());
  EXPECT_THAT(EncodedImageInputs("loop", Fetch), IsEmpty());  // bounded recursion
}

TEST(ImageInputsTest, ReadsImageFilesSortedAndSaysWhenThereAreNone) {
  const auto dir = std::filesystem::temp_directory_path() / "infera-image-inputs-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(ReadImageFiles(dir.string()).ok());  // empty
  std::ofstream(dir / "b.png") << "png";
  std::ofstream(dir / "a.JPG") << "jpeg";
  std::ofstream(dir / "notes.txt") << "not an image";
  auto images = ReadImageFiles(dir.string());
  ASSERT_TRUE(images.ok()) << images.status();
  EXPECT_THAT(*images, ElementsAre("jpeg", "png"));
  EXPECT_FALSE(ReadImageFiles((dir / "missing").string()).ok());
  std::filesystem::remove_all(dir);
}

TEST(ImageInputsTest, DefaultFoldersAreTheDemoPhotos) {
  EXPECT_THAT(DefaultImageDirs("/src/infera/build/infera"),
              ElementsAre("demo-models/.images", "/src/infera/demo-models/.images"));
}

}  // namespace
}  // namespace infera::bench
