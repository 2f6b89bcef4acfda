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

TEST(WarmupTest, InputFileMustStayInsideTheWarmupFolder) {
  const auto root = std::filesystem::temp_directory_path() / "infera_warmup_escape_test";
  std::filesystem::remove_all(root);
  const auto dir = root / "m";
  std::filesystem::create_directories(dir / "warmup" / "sub");
  std::ofstream(root / "secret.bin", std::ios::binary) << "abcdefgh";  // outside the model
  std::ofstream(dir / "warmup" / "sub" / "ok.bin", std::ios::binary) << "abcdefgh";
  std::filesystem::create_symlink(root / "secret.bin", dir / "warmup" / "link_out");
  std::filesystem::create_symlink(root / "no_such_file", dir / "warmup" / "dangling_out");
  std::filesystem::create_symlink(dir / "warmup" / "sub" / "ok.bin", dir / "warmup" / "link_in");
  std::filesystem::create_symlink("..", dir / "warmup" / "up");
  auto config = Config(R"pb(
    name: "m" max_batch_size: 0
    input [ { name: "I" data_type: TYPE_UINT8 dims: [ 8 ] } ]
    model_warmup [ { name: "f" inputs { key: "I" value: { data_type: TYPE_UINT8 dims: [ 8 ] input_data_file: "x" } } } ]
  )pb");
  auto build = [&](const std::string& file) {
    config.mutable_model_warmup(0)->mutable_inputs()->at("I").set_input_data_file(file);
    return BuildWarmupRequests(config, dir);
  };
  // Inside, directly or through a link that stays inside: read.
  for (const char* inside : {"sub/ok.bin", "link_in", "sub/../sub/ok.bin"}) {
    auto ok = build(inside);
    if (std::string(inside).find("..") != std::string::npos) {
      EXPECT_FALSE(ok.ok()) << inside;  // '..' is refused even when it stays inside
      continue;
    }
    ASSERT_TRUE(ok.ok()) << inside << ": " << ok.status();
    EXPECT_EQ((*ok)[0].inputs[0].data.AsStringView(), "abcdefgh");
  }
  // Outside: one error, whether the target exists or not, naming only the config's text.
  const std::string secret = (root / "secret.bin").string();
  for (const std::string& outside :
       {std::string("/etc/passwd"), std::string("/no/such/file"), std::string("../../secret.bin"),
        std::string("../../../../etc/passwd"), std::string("link_out"), std::string("dangling_out"),
        std::string("up/../secret.bin"), std::string("up/up/secret.bin"), secret}) {
    auto result = build(outside);
    ASSERT_FALSE(result.ok()) << outside;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << outside;
    EXPECT_EQ(std::string(result.status().message()),
              "warmup 'f': input_data_file '" + outside +
                  "' must name a file inside the model's warmup/ folder");
  }
  std::filesystem::remove_all(root);
}

TEST(WarmupTest, HugeSamplesAreErrorsNotAllocations) {
  // dims of 2^40 floats, 2^31 BYTES elements and 2^32-1 repetitions used to abort the
  // server with std::bad_alloc.
  auto config = Config(R"pb(
    name: "m" max_batch_size: 0
    input [ { name: "F" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "S" data_type: TYPE_STRING dims: [ -1 ] } ]
    model_warmup [ { name: "w" inputs { key: "F" value: { data_type: TYPE_FP32 dims: [ 1099511627776 ] zero_data: true } } } ]
  )pb");
  auto floats = BuildWarmupRequests(config, "/nonexistent");
  EXPECT_EQ(floats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(floats.status().message()), ::testing::HasSubstr("limit of 268435456 bytes"));

  config = Config(R"pb(
    name: "m" max_batch_size: 0
    input [ { name: "S" data_type: TYPE_STRING dims: [ -1 ] } ]
    model_warmup [ { name: "w" inputs { key: "S" value: { data_type: TYPE_STRING dims: [ 2147483648 ] zero_data: true } } } ]
  )pb");
  EXPECT_THAT(std::string(BuildWarmupRequests(config, "/nonexistent").status().message()),
              ::testing::HasSubstr("limit of 268435456 bytes"));

  config = Config(R"pb(
    name: "m" max_batch_size: 0
    input [ { name: "F" data_type: TYPE_FP32 dims: [ 1 ] } ]
    model_warmup [ { name: "w" count: 4294967295 inputs { key: "F" value: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } } } ]
  )pb");
  EXPECT_THAT(std::string(BuildWarmupRequests(config, "/nonexistent").status().message()),
              ::testing::HasSubstr("limit of 1000"));

  // The runs are bounded in all, not only per sample.
  config = Config(R"pb(
    name: "m" max_batch_size: 0
    input [ { name: "F" data_type: TYPE_FP32 dims: [ 1 ] } ]
    model_warmup [ { name: "w1" count: 600 inputs { key: "F" value: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } } },
                   { name: "w2" count: 600 inputs { key: "F" value: { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } } } ]
  )pb");
  EXPECT_THAT(std::string(BuildWarmupRequests(config, "/nonexistent").status().message()),
              ::testing::HasSubstr("limit of 1000 warmup runs"));
}

}  // namespace
}  // namespace infera
