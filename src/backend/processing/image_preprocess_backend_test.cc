#include <google/protobuf/text_format.h>
#include <png.h>

#include "api/tensor.h"
#include "backend/processing/image_preprocess_options.h"
#include "backend/processing/image_test_util.h"
#include "backend/processing/processing_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

inference::ModelConfig Config(const std::string& params, int max_batch_size = 0,
                              const std::string& out_dims = "3, 4, 6",
                              const std::string& input = R"(name: "IMAGE" data_type: TYPE_STRING dims: [ 1 ])") {
  inference::ModelConfig config;
  const std::string text = "name: \"pre\" backend: \"image_preprocess\" max_batch_size: " +
                           std::to_string(max_batch_size) + " input [ { " + input +
                           " } ] output [ { name: \"PIXELS\" data_type: TYPE_FP32 dims: [ " + out_dims +
                           " ] } ] " + params;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  return config;
}

std::string Param(const std::string& key, const std::string& value) {
  return "parameters { key: \"" + key + "\" value { string_value: \"" + value + "\" } } ";
}

TEST(ImagePreprocessOptions, ParsesEveryParameter) {
  auto options = processing::ParseImagePreprocessOptions(
      Config(Param("resize", "8") + Param("crop", "4x6") + Param("mean", "0.485, 0.456,0.406") +
             Param("std", "0.229,0.224,0.225") + Param("antialias", "false") + Param("max_pixels", "1000") +
             Param("max_aspect_ratio", "3.5")));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->resize_shorter_side, 8);
  EXPECT_EQ(options->crop, (processing::Size2d{4, 6}));
  EXPECT_FALSE(options->antialias);
  EXPECT_EQ(options->mean[1], 0.456f);
  EXPECT_EQ(options->std[2], 0.225f);
  EXPECT_EQ(options->limits.max_pixels, 1000);
  EXPECT_EQ(options->limits.max_aspect_ratio, 3.5);
  EXPECT_EQ(options->ForImage(30, 20).resize, (processing::Size2d{12, 8}));

  auto exact = processing::ParseImagePreprocessOptions(Config(Param("resize", "4x6")));
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->crop, (processing::Size2d{4, 6}));
  EXPECT_EQ(exact->ForImage(100, 7).resize, (processing::Size2d{4, 6}));
  EXPECT_TRUE(exact->antialias);
  EXPECT_EQ(exact->limits.max_pixels, 40'000'000);
  EXPECT_EQ(exact->limits.max_aspect_ratio, 100.0);
}

TEST(ImagePreprocessOptions, ErrorsNameTheParameterOrTensor) {
  struct Case { inference::ModelConfig config; std::string needle; };
  const std::string ok = Param("resize", "4x6");
  const std::vector<Case> cases = {
      {Config(""), "parameters[resize] is required"},
      {Config(Param("resize", "abc")), "parameters[resize] 'abc' is not a size"},
      {Config(Param("resize", "0x6")), "parameters[resize] '0x6' has a side outside [1, 8192]"},
      {Config(Param("resize", "4x99999")), "has a side outside"},
      {Config(Param("resize", "256")), "parameters[crop] is required when parameters[resize] '256'"},
      {Config(Param("resize", "8") + Param("crop", "4x")), "parameters[crop] '4x' is not a size"},
      {Config(ok + Param("mean", "1,2")), "parameters[mean] '1,2' is not three comma-separated numbers"},
      {Config(ok + Param("mean", "1,2,3,4")), "parameters[mean]"},
      {Config(ok + Param("std", "1,x,1")), "parameters[std] '1,x,1'"},
      {Config(ok + Param("std", "1,0,1")), "parameters[std] '1,0,1' has a zero"},
      {Config(ok + Param("antialias", "yes")), "parameters[antialias] 'yes' is not \"true\" or \"false\""},
      {Config(ok + Param("max_pixels", "0")), "parameters[max_pixels] '0'"},
      {Config(ok + Param("max_aspect_ratio", "0.5")), "parameters[max_aspect_ratio] '0.5'"},
      {Config(ok, 0, "3, 6, 4"), "output 'PIXELS' must be TYPE_FP32 with dims [ 3, 4, 6 ]"},
      {Config(ok, 0, "4, 6"), "output 'PIXELS' must be TYPE_FP32"},
      {Config(ok, 0, "3, 4, 6", R"(name: "IMAGE" data_type: TYPE_UINT8 dims: [ 1 ])"),
       "input 'IMAGE' must be TYPE_STRING with dims [ 1 ]"},
      {Config(ok, 0, "3, 4, 6", R"(name: "IMAGE" data_type: TYPE_STRING dims: [ 2 ])"), "input 'IMAGE'"},
  };
  auto backend = CreateImagePreprocessBackend();
  for (const Case& c : cases) {
    const absl::Status status = backend->ValidateConfig(c.config);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.needle;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.needle));
  }
}

Tensor Images(const std::vector<std::string>& images, bool batching) {
  Tensor t;
  t.name = "IMAGE";
  t.dtype = DataType::kBytes;
  t.shape = batching ? Shape{static_cast<int64_t>(images.size()), 1} : Shape{1};
  std::string data;
  for (const auto& image : images) AppendBytesElement(data, image);
  t.data = Buffer::FromString(std::move(data));
  return t;
}

std::string FlatPng(int w, int h, uint8_t r, uint8_t g, uint8_t b) {
  std::vector<uint8_t> pixels;
  for (int i = 0; i < w * h; ++i) pixels.insert(pixels.end(), {r, g, b});
  return processing::testing::EncodePng(w, h, PNG_COLOR_TYPE_RGB, 8, pixels);
}

struct Loaded {
  inference::ModelConfig config;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<LoadedModel> model;
  std::unique_ptr<ModelInstance> instance;
};

std::unique_ptr<Loaded> Load(inference::ModelConfig config) {
  auto loaded = std::make_unique<Loaded>();
  loaded->config = std::move(config);
  loaded->backend = CreateImagePreprocessBackend();
  EXPECT_TRUE(loaded->backend->ValidateConfig(loaded->config).ok());
  ModelLoadContext context;
  context.config = &loaded->config;
  auto model = loaded->backend->Load(context);
  EXPECT_TRUE(model.ok()) << model.status();
  loaded->model = std::move(*model);
  loaded->instance = std::move(*loaded->model->CreateInstance({}));
  return loaded;
}

TEST(ImagePreprocessBackend, RunsOnWorkerThreadsWithoutIntraOpThreads) {
  auto backend = CreateImagePreprocessBackend();
  EXPECT_EQ(backend->name(), "image_preprocess");
  EXPECT_FALSE(backend->RunsInline());
  EXPECT_FALSE(backend->UsesIntraOpThreads());
}

TEST(ImagePreprocessBackend, OneImage) {
  auto loaded = Load(Config(Param("resize", "8") + Param("crop", "4x6") + Param("mean", "0.5,0.5,0.5") +
                            Param("std", "0.5,0.5,0.5")));
  auto out = loaded->instance->Execute({Images({FlatPng(20, 10, 255, 0, 51)}, false)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const Tensor& t = (*out)[0];
  EXPECT_EQ(t.name, "PIXELS");
  EXPECT_EQ(t.dtype, DataType::kFp32);
  EXPECT_EQ(t.shape, (Shape{3, 4, 6}));
  ASSERT_EQ(t.data.size(), 3u * 4 * 6 * 4);
  const float* v = reinterpret_cast<const float*>(t.data.data());
  for (int i = 0; i < 24; ++i) {
    ASSERT_EQ(v[i], 1.0f);
    ASSERT_EQ(v[24 + i], -1.0f);
    ASSERT_EQ(v[48 + i], (51 / 255.0f - 0.5f) / 0.5f);
  }
}

TEST(ImagePreprocessBackend, BatchOfImagesOfDifferentSizesAndFormats) {
  auto loaded = Load(Config(Param("resize", "4x6"), 4));
  std::vector<uint8_t> gray(30 * 30, 200);
  const std::string jpeg = processing::testing::EncodeJpeg(30, 30, processing::testing::JpegKind::kGray, gray);
  auto out = loaded->instance->Execute({Images({FlatPng(9, 9, 0, 255, 0), jpeg}, true)});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& t = (*out)[0];
  EXPECT_EQ(t.shape, (Shape{2, 3, 4, 6}));
  const float* v = reinterpret_cast<const float*>(t.data.data());
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[24], 1.0f);
  EXPECT_NEAR(v[72], 200 / 255.0f, 2 / 255.0f);  // second image, R plane
}

TEST(ImagePreprocessBackend, BadImagesAreInvalidArgumentNamingTheRow) {
  auto loaded = Load(Config(Param("resize", "4x6"), 4));
  auto out = loaded->instance->Execute({Images({FlatPng(9, 9, 0, 255, 0), "GIF89a"}, true)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("image 1: not a JPEG or PNG image"));

  auto single = Load(Config(Param("resize", "4x6")));
  out = single->instance->Execute({Images({processing::testing::JpegClaiming(30000, 30000)}, false)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("30000x30000 pixels: more than max_pixels"));
  // Still usable afterwards.
  EXPECT_TRUE(single->instance->Execute({Images({FlatPng(3, 3, 1, 2, 3)}, false)}).ok());
}

}  // namespace
}  // namespace infera
