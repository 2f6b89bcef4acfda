// Tests of the pytorch backend against small TorchScript modules built here (no demo
// repository needed): loading, binding, outputs, threads and a bit-exact reference.
#include <ATen/Parallel.h>
#include <google/protobuf/text_format.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "backend/torch/torch_backend.h"
#include "common/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two FP32 inputs and two FP32 outputs of 4 elements, batched up to 8.
constexpr char kTwoByTwo[] = R"(
  max_batch_size: 8
  input { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }
  input { name: "INPUT__1" data_type: TYPE_FP32 dims: [ 4 ] }
  output { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }
  output { name: "OUTPUT__1" data_type: TYPE_FP32 dims: [ 4 ] }
)";

Tensor FloatTensor(const std::string& name, Shape shape, const std::vector<float>& values) {
  return Tensor{name, DataType::kFp32, std::move(shape),
                Buffer::Copy(values.data(), values.size() * sizeof(float))};
}

std::vector<float> Floats(const Tensor& tensor) {
  std::vector<float> out(tensor.data.size() / sizeof(float));
  std::memcpy(out.data(), tensor.data.data(), tensor.data.size());
  return out;
}

class TorchBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           (std::string("torch_backend_test_") + info->name() + "_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_ / "1");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Saves a module with `forward_source` (and parameters) as <dir>/1/<file>.
  void SaveModule(const std::string& forward_source,
                  const std::vector<std::pair<std::string, at::Tensor>>& parameters = {},
                  const std::string& file = "model.pt") {
    torch::jit::Module module("TestModule");
    for (const auto& [name, value] : parameters) module.register_parameter(name, value, false);
    module.define(forward_source);
    module.save((dir_ / "1" / file).string());
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const std::string& config_text) {
    config_.Clear();
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(config_text, &config_));
    config_.set_name("test_model");
    config_.set_platform("pytorch_libtorch");
    RETURN_IF_ERROR(backend_->ValidateConfig(config_));
    ModelLoadContext context{&config_, 1, dir_, dir_ / "1"};
    return backend_->Load(context);
  }

  // Loads, creates one instance with `threads` and runs `inputs` once.
  absl::StatusOr<std::vector<Tensor>> Run(const std::string& config_text,
                                          std::vector<Tensor> inputs, int threads = 1) {
    ASSIGN_OR_RETURN(auto model, Load(config_text));
    ASSIGN_OR_RETURN(auto instance, model->CreateInstance({0, "test_model_0", threads}));
    return instance->Execute(std::move(inputs));
  }

  std::unique_ptr<Backend> backend_ = CreateTorchBackend();
  inference::ModelConfig config_;
  std::filesystem::path dir_;
};

TEST_F(TorchBackendTest, NameAndMissingFile) {
  EXPECT_EQ(backend_->name(), "pytorch");
  auto model = Load(kTwoByTwo);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(model.status().message(), HasSubstr((dir_ / "1" / "model.pt").string()));
}

TEST_F(TorchBackendTest, GarbageFileIsAnErrorNamingThePath) {
  std::ofstream(dir_ / "1" / "model.pt") << "this is not a zip archive";
  auto model = Load(kTwoByTwo);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(),
              HasSubstr("cannot load TorchScript model file '" + (dir_ / "1/model.pt").string()));
}

TEST_F(TorchBackendTest, NonTorchScriptZipGetsAHint) {
  // What torch.save() writes: a zip archive without TorchScript code or constants.
  {
    caffe2::serialize::PyTorchStreamWriter writer((dir_ / "1" / "model.pt").string());
    writer.writeRecord("data.pkl", "x", 1);
  }
  auto model = Load(kTwoByTwo);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("written by torch.save()?"));
}

TEST_F(TorchBackendTest, DefaultModelFilename) {
  SaveModule("def forward(self, x, y):\n  return x + y, x - y\n", {}, "other.pt");
  EXPECT_FALSE(Load(kTwoByTwo).ok());
  EXPECT_TRUE(Load(std::string(kTwoByTwo) + "default_model_filename: \"other.pt\"").ok());
}

TEST_F(TorchBackendTest, InputsBindByIndexAndOutputsByIndex) {
  SaveModule("def forward(self, x, y):\n  return x + y, x - y\n");
  // Config order differs from index order on both sides.
  auto outputs = Run(R"(
    max_batch_size: 8
    input { name: "B__1" data_type: TYPE_FP32 dims: [ 2 ] }
    input { name: "A__0" data_type: TYPE_FP32 dims: [ 2 ] }
    output { name: "DIFF__1" data_type: TYPE_FP32 dims: [ 2 ] }
    output { name: "SUM__0" data_type: TYPE_FP32 dims: [ 2 ] })",
                     {FloatTensor("B__1", {1, 2}, {1, 2}), FloatTensor("A__0", {1, 2}, {10, 20})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_EQ((*outputs)[0].name, "DIFF__1");
  EXPECT_THAT(Floats((*outputs)[0]), ElementsAre(9, 18));
  EXPECT_THAT(Floats((*outputs)[1]), ElementsAre(11, 22));
}

TEST_F(TorchBackendTest, InputsBindByArgumentNameAndOutputsByOrder) {
  SaveModule("def forward(self, dense, ids):\n  return [dense * 2.0, ids.float()]\n");
  auto outputs = Run(R"(
    max_batch_size: 4
    input { name: "ids" data_type: TYPE_INT64 dims: [ 2 ] }
    input { name: "dense" data_type: TYPE_FP32 dims: [ 2 ] }
    output { name: "doubled" data_type: TYPE_FP32 dims: [ 2 ] }
    output { name: "ids_as_float" data_type: TYPE_FP32 dims: [ 2 ] })",
                     {Tensor{"ids", DataType::kInt64, {1, 2}, Buffer::Copy("\7\0\0\0\0\0\0\0"
                                                                          "\5\0\0\0\0\0\0\0", 16)},
                      FloatTensor("dense", {1, 2}, {1.5, -1})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_THAT(Floats((*outputs)[0]), ElementsAre(3, -2));
  EXPECT_THAT(Floats((*outputs)[1]), ElementsAre(7, 5));
}

TEST_F(TorchBackendTest, UnmatchedInputNameIsALoadError) {
  SaveModule("def forward(self, x, y):\n  return x + y\n");
  auto model = Load(R"(
    input { name: "x" data_type: TYPE_FP32 dims: [ 2 ] }
    input { name: "z" data_type: TYPE_FP32 dims: [ 2 ] }
    output { name: "out" data_type: TYPE_FP32 dims: [ 2 ] })");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("input 'z' matches no argument of forward(x, y)"));
}

TEST_F(TorchBackendTest, OptionalArgumentsMayBeLeftOut) {
  SaveModule("def forward(self, x, scale: Optional[Tensor], bias: float = 1.0):\n"
             "  if scale is None:\n    return x + bias\n  return x * scale + bias\n");
  auto outputs = Run(R"(
    input { name: "x" data_type: TYPE_FP32 dims: [ 2 ] }
    output { name: "out" data_type: TYPE_FP32 dims: [ 2 ] })",
                     {FloatTensor("x", {2}, {1, 2})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_THAT(Floats((*outputs)[0]), ElementsAre(2, 3));
}

TEST_F(TorchBackendTest, ReturnedCountMismatchNamesTheOutput) {
  SaveModule("def forward(self, x, y):\n  return x + y\n");
  auto outputs = Run(kTwoByTwo, {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                                 FloatTensor("INPUT__1", {1, 4}, {1, 2, 3, 4})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInternal);  // the model's fault
  EXPECT_THAT(outputs.status().message(),
              HasSubstr("output 'OUTPUT__1': the model returned 1 value(s), none at index 1"));
}

TEST_F(TorchBackendTest, DtypeMismatchNamesTheOutput) {
  SaveModule("def forward(self, x, y):\n  return (x + y).long(), x - y\n");
  auto outputs = Run(kTwoByTwo, {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                                 FloatTensor("INPUT__1", {1, 4}, {1, 2, 3, 4})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInternal);  // the model's fault
  EXPECT_THAT(outputs.status().message(),
              HasSubstr("output 'OUTPUT__0': the model returned INT64 but the config declares "
                        "TYPE_FP32"));
}

TEST_F(TorchBackendTest, NonTensorResultIsTheModelsFault) {
  SaveModule("def forward(self, x, y):\n  return 7\n");
  auto outputs = Run(kTwoByTwo, {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                                 FloatTensor("INPUT__1", {1, 4}, {1, 2, 3, 4})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(outputs.status().message(), HasSubstr("forward() returned a Int"));
}

TEST_F(TorchBackendTest, NonTensorElementIsTheModelsFault) {
  SaveModule("def forward(self, x, y):\n  return x + y, 3\n");
  auto outputs = Run(kTwoByTwo, {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                                 FloatTensor("INPUT__1", {1, 4}, {1, 2, 3, 4})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(outputs.status().message(),
              HasSubstr("output 'OUTPUT__1': returned value 1 is a Int, not a Tensor"));
}

TEST_F(TorchBackendTest, ExtraReturnedValuesAreTheModelsFault) {
  // Outputs bound by order (no __N names): the count must match exactly.
  SaveModule("def forward(self, x, y):\n  return x + y, x - y, x\n");
  auto outputs = Run(R"(
    max_batch_size: 8
    input { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }
    input { name: "INPUT__1" data_type: TYPE_FP32 dims: [ 4 ] }
    output { name: "sum" data_type: TYPE_FP32 dims: [ 4 ] }
    output { name: "diff" data_type: TYPE_FP32 dims: [ 4 ] })",
                     {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                      FloatTensor("INPUT__1", {1, 4}, {1, 2, 3, 4})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(outputs.status().message(), HasSubstr("the model returned 3 values"));
}

TEST_F(TorchBackendTest, RuntimeErrorBecomesStatus) {
  SaveModule("def forward(self, x, y):\n  return torch.matmul(x, y), x\n");
  auto outputs = Run(kTwoByTwo, {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                                 FloatTensor("INPUT__1", {1, 4}, {1, 2, 3, 4})});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(outputs.status().message(), HasSubstr("model execution failed: RuntimeError: "));
  EXPECT_THAT(outputs.status().message(), HasSubstr("cannot be multiplied"));
}

TEST_F(TorchBackendTest, BatchExecution) {
  SaveModule("def forward(self, x, y):\n  return x * y, x.sum(dim=1, keepdim=True) + y\n");
  std::vector<float> x, y;
  for (int i = 0; i < 5 * 4; ++i) {
    x.push_back(static_cast<float>(i));
    y.push_back(2.0f);
  }
  auto outputs = Run(kTwoByTwo, {FloatTensor("INPUT__0", {5, 4}, x),
                                 FloatTensor("INPUT__1", {5, 4}, y)});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_THAT((*outputs)[0].shape, ElementsAre(5, 4));
  EXPECT_THAT((*outputs)[1].shape, ElementsAre(5, 4));
  const std::vector<float> product = Floats((*outputs)[0]);
  const std::vector<float> sums = Floats((*outputs)[1]);
  for (int row = 0; row < 5; ++row) {
    const float row_sum = static_cast<float>(16 * row + 6);  // 4r + (4r+1) + (4r+2) + (4r+3)
    for (int col = 0; col < 4; ++col) {
      EXPECT_EQ(product[row * 4 + col], 2.0f * (row * 4 + col));
      EXPECT_EQ(sums[row * 4 + col], row_sum + 2.0f);
    }
  }
}

TEST_F(TorchBackendTest, InputsAndOutputsAreNotCopied) {
  SaveModule("def forward(self, x, y):\n  return x, y.t()\n");
  auto model = Load(kTwoByTwo);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = (*model)->CreateInstance({0, "m_0", 1});
  ASSERT_TRUE(instance.ok());
  Tensor x = FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4});
  const uint8_t* x_bytes = x.data.data();
  auto outputs = (*instance)->Execute({x, FloatTensor("INPUT__1", {1, 4}, {5, 6, 7, 8})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  x = Tensor();  // the output must keep the request's bytes alive on its own
  EXPECT_EQ((*outputs)[0].data.data(), x_bytes);
  EXPECT_THAT(Floats((*outputs)[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT((*outputs)[1].shape, ElementsAre(4, 1));  // non-contiguous: made contiguous
  EXPECT_THAT(Floats((*outputs)[1]), ElementsAre(5, 6, 7, 8));
}

TEST_F(TorchBackendTest, MisalignedInputIsCopied) {
  SaveModule("def forward(self, x, y):\n  return x + y, x - y\n");
  std::vector<float> values = {1, 2, 3, 4};
  std::string bytes(1, '\0');
  bytes.append(reinterpret_cast<const char*>(values.data()), 16);
  Buffer odd = Buffer::FromString(std::move(bytes)).Slice(1, 16);
  ASSERT_NE(reinterpret_cast<uintptr_t>(odd.data()) % 4, 0u);
  auto outputs = Run(kTwoByTwo, {Tensor{"INPUT__0", DataType::kFp32, {1, 4}, odd},
                                 FloatTensor("INPUT__1", {1, 4}, {1, 1, 1, 1})});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_THAT(Floats((*outputs)[0]), ElementsAre(2, 3, 4, 5));
}

TEST_F(TorchBackendTest, OtherDtypes) {
  // The C++ TorchScript resolver knows no `torch.bfloat16`; 15 is its ScalarType value.
  SaveModule("def forward(self, flags, half):\n"
             "  return flags.logical_not(), (half * 2).to(15)\n");
  const std::string config = R"(
    input { name: "flags" data_type: TYPE_BOOL dims: [ 3 ] }
    input { name: "half" data_type: TYPE_FP16 dims: [ 1 ] }
    output { name: "not" data_type: TYPE_BOOL dims: [ 3 ] }
    output { name: "twice" data_type: TYPE_BF16 dims: [ 1 ] })";
  const uint16_t one_fp16 = 0x3C00, two_bf16 = 0x4000;
  auto outputs = Run(config, {Tensor{"flags", DataType::kBool, {3}, Buffer::Copy("\1\0\1", 3)},
                              Tensor{"half", DataType::kFp16, {1}, Buffer::Copy(&one_fp16, 2)}});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ((*outputs)[0].data.AsStringView(), std::string_view("\0\1\0", 3));
  EXPECT_EQ((*outputs)[1].dtype, DataType::kBf16);
  uint16_t twice;
  std::memcpy(&twice, (*outputs)[1].data.data(), 2);
  EXPECT_EQ(twice, two_bf16);

  auto bad_bool = Run(config, {Tensor{"flags", DataType::kBool, {3}, Buffer::Copy("\1\2\1", 3)},
                               Tensor{"half", DataType::kFp16, {1}, Buffer::Copy(&one_fp16, 2)}});
  EXPECT_THAT(bad_bool.status().message(), HasSubstr("input 'flags': BOOL element 1 is 2"));
}

TEST_F(TorchBackendTest, ParametersThatChangeExecution) {
  SaveModule("def forward(self, x, y):\n  return x + y, x - y\n");
  const std::vector<Tensor> inputs = {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                                      FloatTensor("INPUT__1", {1, 4}, {1, 1, 1, 1})};
  for (const char* parameters :
       {R"(parameters { key: "INFERENCE_MODE" value: { string_value: "false" } })",
        R"(parameters { key: "DISABLE_OPTIMIZED_EXECUTION" value: { string_value: "true" } })",
        R"(parameters { key: "OPTIMIZE_FOR_INFERENCE" value: { string_value: "false" } })"}) {
    auto outputs = Run(std::string(kTwoByTwo) + parameters, inputs);
    ASSERT_TRUE(outputs.ok()) << parameters << ": " << outputs.status();
    EXPECT_THAT(Floats((*outputs)[0]), ElementsAre(2, 3, 4, 5)) << parameters;
  }
  auto bad = Load(std::string(kTwoByTwo) +
                  R"(parameters { key: "INFERENCE_MODE" value: { string_value: "maybe" } })");
  EXPECT_THAT(bad.status().message(), HasSubstr("'INFERENCE_MODE' has value 'maybe'"));
}

// GRAPH_EXECUTOR: which executor ran the first call, seen in the graph it ran (the
// profiling executor's first run is its instrumented graph, with prim::profile nodes; the
// simple executor runs the graph without them). `auto` follows freezing.
TEST_F(TorchBackendTest, GraphExecutorFollowsFreezingUnlessSet) {
  SaveModule("def forward(self, x, y):\n  return x + y, x - y\n");
  const std::vector<Tensor> inputs = {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                                      FloatTensor("INPUT__1", {1, 4}, {1, 1, 1, 1})};
  auto parameter = [](const char* key, const char* value) {
    return std::string("parameters { key: \"") + key + "\" value: { string_value: \"" + value +
           "\" } }\n";
  };
  const std::string no_freeze = parameter("OPTIMIZE_FOR_INFERENCE", "false");
  const std::vector<std::pair<std::string, bool>> cases = {
      {"", false},  // auto, frozen: simple
      {parameter("GRAPH_EXECUTOR", "auto"), false},
      {no_freeze, true},  // auto, not frozen: profiling
      {parameter("GRAPH_EXECUTOR", "profiling"), true},
      {no_freeze + parameter("GRAPH_EXECUTOR", "simple"), false},
  };
  for (const auto& [parameters, profiled] : cases) {
    auto model = Load(std::string(kTwoByTwo) + parameters);
    ASSERT_TRUE(model.ok()) << parameters << ": " << model.status();
    auto instance = (*model)->CreateInstance({0, "test_model_0", 1});
    ASSERT_TRUE(instance.ok()) << instance.status();
    for (int run = 0; run < 3; ++run) {
      auto outputs = (*instance)->Execute(inputs);
      ASSERT_TRUE(outputs.ok()) << parameters << ": " << outputs.status();
      EXPECT_THAT(Floats((*outputs)[0]), ElementsAre(2, 3, 4, 5)) << parameters;
      EXPECT_THAT(Floats((*outputs)[1]), ElementsAre(0, 1, 2, 3)) << parameters;
      if (run == 0) {
        std::shared_ptr<torch::jit::Graph> graph = torch::jit::lastExecutedOptimizedGraph();
        ASSERT_NE(graph, nullptr) << parameters;
        std::ostringstream text;
        text << *graph;
        EXPECT_EQ(text.str().find("prim::profile") != std::string::npos, profiled)
            << parameters << text.str();
      }
    }
  }
}

// at::set_num_threads is per calling thread with this LibTorch's OpenMP pool: each
// instance's worker keeps its own budget while the other runs.
TEST_F(TorchBackendTest, EachWorkerThreadKeepsItsInstanceThreadBudget) {
  SaveModule("def forward(self, x, y):\n  return x + y, x - y\n");
  auto model = Load(kTwoByTwo);
  ASSERT_TRUE(model.ok()) << model.status();
  auto one = (*model)->CreateInstance({0, "m_0", 1});
  auto two = (*model)->CreateInstance({1, "m_1", 2});
  ASSERT_TRUE(one.ok() && two.ok());
  const std::vector<Tensor> inputs = {FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                                      FloatTensor("INPUT__1", {1, 4}, {1, 1, 1, 1})};
  int seen_one = 0, seen_two = 0, seen_two_after = 0;
  std::thread worker_two([&] {
    ASSERT_TRUE((*two)->Execute(inputs).ok());
    seen_two = at::get_num_threads();
    std::thread worker_one([&] {
      ASSERT_TRUE((*one)->Execute(inputs).ok());
      seen_one = at::get_num_threads();
    });
    worker_one.join();
    seen_two_after = at::get_num_threads();
  });
  worker_two.join();
  EXPECT_EQ(seen_two, 2);
  EXPECT_EQ(seen_one, 1);
  EXPECT_EQ(seen_two_after, 2);
}

TEST_F(TorchBackendTest, IntraOpThreadCountOverridesInstanceOption) {
  SaveModule("def forward(self, x, y):\n  return x + y, x - y\n");
  auto model = Load(std::string(kTwoByTwo) +
                    R"(parameters { key: "INTRA_OP_THREAD_COUNT" value: { string_value: "2" } })");
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = (*model)->CreateInstance({0, "m_0", 1});
  ASSERT_TRUE(instance.ok());
  int seen = 0;
  std::thread worker([&] {
    ASSERT_TRUE((*instance)
                    ->Execute({FloatTensor("INPUT__0", {1, 4}, {1, 2, 3, 4}),
                               FloatTensor("INPUT__1", {1, 4}, {1, 1, 1, 1})})
                    .ok());
    seen = at::get_num_threads();
  });
  worker.join();
  EXPECT_EQ(seen, 2);
}

// Instances share one module by default; concurrent calls must not disturb each other.
TEST_F(TorchBackendTest, SharedModuleRunsConcurrently) {
  torch::manual_seed(3);
  SaveModule("def forward(self, x, y):\n"
             "  h = torch.layer_norm(torch.relu(torch.linear(x, self.w)), [64])\n"
             "  return h, h.sum(dim=1, keepdim=True) * y\n",
             {{"w", torch::randn({64, 4})}});
  auto model = Load(R"(
    max_batch_size: 8
    input { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }
    input { name: "INPUT__1" data_type: TYPE_FP32 dims: [ 1 ] }
    output { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 64 ] }
    output { name: "OUTPUT__1" data_type: TYPE_FP32 dims: [ 1 ] })");
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<std::unique_ptr<ModelInstance>> instances;
  for (int i = 0; i < 2; ++i) {
    auto instance = (*model)->CreateInstance({i, "m_" + std::to_string(i), 1});
    ASSERT_TRUE(instance.ok());
    instances.push_back(*std::move(instance));
  }
  // Each thread uses its own inputs; results must equal a solo run bit for bit.
  std::vector<std::vector<Tensor>> inputs(2);
  std::vector<std::vector<float>> expected(2);
  for (int i = 0; i < 2; ++i) {
    inputs[i] = {FloatTensor("INPUT__0", {2, 4}, {1.f + i, 2, 3, 4, 5, 6, 7, 8.f - i}),
                 FloatTensor("INPUT__1", {2, 1}, {0.5f, 2.f + i})};
    auto solo = instances[i]->Execute(inputs[i]);
    ASSERT_TRUE(solo.ok()) << solo.status();
    expected[i] = Floats((*solo)[0]);
  }
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i) {
    workers.emplace_back([&, i] {
      for (int n = 0; n < 200; ++n) {
        auto outputs = instances[i]->Execute(inputs[i]);
        if (!outputs.ok() || Floats((*outputs)[0]) != expected[i]) ++mismatches[i];
      }
    });
  }
  for (auto& worker : workers) worker.join();
  EXPECT_THAT(mismatches, ElementsAre(0, 0));
}

// The backend's output equals the same file run directly with LibTorch, bit for bit,
// plain and frozen + optimised, with shared and with per-instance weights.
TEST_F(TorchBackendTest, MatchesDirectLibTorchBitForBit) {
  torch::manual_seed(7);
  SaveModule(
      "def forward(self, x, y):\n"
      "  h = torch.relu(torch.linear(x, self.w1, self.b1))\n"
      "  h = torch.layer_norm(h, [32])\n"
      "  return torch.tanh(torch.linear(h, self.w2)) + y, h.softmax(dim=1)\n",
      {{"w1", torch::randn({32, 4})}, {"b1", torch::randn({32})}, {"w2", torch::randn({4, 32})}});
  torch::jit::Module plain = torch::jit::load((dir_ / "1" / "model.pt").string());
  plain.eval();
  torch::jit::Module frozen = torch::jit::freeze(plain);
  torch::jit::Module optimized = torch::jit::optimize_for_inference(frozen);
  const std::string config = R"(
    max_batch_size: 8
    input { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }
    input { name: "INPUT__1" data_type: TYPE_FP32 dims: [ 4 ] }
    output { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }
    output { name: "OUTPUT__1" data_type: TYPE_FP32 dims: [ 32 ] })";
  at::Tensor x = torch::randn({6, 4}), y = torch::randn({6, 4});
  std::vector<float> xs(x.data_ptr<float>(), x.data_ptr<float>() + 24);
  std::vector<float> ys(y.data_ptr<float>(), y.data_ptr<float>() + 24);
  for (bool optimize : {false, true}) {
    for (bool share : {true, false}) {
      std::string parameters = std::string("parameters { key: \"OPTIMIZE_FOR_INFERENCE\" value: ") +
                               "{ string_value: \"" + (optimize ? "true" : "false") + "\" } }\n" +
                               "parameters { key: \"ENABLE_WEIGHT_SHARING\" value: " +
                               "{ string_value: \"" + (share ? "true" : "false") + "\" } }";
      auto model = Load(config + parameters);
      ASSERT_TRUE(model.ok()) << model.status();
      auto instance = (*model)->CreateInstance({1, "m_1", 1});
      ASSERT_TRUE(instance.ok()) << instance.status();
      auto outputs = (*instance)->Execute({FloatTensor("INPUT__0", {6, 4}, xs),
                                           FloatTensor("INPUT__1", {6, 4}, ys)});
      ASSERT_TRUE(outputs.ok()) << outputs.status();
      c10::InferenceMode guard;
      auto expected = (optimize ? optimized : plain).forward({x, y}).toTuple()->elements();
      for (int i = 0; i < 2; ++i) {
        const at::Tensor& want = expected[i].toTensor();
        ASSERT_EQ((*outputs)[i].data.size(), want.nbytes());
        EXPECT_EQ(std::memcmp((*outputs)[i].data.data(), want.data_ptr(), want.nbytes()), 0)
            << "output " << i << " optimize=" << optimize << " share=" << share;
      }
    }
  }
}

}  // namespace
}  // namespace infera
