#include "backend/builtin/builtin_backends.h"

#include <cstring>

#include "api/float16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "google/protobuf/text_format.h"

namespace infera {
namespace {

inference::ModelConfig AddSubConfig(const std::string& type) {
  inference::ModelConfig config;
  const std::string text = "name: 'simple' backend: 'add_sub' max_batch_size: 8 "
                           "input [ { name: 'INPUT0' data_type: " + type + " dims: [4] },"
                           "        { name: 'INPUT1' data_type: " + type + " dims: [4] } ]"
                           "output [ { name: 'OUTPUT0' data_type: " + type + " dims: [4] },"
                           "         { name: 'OUTPUT1' data_type: " + type + " dims: [4] } ]";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

template <typename T>
Tensor MakeTensor(const std::string& name, DataType dtype, std::vector<T> values) {
  return Tensor{name, dtype, {1, static_cast<int64_t>(values.size())},
                Buffer::Copy(values.data(), values.size() * sizeof(T))};
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> out(t.data.size() / sizeof(T));
  std::memcpy(out.data(), t.data.data(), t.data.size());
  return out;
}

absl::StatusOr<std::vector<Tensor>> LoadAndExecute(Backend& backend, const inference::ModelConfig& config,
                                        std::vector<Tensor> inputs) {
  EXPECT_TRUE(backend.ValidateConfig(config).ok());
  ModelLoadContext context{&config, 1, {}, {}};
  auto model = backend.Load(context);
  EXPECT_TRUE(model.ok());
  auto instance = (*model)->CreateInstance(InstanceOptions{});
  EXPECT_TRUE(instance.ok());
  return (*instance)->Execute(std::move(inputs));
}

template <typename T>
void ExpectAddSub(const std::string& config_type, DataType dtype, std::vector<T> a,
                  std::vector<T> b, std::vector<T> sum, std::vector<T> diff) {
  auto backend = CreateAddSubBackend();
  auto outputs = LoadAndExecute(*backend, AddSubConfig(config_type),
                     {MakeTensor("INPUT0", dtype, a), MakeTensor("INPUT1", dtype, b)});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_EQ((*outputs)[0].name, "OUTPUT0");
  EXPECT_EQ((*outputs)[1].name, "OUTPUT1");
  EXPECT_EQ((*outputs)[0].shape, (Shape{1, static_cast<int64_t>(a.size())}));
  EXPECT_EQ(Values<T>((*outputs)[0]), sum) << config_type;
  EXPECT_EQ(Values<T>((*outputs)[1]), diff) << config_type;
}

TEST(AddSubBackendTest, EveryNumericType) {
  ExpectAddSub<int32_t>("TYPE_INT32", DataType::kInt32, {1, 2, 3, 4}, {10, 20, 30, 40},
                        {11, 22, 33, 44}, {-9, -18, -27, -36});
  ExpectAddSub<int8_t>("TYPE_INT8", DataType::kInt8, {127, -128, 0, 5}, {1, 1, -1, 5},
                       {-128, -127, -1, 10}, {126, 127, 1, 0});  // wraps
  ExpectAddSub<uint8_t>("TYPE_UINT8", DataType::kUint8, {255, 0, 7, 9}, {1, 1, 7, 2},
                        {0, 1, 14, 11}, {254, 255, 0, 7});
  ExpectAddSub<int16_t>("TYPE_INT16", DataType::kInt16, {1, 2, 3, 4}, {4, 3, 2, 1}, {5, 5, 5, 5},
                        {-3, -1, 1, 3});
  ExpectAddSub<uint16_t>("TYPE_UINT16", DataType::kUint16, {1, 2, 3, 4}, {1, 1, 1, 1},
                         {2, 3, 4, 5}, {0, 1, 2, 3});
  ExpectAddSub<uint32_t>("TYPE_UINT32", DataType::kUint32, {1, 2, 3, 4}, {1, 1, 1, 1},
                         {2, 3, 4, 5}, {0, 1, 2, 3});
  ExpectAddSub<int64_t>("TYPE_INT64", DataType::kInt64, {INT64_MAX, 2, 3, 4}, {1, 1, 1, 1},
                        {INT64_MIN, 3, 4, 5}, {INT64_MAX - 1, 1, 2, 3});
  ExpectAddSub<uint64_t>("TYPE_UINT64", DataType::kUint64, {1, 2, 3, 4}, {1, 1, 1, 1},
                         {2, 3, 4, 5}, {0, 1, 2, 3});
  ExpectAddSub<float>("TYPE_FP32", DataType::kFp32, {1.5f, 2, 3, 4}, {0.25f, 1, 1, 1},
                      {1.75f, 3, 4, 5}, {1.25f, 1, 2, 3});
  ExpectAddSub<double>("TYPE_FP64", DataType::kFp64, {1.5, 2, 3, 4}, {0.25, 1, 1, 1},
                       {1.75, 3, 4, 5}, {1.25, 1, 2, 3});
  auto h = [](float f) { return FloatToHalf(f); };
  ExpectAddSub<uint16_t>("TYPE_FP16", DataType::kFp16, {h(1.5f), h(2), h(3), h(4)},
                         {h(0.25f), h(1), h(1), h(1)}, {h(1.75f), h(3), h(4), h(5)},
                         {h(1.25f), h(1), h(2), h(3)});
  auto bf = [](float f) { return FloatToBf16(f); };
  ExpectAddSub<uint16_t>("TYPE_BF16", DataType::kBf16, {bf(1.5f), bf(2), bf(3), bf(4)},
                         {bf(0.25f), bf(1), bf(1), bf(1)}, {bf(1.75f), bf(3), bf(4), bf(5)},
                         {bf(1.25f), bf(1), bf(2), bf(3)});
}

TEST(AddSubBackendTest, ReadsUnalignedInputs) {
  std::vector<uint8_t> bytes(1 + 8 * sizeof(int32_t));
  int32_t values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  std::memcpy(bytes.data() + 1, values, sizeof(values));
  auto owner = std::make_shared<std::vector<uint8_t>>(bytes);
  Tensor a{"INPUT0", DataType::kInt32, {1, 4}, Buffer::View(owner, owner->data() + 1, 16)};
  Tensor b{"INPUT1", DataType::kInt32, {1, 4}, Buffer::View(owner, owner->data() + 17, 16)};
  auto backend = CreateAddSubBackend();
  auto outputs = LoadAndExecute(*backend, AddSubConfig("TYPE_INT32"), {a, b});
  ASSERT_TRUE(outputs.ok());
  EXPECT_EQ(Values<int32_t>((*outputs)[0]), (std::vector<int32_t>{6, 8, 10, 12}));
}

TEST(AddSubBackendTest, RejectsNonNumericAndMismatchedConfigs) {
  auto backend = CreateAddSubBackend();
  EXPECT_THAT(std::string(backend->ValidateConfig(AddSubConfig("TYPE_STRING")).message()),
              ::testing::HasSubstr("not numeric"));
  EXPECT_FALSE(backend->ValidateConfig(AddSubConfig("TYPE_BOOL")).ok());
  auto config = AddSubConfig("TYPE_INT32");
  config.mutable_output(1)->set_data_type(inference::TYPE_FP32);
  EXPECT_THAT(std::string(backend->ValidateConfig(config).message()),
              ::testing::HasSubstr("same data_type"));
  config = AddSubConfig("TYPE_INT32");
  config.mutable_input(1)->set_dims(0, 5);
  EXPECT_THAT(std::string(backend->ValidateConfig(config).message()),
              ::testing::HasSubstr("same dims"));
  config.mutable_input()->RemoveLast();
  EXPECT_THAT(std::string(backend->ValidateConfig(config).message()),
              ::testing::HasSubstr("exactly 2 inputs"));
}

TEST(IdentityBackendTest, ReturnsInputsRenamedWithoutCopy) {
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'id' backend: 'identity' "
      "input [ { name: 'IN_A' data_type: TYPE_STRING dims: [-1] },"
      "        { name: 'IN_B' data_type: TYPE_FP32 dims: [2] } ]"
      "output [ { name: 'OUT_A' data_type: TYPE_STRING dims: [-1] },"
      "         { name: 'OUT_B' data_type: TYPE_FP32 dims: [2] } ]",
      &config));
  std::string bytes;
  AppendBytesElement(bytes, "hello");
  AppendBytesElement(bytes, std::string("\0\xff", 2));
  Tensor a{"IN_A", DataType::kBytes, {2}, Buffer::FromString(std::move(bytes))};
  Tensor b = MakeTensor<float>("IN_B", DataType::kFp32, {1.0f, 2.0f});
  const uint8_t* a_data = a.data.data();
  auto backend = CreateIdentityBackend();
  auto outputs = LoadAndExecute(*backend, config, {a, b});
  ASSERT_TRUE(outputs.ok());
  EXPECT_EQ((*outputs)[0].name, "OUT_A");
  EXPECT_EQ((*outputs)[0].data.data(), a_data);  // shared, not copied
  EXPECT_EQ((*outputs)[1].name, "OUT_B");
  EXPECT_EQ(Values<float>((*outputs)[1]), (std::vector<float>{1.0f, 2.0f}));
}

TEST(IdentityBackendTest, RejectsMismatchedConfig) {
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "input [ { name: 'I' data_type: TYPE_FP32 dims: [1] } ]"
      "output [ { name: 'O' data_type: TYPE_INT32 dims: [1] } ]",
      &config));
  auto backend = CreateIdentityBackend();
  EXPECT_THAT(std::string(backend->ValidateConfig(config).message()),
              ::testing::HasSubstr("data_type"));
  config.add_output()->set_name("O2");
  EXPECT_THAT(std::string(backend->ValidateConfig(config).message()),
              ::testing::HasSubstr("as many outputs as inputs"));
}

TEST(FaultInjectionBackendTest, EchoesOrFailsAsConfigured) {
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'f' backend: 'fault_injection' "
      "input [ { name: 'I' data_type: TYPE_FP32 dims: [2] } ]"
      "output [ { name: 'O' data_type: TYPE_FP32 dims: [2] } ]"
      "parameters { key: 'failure_rate' value { string_value: '1' } }",
      &config));
  auto backend = CreateFaultInjectionBackend();
  auto always_fails = LoadAndExecute(*backend, config, {MakeTensor<float>("I", DataType::kFp32, {1, 2})});
  EXPECT_EQ(always_fails.status().code(), absl::StatusCode::kInternal);
  (*config.mutable_parameters())["failure_rate"].set_string_value("0");
  auto echoed = LoadAndExecute(*backend, config, {MakeTensor<float>("I", DataType::kFp32, {1, 2})});
  ASSERT_TRUE(echoed.ok());
  EXPECT_EQ((*echoed)[0].name, "O");
  EXPECT_EQ(Values<float>((*echoed)[0]), (std::vector<float>{1, 2}));
  (*config.mutable_parameters())["delay_ms"].set_string_value("soon");
  EXPECT_THAT(std::string(backend->ValidateConfig(config).message()),
              ::testing::HasSubstr("parameters[delay_ms]"));
  for (const char* key : {"delay_ms", "failure_rate"}) {
    for (const char* value : {"nan", "-nan", "inf"}) {
      inference::ModelConfig bad = config;
      (*bad.mutable_parameters())["delay_ms"].set_string_value("0");
      (*bad.mutable_parameters())[key].set_string_value(value);
      EXPECT_THAT(std::string(backend->ValidateConfig(bad).message()),
                  ::testing::HasSubstr(std::string("parameters[") + key + "]"))
          << key << "=" << value;
    }
  }
}

// accumulate (the sequence batcher's demo): one running sum per slot (= row), reset by
// START, untouched by rows that are not READY.
TEST(AccumulateBackendTest, KeepsARunningSumPerSlot) {
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'acc' backend: 'accumulate' max_batch_size: 3 "
      "input [ { name: 'INPUT' data_type: TYPE_INT32 dims: [1] } ] "
      "output [ { name: 'OUTPUT' data_type: TYPE_INT32 dims: [1] } ] "
      "sequence_batching { control_input [ "
      "  { name: 'START' control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] } ] },"
      "  { name: 'READY' control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] } ] } ] }",
      &config));
  auto backend = CreateAccumulateBackend();
  ASSERT_TRUE(backend->ValidateConfig(config).ok());
  ModelLoadContext context{&config, 1, {}, {}};
  auto model = backend->Load(context);
  ASSERT_TRUE(model.ok());
  auto instance = (*model)->CreateInstance(InstanceOptions{});
  ASSERT_TRUE(instance.ok());
  auto run = [&](std::vector<int32_t> input, std::vector<int32_t> start, std::vector<int32_t> ready) {
    const int64_t rows = static_cast<int64_t>(input.size());
    std::vector<Tensor> inputs;
    for (auto [name, values] : {std::pair{"INPUT", &input}, std::pair{"START", &start}, std::pair{"READY", &ready}}) {
      inputs.push_back(Tensor{name, DataType::kInt32, {rows, 1}, Buffer::Copy(values->data(), values->size() * 4)});
    }
    auto outputs = (*instance)->Execute(std::move(inputs));
    EXPECT_TRUE(outputs.ok()) << outputs.status();
    return outputs.ok() ? Values<int32_t>((*outputs)[0]) : std::vector<int32_t>{};
  };
  EXPECT_EQ(run({5, 7}, {1, 1}, {1, 1}), (std::vector<int32_t>{5, 7}));
  EXPECT_EQ(run({1, 9, 4}, {0, 0, 1}, {1, 0, 1}), (std::vector<int32_t>{6, 0, 4}));  // slot 1 idle
  EXPECT_EQ(run({2, 1}, {0, 1}, {1, 1}), (std::vector<int32_t>{8, 1}));            // slot 1 restarts
  EXPECT_FALSE((*instance)->Execute({}).ok()) << "without its controls it is not served by the sequence batcher";
  inference::ModelConfig plain = config;
  plain.clear_sequence_batching();
  EXPECT_THAT(backend->ValidateConfig(plain).message(), ::testing::HasSubstr("needs sequence_batching"));
}

// Variable-size rows (dims [-1]): each row adds all its elements, and every output element
// is the running sum (as Triton's qa sequence models; the output has the input's shape).
TEST(AccumulateBackendTest, VariableSizeRowsAddAllTheirElements) {
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'acc' backend: 'accumulate' max_batch_size: 2 "
      "input [ { name: 'INPUT' data_type: TYPE_INT32 dims: [-1] } ] "
      "output [ { name: 'OUTPUT' data_type: TYPE_INT32 dims: [-1] } ] "
      "sequence_batching { control_input [ "
      "  { name: 'START' control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] } ] },"
      "  { name: 'READY' control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] } ] } ] }",
      &config));
  auto backend = CreateAccumulateBackend();
  ASSERT_TRUE(backend->ValidateConfig(config).ok());
  ModelLoadContext context{&config, 1, {}, {}};
  auto model = backend->Load(context);
  ASSERT_TRUE(model.ok());
  auto instance = (*model)->CreateInstance(InstanceOptions{});
  ASSERT_TRUE(instance.ok());
  auto run = [&](std::vector<int32_t> input, int64_t width, std::vector<int32_t> start) {
    const int64_t rows = static_cast<int64_t>(start.size());
    std::vector<int32_t> ready(start.size(), 1);
    std::vector<Tensor> inputs;
    inputs.push_back(Tensor{"INPUT", DataType::kInt32, {rows, width}, Buffer::Copy(input.data(), input.size() * 4)});
    inputs.push_back(Tensor{"START", DataType::kInt32, {rows, 1}, Buffer::Copy(start.data(), start.size() * 4)});
    inputs.push_back(Tensor{"READY", DataType::kInt32, {rows, 1}, Buffer::Copy(ready.data(), ready.size() * 4)});
    auto outputs = (*instance)->Execute(std::move(inputs));
    EXPECT_TRUE(outputs.ok()) << outputs.status();
    if (!outputs.ok()) return std::vector<int32_t>{};
    EXPECT_EQ((*outputs)[0].shape, (Shape{rows, width}));
    return Values<int32_t>((*outputs)[0]);
  };
  EXPECT_EQ(run({1, 1, 5, 5}, 2, {1, 1}), (std::vector<int32_t>{2, 2, 10, 10}));
  EXPECT_EQ(run({2, 2, 2, 0, 0, 1}, 3, {0, 0}), (std::vector<int32_t>{8, 8, 8, 11, 11, 11}));
  inference::ModelConfig fixed_two = config;
  fixed_two.mutable_input(0)->set_dims(0, 2);
  EXPECT_THAT(backend->ValidateConfig(fixed_two).message(), ::testing::HasSubstr("dims [1] or [-1]"));
}

// Oldest: rows are not slots; the sums are kept per CORRID, dropped at END, and bounded by
// max_candidate_sequences (least recently used first).
TEST(AccumulateBackendTest, OldestKeepsASumPerCorrelationId) {
  inference::ModelConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'acc' backend: 'accumulate' max_batch_size: 2 "
      "input [ { name: 'INPUT' data_type: TYPE_INT32 dims: [1] } ] "
      "output [ { name: 'OUTPUT' data_type: TYPE_INT32 dims: [1] } ] "
      "sequence_batching { oldest { max_candidate_sequences: 2 } control_input [ "
      "  { name: 'START' control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] } ] },"
      "  { name: 'END' control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1] } ] },"
      "  { name: 'READY' control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] } ] },"
      "  { name: 'CORRID' control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] } ] }",
      &config));
  auto backend = CreateAccumulateBackend();
  ASSERT_TRUE(backend->ValidateConfig(config).ok()) << backend->ValidateConfig(config);
  ModelLoadContext context{&config, 1, {}, {}};
  auto model = backend->Load(context);
  ASSERT_TRUE(model.ok());
  auto instance = (*model)->CreateInstance(InstanceOptions{});
  ASSERT_TRUE(instance.ok());
  // Rows: (corrid, input, start, end).
  auto run = [&](std::vector<std::tuple<uint64_t, int32_t, int32_t, int32_t>> rows) {
    std::vector<uint64_t> ids;
    std::vector<int32_t> input, start, end, ready;
    for (auto [id, x, s, e] : rows) {
      ids.push_back(id);
      input.push_back(x);
      start.push_back(s);
      end.push_back(e);
      ready.push_back(1);
    }
    const int64_t n = static_cast<int64_t>(rows.size());
    std::vector<Tensor> inputs;
    for (auto [name, values] : {std::pair{"INPUT", &input}, std::pair{"START", &start}, std::pair{"END", &end},
                                std::pair{"READY", &ready}}) {
      inputs.push_back(Tensor{name, DataType::kInt32, {n, 1}, Buffer::Copy(values->data(), values->size() * 4)});
    }
    inputs.push_back(Tensor{"CORRID", DataType::kUint64, {n, 1}, Buffer::Copy(ids.data(), ids.size() * 8)});
    auto outputs = (*instance)->Execute(std::move(inputs));
    EXPECT_TRUE(outputs.ok()) << outputs.status();
    return outputs.ok() ? Values<int32_t>((*outputs)[0]) : std::vector<int32_t>{};
  };
  EXPECT_EQ(run({{7, 5, 1, 0}, {9, 1, 1, 0}}), (std::vector<int32_t>{5, 1}));
  EXPECT_EQ(run({{9, 2, 0, 0}, {7, 3, 0, 0}}), (std::vector<int32_t>{3, 8}));  // rows swapped: keyed by id
  EXPECT_EQ(run({{7, 1, 0, 1}}), (std::vector<int32_t>{9}));                    // END drops 7
  EXPECT_EQ(run({{7, 4, 0, 0}}), (std::vector<int32_t>{4})) << "a dropped id starts from 0";
  EXPECT_EQ(run({{11, 6, 1, 0}}), (std::vector<int32_t>{6}));  // a third id: 9, least recently used, goes
  EXPECT_EQ(run({{9, 1, 0, 0}}), (std::vector<int32_t>{1}));
  inference::ModelConfig without_corrid = config;
  without_corrid.mutable_sequence_batching()->mutable_control_input()->RemoveLast();
  EXPECT_THAT(backend->ValidateConfig(without_corrid).message(),
              ::testing::HasSubstr("oldest strategy needs a CONTROL_SEQUENCE_CORRID control"));
}

}  // namespace
}  // namespace infera
