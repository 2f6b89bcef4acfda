#include "manager/warmup.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

TEST(WarmupTest, BuildsZeroRandomAndRepeatedSamples) {
  auto config = Config(R"pb(
    name: "m" max_batch_size: 8
    input [ { name: "F" data_type: TYPE_FP32 dims: [ 3 ] }, { name: "S" data_type: TYPE_STRING dims: [ 2 ] } ]
    model_warmup [ { name: "z" batch_size: 2 count: 3
                     inputs { key: "F" value: { data_type: TYPE_FP32 dims: [ 3 ] zero_data: true } }
                     inputs { key: "S" value: { data_type: TYPE_STRING dims: [ 2 ] random_data: true } } },
                   { name: "r"
                     inputs { key: "F" value: { data_type: TYPE_FP32 dims: [ 3 ] random_data: true } } } ]
  )pb");
  auto requests = BuildWarmupRequests(config, "/nonexistent");
  ASSERT_TRUE(requests.ok()) << requests.status();
  ASSERT_EQ(requests->size(), 4u);  // 3 x "z" + 1 x "r"
  const InferRequest& z = (*requests)[0];
  EXPECT_EQ(z.id, "warmup sample 'z'");
  ASSERT_EQ(z.inputs.size(), 2u);
  for (const Tensor& t : z.inputs) {
    if (t.name == "F") {
      EXPECT_EQ(t.shape, (Shape{2, 3}));
      EXPECT_EQ(t.data.AsStringView(), std::string(24, '\0'));
    } else {
      EXPECT_EQ(t.shape, (Shape{2, 2}));
      EXPECT_EQ(t.data.size(), 16u);  // four empty strings: random falls back to zero
    }
  }
  const Tensor& r = (*requests)[3].inputs[0];
  EXPECT_EQ(r.shape, (Shape{1, 3}));
  float values[3];
  std::memcpy(values, r.data.data(), 12);
  for (float v : values) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST(WarmupTest, ReadsInputFileAndChecksItsSize) {
  const auto dir = std::filesystem::temp_directory_path() / "infera_warmup_test";
  std::filesystem::create_directories(dir / "warmup");
  const int32_t values[4] = {1, 2, 3, 4};
  std::ofstream(dir / "warmup" / "good.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(values), sizeof(values));
  std::ofstream(dir / "warmup" / "short.bin", std::ios::binary) << "abc";
  auto config = Config(R"pb(
    name: "m" max_batch_size: 0
    input [ { name: "I" data_type: TYPE_INT32 dims: [ 4 ] } ]
    model_warmup [ { name: "f" inputs { key: "I" value: { data_type: TYPE_INT32 dims: [ 4 ] input_data_file: "good.bin" } } } ]
  )pb");
  auto good = BuildWarmupRequests(config, dir);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ((*good)[0].inputs[0].shape, (Shape{4}));
  EXPECT_EQ(std::memcmp((*good)[0].inputs[0].data.data(), values, 16), 0);

  config.mutable_model_warmup(0)->mutable_inputs()->at("I").set_input_data_file("short.bin");
  EXPECT_THAT(std::string(BuildWarmupRequests(config, dir).status().message()),
              ::testing::HasSubstr("bytes of data"));
  config.mutable_model_warmup(0)->mutable_inputs()->at("I").set_input_data_file("missing.bin");
  EXPECT_THAT(std::string(BuildWarmupRequests(config, dir).status().message()),
              ::testing::HasSubstr("cannot read"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace infera
