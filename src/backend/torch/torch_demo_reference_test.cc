// Checks the backend against Python LibTorch on the demo repository: the references that
// scripts/make_demo_repo.py wrote with torch.set_num_threads(1) must be reproduced bit
// for bit at 1 intra-op thread, both for the plain module (OPTIMIZE_FOR_INFERENCE false)
// and for freeze + optimize_for_inference (the default).
//
// Reads the demo repository at INFERA_DEMO_REPO (set by `make test`), by default the
// source tree's demo-models/; a missing repository is a failure, not a skip.
#include <google/protobuf/text_format.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/torch/torch_backend.h"
#include "backend/torch/torch_options.h"
#include "common/str_cat.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

Tensor ReadTensor(const std::filesystem::path& dir, const rapidjson::Value& entry) {
  Tensor tensor;
  tensor.name = entry["name"].GetString();
  tensor.dtype = ParseDataTypeName(entry["datatype"].GetString()).value_or(DataType::kInvalid);
  for (const auto& dim : entry["shape"].GetArray()) tensor.shape.push_back(dim.GetInt64());
  tensor.data = Buffer::FromString(ReadFile(dir / entry["file"].GetString()));
  return tensor;
}

// Every output equals its reference file bit for bit (FP32 outputs).
void ExpectBitEqual(const std::vector<Tensor>& outputs, const std::filesystem::path& ref_dir,
                    const rapidjson::Value& expected, const std::string& what) {
  ASSERT_EQ(outputs.size(), expected.Size()) << what;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor want = ReadTensor(ref_dir, expected[static_cast<rapidjson::SizeType>(i)]);
    const Tensor& got = outputs[i];
    EXPECT_EQ(got.shape, want.shape) << what << " " << want.name;
    ASSERT_EQ(got.data.size(), want.data.size()) << what << " " << want.name;
    double max_diff = 0;
    size_t differing = 0;
    for (size_t e = 0; e < got.data.size() / sizeof(float); ++e) {
      float a, b;
      std::memcpy(&a, got.data.data() + e * sizeof(float), sizeof(float));
      std::memcpy(&b, want.data.data() + e * sizeof(float), sizeof(float));
      if (std::memcmp(&a, &b, sizeof(float)) != 0) ++differing;
      max_diff = std::max(max_diff, static_cast<double>(std::abs(a - b)));
    }
    EXPECT_EQ(differing, 0u) << what << " " << want.name << ": " << differing
                             << " elements differ, max |diff| " << max_diff;
  }
}

class DemoReferenceTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DemoReferenceTest, MatchesPythonBitForBit) {
  const char* env = std::getenv("INFERA_DEMO_REPO");
  const std::filesystem::path repo = env != nullptr ? env : INFERA_DEFAULT_DEMO_REPO;
  const std::filesystem::path model_dir = repo / GetParam();
  const std::filesystem::path ref_dir = model_dir / "reference";
  ASSERT_TRUE(std::filesystem::exists(ref_dir / "manifest.json"))
      << "demo repository missing at " << repo << ": run `make demo-models`";
  rapidjson::Document manifest;
  manifest.Parse(ReadFile(ref_dir / "manifest.json").c_str());
  ASSERT_FALSE(manifest.HasParseError()) << ref_dir / "manifest.json";
  std::vector<Tensor> inputs;
  for (const auto& entry : manifest["inputs"].GetArray()) {
    inputs.push_back(ReadTensor(ref_dir, entry));
  }

  std::unique_ptr<Backend> backend = CreateTorchBackend();
  for (const char* variant : {"plain", "optimized"}) {
    inference::ModelConfig config;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        ReadFile(model_dir / "config.pbtxt"), &config));
    (*config.mutable_parameters())["OPTIMIZE_FOR_INFERENCE"].set_string_value(
        std::strcmp(variant, "optimized") == 0 ? "true" : "false");
    auto model = backend->Load({&config, 1, model_dir, model_dir / "1"});
    ASSERT_TRUE(model.ok()) << model.status();
    auto instance = (*model)->CreateInstance({0, "reference_0", 1});
    ASSERT_TRUE(instance.ok()) << instance.status();
    // Run 0 is the profiling executor's profiling run; later runs use the optimised plan.
    for (int run = 0; run < 3; ++run) {
      auto outputs = (*instance)->Execute(inputs);
      ASSERT_TRUE(outputs.ok()) << outputs.status();
      ExpectBitEqual(*outputs, ref_dir, manifest["outputs"][variant],
                     StrCat(GetParam(), " ", variant, " run ", run));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DemoModels, DemoReferenceTest,
                         ::testing::Values("resnet18", "ranker", "text_encoder"));

}  // namespace
}  // namespace infera
