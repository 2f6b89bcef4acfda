// Tests of PRECISION against tiny TorchScript modules built here: each precision loads
// and answers in the declared dtype, the boundary casts, the int8 Linear rewrite, the
// load-time validation figures and floors, and a reference check (the backend's output
// == in-process LibTorch at the same precision).
#include <google/protobuf/text_format.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/script.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "backend/torch/precision_figures.h"
#include "backend/torch/precision_probe.h"
#include "backend/torch/torch_backend.h"
#include "backend/torch/torch_precision.h"
#include "common/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// dense [8] FP32 + ids [3] INT64 -> scores [4] FP32: a Linear layer plus a summed embedding.
constexpr char kLinearSource[] = R"(
def forward(self, dense, ids):
    return torch.linear(dense, self.weight, self.bias) + torch.embedding(self.table, ids).sum(1)
)";
constexpr char kLinearConfig[] = R"(
  max_batch_size: 8
  input { name: "dense" data_type: TYPE_FP32 dims: [ 8 ] }
  input { name: "ids" data_type: TYPE_INT64 dims: [ 3 ] }
  output { name: "scores" data_type: TYPE_FP32 dims: [ 4 ] }
)";
// Elementwise only: runs in every dtype, has no Linear.
constexpr char kElementwiseSource[] = "def forward(self, x):\n  return x * 2.0 + 1.0\n";
constexpr char kElementwiseConfig[] = R"(
  max_batch_size: 8
  input { name: "x" data_type: TYPE_FP32 dims: [ 4 ] }
  output { name: "y" data_type: TYPE_FP32 dims: [ 4 ] }
)";

std::string Parameter(const std::string& key, const std::string& value) {
  return "parameters { key: \"" + key + "\" value: { string_value: \"" + value + "\" } }\n";
}

std::vector<float> Floats(const Tensor& tensor) {
  std::vector<float> out(tensor.data.size() / sizeof(float));
  std::memcpy(out.data(), tensor.data.data(), tensor.data.size());
  return out;
}

class TorchPrecisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           (std::string("torch_precision_test_") + info->name() + "_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_ / "1");
    torch::manual_seed(7);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void SaveLinearModule() {
    torch::jit::Module module("LinearModule");
    module.register_parameter("weight", torch::randn({4, 8}), false);
    module.register_parameter("bias", torch::randn({4}), false);
    module.register_parameter("table", torch::randn({5, 4}), false);
    module.define(kLinearSource);
    module.save(path());
  }
  void SaveElementwiseModule() {
    torch::jit::Module module("ElementwiseModule");
    module.define(kElementwiseSource);
    module.save(path());
  }
  std::string path() const { return (dir_ / "1" / "model.pt").string(); }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const std::string& config_text) {
    config_.Clear();
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(config_text, &config_));
    config_.set_name("precision_model");
    config_.set_platform("pytorch_libtorch");
    RETURN_IF_ERROR(backend_->ValidateConfig(config_));
    ModelLoadContext context{&config_, 1, dir_, dir_ / "1"};
    return backend_->Load(context);
  }

  static std::map<std::string, std::string> Reported(const LoadedModel& model) {
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : model.ReportedParameters()) out[key] = value;
    return out;
  }

  // A fixed batch of 2 for the Linear model.
  static std::vector<Tensor> LinearInputs() {
    const std::vector<float> dense = {0.5f, -1, 2, 0.25f, -0.75f, 1.5f, 0, 3,
                                      -2, 1, 0.5f, -0.5f, 1.25f, -1.5f, 2.5f, 0.1f};
    const std::vector<int64_t> ids = {0, 1, 4, 3, 2, 2};
    return {Tensor{"dense", DataType::kFp32, {2, 8}, Buffer::Copy(dense.data(), 16 * 4)},
            Tensor{"ids", DataType::kInt64, {2, 3}, Buffer::Copy(ids.data(), 6 * 8)}};
  }

  absl::StatusOr<std::vector<Tensor>> RunOnce(LoadedModel& model, std::vector<Tensor> inputs) {
    ASSIGN_OR_RETURN(auto instance, model.CreateInstance({0, "precision_model_0", 1}));
    return instance->Execute(std::move(inputs));
  }

  std::unique_ptr<Backend> backend_ = CreateTorchBackend();
  inference::ModelConfig config_;
  std::filesystem::path dir_;
};

TEST_F(TorchPrecisionTest, EveryWorkingPrecisionAnswersInTheDeclaredDtype) {
  SaveLinearModule();
  auto fp32 = Load(kLinearConfig);
  ASSERT_TRUE(fp32.ok()) << fp32.status();
  EXPECT_TRUE((*fp32)->ReportedParameters().empty());  // fp32 answers stay unchanged
  auto want = RunOnce(**fp32, LinearInputs());
  ASSERT_TRUE(want.ok()) << want.status();
  for (const char* precision : {"bf16", "int8_dynamic"}) {
    auto model = Load(std::string(kLinearConfig) + Parameter("PRECISION", precision));
    ASSERT_TRUE(model.ok()) << precision << ": " << model.status();
    auto got = RunOnce(**model, LinearInputs());
    ASSERT_TRUE(got.ok()) << precision << ": " << got.status();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_EQ((*got)[0].dtype, DataType::kFp32) << precision;
    EXPECT_EQ((*got)[0].shape, (Shape{2, 4}));
    const std::vector<float> a = Floats((*want)[0]), b = Floats((*got)[0]);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], 0.1 + 0.02 * std::fabs(a[i])) << precision << " element " << i;
    }
    auto reported = Reported(**model);
    EXPECT_EQ(reported["infera.precision"], precision);
    EXPECT_TRUE(reported.count("infera.precision.speedup")) << precision;
  }
}

TEST_F(TorchPrecisionTest, Fp16RunsWhereLibTorchHasHalfKernels) {
  SaveElementwiseModule();
  auto model = Load(std::string(kElementwiseConfig) + Parameter("PRECISION", "fp16"));
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<float> x = {1, -2, 0.5f, 3};
  auto got = RunOnce(**model, {Tensor{"x", DataType::kFp32, {1, 4}, Buffer::Copy(x.data(), 16)}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].dtype, DataType::kFp32);
  EXPECT_THAT(Floats((*got)[0]), ::testing::ElementsAre(3, -3, 2, 7));  // exact in fp16
}

TEST_F(TorchPrecisionTest, Fp16WithoutKernelsFailsTheLoadNamingIt) {
  SaveLinearModule();  // LibTorch 1.13 has no Half addmm on the CPU
  auto model = Load(std::string(kLinearConfig) + Parameter("PRECISION", "fp16"));
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("PRECISION fp16: a trial run failed"));
  EXPECT_THAT(model.status().message(), HasSubstr("try PRECISION bf16"));
}

TEST_F(TorchPrecisionTest, Int8RewriteReplacesLinear) {
  SaveLinearModule();
  ASSERT_TRUE(SelectQuantizedEngine().ok());
  torch::jit::Module module = torch::jit::load(path());
  module.eval();
  torch::jit::Module frozen = torch::jit::freeze(module);
  auto count = QuantizeLinearDynamic(frozen);
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 1);
  const std::string graph = frozen.get_method("forward").graph()->toString();
  EXPECT_THAT(graph, Not(HasSubstr("aten::linear")));
  EXPECT_THAT(graph, HasSubstr("quantized::linear_dynamic"));
  // Close to the fp32 module on the same input.
  c10::InferenceMode guard;
  const at::Tensor dense = torch::randn({3, 8});
  const at::Tensor ids = torch::tensor({{0, 1, 2}, {3, 4, 0}, {1, 1, 1}});
  const at::Tensor want = module.forward({dense, ids}).toTensor();
  const at::Tensor got = frozen.forward({dense, ids}).toTensor();
  EXPECT_LT((want - got).abs().max().item<float>(), 0.1f);
}

TEST_F(TorchPrecisionTest, Int8WithoutLinearSaysSo) {
  SaveElementwiseModule();
  auto model = Load(std::string(kElementwiseConfig) + Parameter("PRECISION", "int8_dynamic"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(Reported(**model)["infera.precision.quantized_layers"], "0");
}

TEST_F(TorchPrecisionTest, ValidationFiguresMatchAnIndependentComputation) {
  SaveLinearModule();
  auto model = Load(std::string(kLinearConfig) + Parameter("PRECISION", "bf16") +
                    Parameter("VALIDATE_PRECISION", "true"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto reported = Reported(**model);
  ASSERT_TRUE(reported.count("infera.precision.cosine"));
  // [batch, 4] float: classifier-shaped, so top-1 agreement is reported.
  ASSERT_TRUE(reported.count("infera.precision.top1_agreement"));

  // Independently: the same seeded inputs through plain LibTorch modules, fp32 and bf16.
  torch::jit::Module fp32 = torch::jit::load(path());
  fp32.eval();
  torch::jit::Module bf16 = torch::jit::load(path());
  bf16.eval();
  bf16.to(at::kBFloat16);
  // The pipeline the backend applies by default (OPTIMIZE_FOR_INFERENCE), so rounding
  // happens at the same places.
  fp32 = torch::jit::freeze(fp32);
  fp32 = torch::jit::optimize_for_inference(fp32);
  bf16 = torch::jit::freeze(bf16);
  bf16 = torch::jit::optimize_for_inference(bf16);
  c10::InferenceMode guard;
  double max_error = 0, min_cosine = 1;
  int64_t agree = 0, rows = 0;
  for (const std::vector<Tensor>& batch : ValidationBatches(config_, 5)) {
    const at::Tensor dense = torch::from_blob(const_cast<uint8_t*>(batch[0].data.data()),
                                              batch[0].shape, at::kFloat).clone();
    const at::Tensor ids = torch::from_blob(const_cast<uint8_t*>(batch[1].data.data()),
                                            batch[1].shape, at::kLong).clone();
    const at::Tensor want = fp32.forward({dense, ids}).toTensor();
    const at::Tensor got = bf16.forward({dense.to(at::kBFloat16), ids}).toTensor().to(at::kFloat);
    max_error = std::max(max_error, (want - got).abs().max().item<double>());
    const at::Tensor cosine = torch::cosine_similarity(want.to(at::kDouble), got.to(at::kDouble), 1);
    min_cosine = std::min(min_cosine, cosine.min().item<double>());
    agree += want.argmax(1).eq(got.argmax(1)).sum().item<int64_t>();
    rows += want.size(0);
  }
  EXPECT_EQ(rows, kValidationSamples);
  EXPECT_NEAR(std::stod(reported["infera.precision.top1_agreement"]),
              static_cast<double>(agree) / rows, 1e-6);
  EXPECT_NEAR(std::stod(reported["infera.precision.max_abs_error"]), max_error, 1e-5 + 1e-4 * max_error);
  EXPECT_NEAR(std::stod(reported["infera.precision.cosine"]), min_cosine, 1e-5);
  EXPECT_GT(min_cosine, 0.99);
}

TEST_F(TorchPrecisionTest, ServerOutputEqualsInProcessLibTorchAtTheSamePrecision) {
  SaveLinearModule();
  auto model = Load(std::string(kLinearConfig) + Parameter("PRECISION", "bf16"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto got = RunOnce(**model, LinearInputs());
  ASSERT_TRUE(got.ok()) << got.status();
  torch::jit::Module reference = torch::jit::load(path());
  reference.eval();
  reference.to(at::kBFloat16);
  reference = torch::jit::freeze(reference);
  reference = torch::jit::optimize_for_inference(reference);
  c10::InferenceMode guard;
  const std::vector<Tensor> inputs = LinearInputs();
  const at::Tensor dense = torch::from_blob(const_cast<uint8_t*>(inputs[0].data.data()), {2, 8},
                                            at::kFloat).to(at::kBFloat16);
  const at::Tensor ids = torch::from_blob(const_cast<uint8_t*>(inputs[1].data.data()), {2, 3},
                                          at::kLong).clone();
  const at::Tensor want = reference.forward({dense, ids}).toTensor().to(at::kFloat).contiguous();
  const std::vector<float> served = Floats((*got)[0]);
  ASSERT_EQ(want.numel(), static_cast<int64_t>(served.size()));
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(want.data_ptr<float>()[i], served[i]) << i;
}

TEST_F(TorchPrecisionTest, FloorFailsTheLoadNamingTheFigures) {
  SaveLinearModule();
  auto model = Load(std::string(kLinearConfig) + Parameter("PRECISION", "int8_dynamic") +
                    Parameter("VALIDATE_PRECISION", "true") +
                    Parameter("PRECISION_MIN_COSINE", "1"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(model.status().message(), HasSubstr("PRECISION int8_dynamic is too far from fp32"));
  EXPECT_THAT(model.status().message(), HasSubstr("< PRECISION_MIN_COSINE 1"));
  EXPECT_THAT(model.status().message(), HasSubstr("max_abs_error"));
}

TEST_F(TorchPrecisionTest, ClassifierOutputsGetTop1Agreement) {
  SaveLinearModule();
  auto model = Load(std::string(kLinearConfig) + Parameter("PRECISION", "int8_dynamic") +
                    Parameter("VALIDATE_PRECISION", "true") +
                    Parameter("PRECISION_MIN_TOP1_AGREEMENT", "0"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto reported = Reported(**model);
  ASSERT_TRUE(reported.count("infera.precision.top1_agreement"));
  const double top1 = std::stod(reported["infera.precision.top1_agreement"]);
  EXPECT_GE(top1, 0.0);
  EXPECT_LE(top1, 1.0);
  EXPECT_EQ(reported["infera.precision.quantized_layers"], "1");
}

TEST_F(TorchPrecisionTest, Bf16ConvolutionRunsChannelsLastAndMatchesLibTorch) {
  torch::jit::Module module("ConvModule");
  module.register_parameter("weight", torch::randn({4, 3, 3, 3}), false);
  module.register_parameter("bias", torch::randn({4}), false);
  module.define("def forward(self, x):\n"
                "  return torch.conv2d(x, self.weight, self.bias, [1, 1], [1, 1]).mean([2, 3])\n");
  module.save(path());
  const char* config = R"(
    max_batch_size: 4
    input { name: "x" data_type: TYPE_FP32 dims: [ 3, 8, 8 ] }
    output { name: "y" data_type: TYPE_FP32 dims: [ 4 ] })";
  auto model = Load(std::string(config) + Parameter("PRECISION", "bf16") +
                    Parameter("VALIDATE_PRECISION", "true"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_GT(std::stod(Reported(**model)["infera.precision.cosine"]), 0.99);
  const at::Tensor x = torch::randn({2, 3, 8, 8});
  auto got = RunOnce(**model, {Tensor{"x", DataType::kFp32, {2, 3, 8, 8},
                                      Buffer::Copy(x.data_ptr<float>(), x.numel() * 4)}});
  ASSERT_TRUE(got.ok()) << got.status();
  // In process: bf16 weights and input, both channels-last, frozen and optimised.
  torch::jit::Module reference = torch::jit::load(path());
  reference.eval();
  reference.to(at::kBFloat16);
  {
    torch::NoGradGuard no_grad;
    for (at::Tensor p : reference.parameters()) {
      if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
    }
  }
  reference = torch::jit::freeze(reference);
  reference = torch::jit::optimize_for_inference(reference);
  c10::InferenceMode guard;
  const at::Tensor want =
      reference.forward({x.to(at::kBFloat16).contiguous(at::MemoryFormat::ChannelsLast)})
          .toTensor().to(at::kFloat).contiguous();
  const std::vector<float> served = Floats((*got)[0]);
  ASSERT_EQ(want.numel(), static_cast<int64_t>(served.size()));
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(want.data_ptr<float>()[i], served[i]) << i;
}

// What a CPU without oneDNN's bf16 kernels (AVX2 only) runs: ATen's portable bf16
// convolution. Turning oneDNN off for the process takes the same path here.
TEST_F(TorchPrecisionTest, Bf16LoadsAndAnswersOnThePortablePathWithoutOneDnn) {
  torch::jit::Module module("ConvModule");
  module.register_parameter("weight", torch::randn({4, 3, 3, 3}), false);
  module.register_parameter("bias", torch::randn({4}), false);
  module.define("def forward(self, x):\n"
                "  return torch.conv2d(x, self.weight, self.bias, [1, 1], [1, 1]).mean([2, 3])\n");
  module.save(path());
  const char* config = R"(
    max_batch_size: 4
    input { name: "x" data_type: TYPE_FP32 dims: [ 3, 8, 8 ] }
    output { name: "y" data_type: TYPE_FP32 dims: [ 4 ] })";
  const bool mkldnn = at::globalContext().userEnabledMkldnn();
  at::globalContext().setUserEnabledMkldnn(false);
  auto model = Load(std::string(config) + Parameter("PRECISION", "bf16") +
                    Parameter("VALIDATE_PRECISION", "true"));
  at::globalContext().setUserEnabledMkldnn(mkldnn);
  ASSERT_TRUE(model.ok()) << model.status();
  auto reported = Reported(**model);
  EXPECT_GT(std::stod(reported["infera.precision.cosine"]), 0.99);
  EXPECT_TRUE(reported.count("infera.precision.speedup"));
}

TEST(ValidationBatchesTest, DeterministicShapedAndBounded) {
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    max_batch_size: 4
    input { name: "image" data_type: TYPE_FP32 dims: [ 3, 8, 8 ] }
    input { name: "ids" data_type: TYPE_INT64 dims: [ -1 ] }
    input { name: "mask" data_type: TYPE_BOOL dims: [ 2 ] }
    output { name: "o" data_type: TYPE_FP32 dims: [ 1 ] })", &config));
  const auto a = ValidationBatches(config, 7, 10);
  const auto b = ValidationBatches(config, 7, 10);
  ASSERT_EQ(a.size(), 3u);  // 4 + 4 + 2
  EXPECT_EQ(a[2][0].shape, (Shape{2, 3, 8, 8}));
  EXPECT_EQ(a[0][1].shape, (Shape{4, 8}));  // -1 -> 8
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t t = 0; t < a[i].size(); ++t) {
      ASSERT_EQ(a[i][t].data.size(), b[i][t].data.size());
      EXPECT_EQ(std::memcmp(a[i][t].data.data(), b[i][t].data.data(), a[i][t].data.size()), 0);
    }
    const int64_t* ids = reinterpret_cast<const int64_t*>(a[i][1].data.data());
    for (size_t k = 0; k < a[i][1].data.size() / 8; ++k) {
      EXPECT_GE(ids[k], 0);
      EXPECT_LT(ids[k], 7);
    }
    for (size_t k = 0; k < a[i][2].data.size(); ++k) EXPECT_LE(a[i][2].data.data()[k], 1);
  }
  // Image-like: normalised smooth values, not all equal.
  std::vector<float> image(a[0][0].data.size() / 4);
  std::memcpy(image.data(), a[0][0].data.data(), a[0][0].data.size());
  EXPECT_NE(image[0], image[1]);
  for (float v : image) {
    EXPECT_GE(v, -2.2f);
    EXPECT_LE(v, 2.7f);
  }
}

}  // namespace
}  // namespace infera
