#include "manager/classification.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "api/float16.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
Tensor Make(DataType type, Shape shape, const std::vector<T>& values) {
  return Tensor{"OUT", type, std::move(shape), Buffer::Copy(values.data(), values.size() * sizeof(T))};
}

std::vector<std::string> Strings(const Tensor& t) {
  EXPECT_EQ(t.dtype, DataType::kBytes);
  auto elements = SplitBytesElements(t.data.AsStringView());
  EXPECT_TRUE(elements.ok());
  return {elements->begin(), elements->end()};
}

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  return config;
}

TEST(ClassifyTest, TopKFormatsFloatsAsTritonDoes) {
  auto r = Classify(Make<float>(DataType::kFp32, {4}, {0.25f, 12.0f, -1.5f, 0.75f}), 2, false, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->shape, ElementsAre(2));
  EXPECT_THAT(Strings(*r), ElementsAre("12.000000:1", "0.750000:3"));
}

TEST(ClassifyTest, LabelsAreAppendedWhenPresentAndNonEmpty) {
  const std::vector<std::string> labels = {"cat", "", "dog"};  // index 3 has no line
  auto r = Classify(Make<double>(DataType::kFp64, {4}, {0.1, 0.4, 0.3, 0.2}), 4, false, labels);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Strings(*r), ElementsAre("0.400000:1", "0.300000:2:dog", "0.200000:3", "0.100000:0:cat"));
}

TEST(ClassifyTest, KLargerThanClassesReturnsAll) {
  auto r = Classify(Make<int32_t>(DataType::kInt32, {3}, {5, -7, 12}), 100, false, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->shape, ElementsAre(3));
  EXPECT_THAT(Strings(*r), ElementsAre("12:2", "5:0", "-7:1"));  // integers print as integers
}

TEST(ClassifyTest, BatchedRowsAreClassifiedEachOnItsOwn) {
  // [2, 2, 2]: each row has 4 classes (the dims after the batch are flattened).
  auto r = Classify(Make<float>(DataType::kFp32, {2, 2, 2}, {1, 4, 3, 2, 8, 6, 7, 5}), 2, true,
                    {"a", "b", "c", "d"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->shape, ElementsAre(2, 2));
  EXPECT_THAT(Strings(*r), ElementsAre("4.000000:1:b", "3.000000:2:c", "8.000000:0:a", "7.000000:2:c"));
}

TEST(ClassifyTest, TiesKeepIndexOrderAndNanRanksLast) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r = Classify(Make<float>(DataType::kFp32, {5}, {nan, 1.0f, 2.0f, 1.0f, -INFINITY}), 5, false, {});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<std::string> s = Strings(*r);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0], "2.000000:2");
  EXPECT_EQ(s[1], "1.000000:1");
  EXPECT_EQ(s[2], "1.000000:3");
  EXPECT_EQ(s[3], "-inf:4");
  EXPECT_THAT(s[4], HasSubstr("nan:0"));
}

TEST(ClassifyTest, WideIntegersCompareExactly) {
  // Both round to the same double; the order must still be exact.
  auto r = Classify(Make<int64_t>(DataType::kInt64, {2}, {INT64_MAX - 1, INT64_MAX}), 2, false, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Strings(*r), ElementsAre("9223372036854775807:1", "9223372036854775806:0"));
  auto u = Classify(Make<uint8_t>(DataType::kUint8, {3}, {7, 255, 0}), 1, false, {});
  ASSERT_TRUE(u.ok());
  EXPECT_THAT(Strings(*u), ElementsAre("255:1"));
}

TEST(ClassifyTest, HalfPrecisionIsFormattedAsFloat) {
  auto r = Classify(Make<uint16_t>(DataType::kFp16, {2}, {FloatToHalf(0.5f), FloatToHalf(2.0f)}), 1,
                    false, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Strings(*r), ElementsAre("2.000000:1"));
}

TEST(ClassifyTest, EmptyRowsGiveEmptyClasses) {
  auto r = Classify(Make<float>(DataType::kFp32, {0, 3}, {}), 2, true, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->shape, ElementsAre(0, 2));
  auto none = Classify(Make<float>(DataType::kFp32, {2, 0}, {}), 2, true, {});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(none->shape, ElementsAre(2, 0));
}

TEST(ClassifyTest, RejectsNonNumericAndMalformed) {
  std::string bytes;
  AppendBytesElement(bytes, "x");
  auto b = Classify(Tensor{"S", DataType::kBytes, {1}, Buffer::FromString(std::move(bytes))}, 1, false, {});
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  Tensor bad = Make<float>(DataType::kFp32, {3}, {1, 2});
  EXPECT_EQ(Classify(bad, 1, false, {}).status().code(), absl::StatusCode::kInternal);
}

constexpr char kConfig[] = R"(name: "m" max_batch_size: 4
  output { name: "PROB" data_type: TYPE_FP32 dims: [ 3 ] }
  output { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] })";

std::string ParameterError(Parameters parameters, const std::string& output = "PROB") {
  auto k = CheckRequestedOutputParameters(Config(kConfig), RequestedOutput{output, std::move(parameters)});
  if (k.ok()) return "<ok>";
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(k.status().message());
}

TEST(CheckRequestedOutputParametersTest, KnownNamesAndClassificationCount) {
  auto k = CheckRequestedOutputParameters(
      Config(kConfig), RequestedOutput{"PROB", {{"classification", int64_t{3}}, {"binary_data", true}}});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(*k, 3);
  auto none = CheckRequestedOutputParameters(
      Config(kConfig), RequestedOutput{"PROB", {{"shared_memory_region", std::string("r")},
                                                {"shared_memory_byte_size", int64_t{12}},
                                                {"shared_memory_offset", int64_t{0}}}});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, 0);

  EXPECT_THAT(ParameterError({{"clasification", int64_t{3}}}),
              HasSubstr("output 'PROB' has unknown parameter 'clasification'"));
  EXPECT_THAT(ParameterError({{"classification", int64_t{0}}}), HasSubstr("must be an integer >= 1"));
  EXPECT_THAT(ParameterError({{"classification", 2.5}}), HasSubstr("must be an integer >= 1"));
  EXPECT_THAT(ParameterError({{"classification", std::string("2")}}), HasSubstr("must be an integer"));
  EXPECT_THAT(ParameterError({{"classification", int64_t{1}}}, "TEXT"),
              HasSubstr("output 'TEXT' is BYTES; classification needs a numeric output"));
}

TEST(LoadOutputLabelsTest, ReadsLabelFilesAndNamesMissingOnes) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "classification_labels_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "labels.txt", std::ios::binary) << "cat\r\ndog\n\nbird";
  }
  auto labels = LoadOutputLabels(
      Config(R"(name: "m" output { name: "P" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" }
                output { name: "Q" data_type: TYPE_FP32 dims: [ 4 ] })"),
      dir);
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_THAT(labels->at("P"), ElementsAre("cat", "dog", "", "bird"));
  EXPECT_EQ(labels->count("Q"), 0u);

  auto missing = LoadOutputLabels(
      Config(R"(name: "m" output { name: "P" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "nope.txt" })"),
      dir);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("output 'P' label_filename 'nope.txt'"));

  auto escaping = LoadOutputLabels(
      Config(R"(name: "m" output { name: "P" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "../x" })"),
      dir);
  EXPECT_THAT(escaping.status().message(), HasSubstr("must name a file inside the model directory"));
  std::filesystem::remove_all(dir);
}

TEST(ApplyClassificationTest, ReplacesOnlyTheOutputsThatAskForIt) {
  std::vector<Tensor> outputs;
  outputs.push_back(Make<float>(DataType::kFp32, {1, 3}, {0.2f, 0.5f, 0.3f}));
  outputs[0].name = "A";
  outputs.push_back(Make<float>(DataType::kFp32, {1, 3}, {1, 2, 3}));
  outputs[1].name = "B";
  const std::vector<RequestedOutput> requested = {{"A", {{"classification", int64_t{1}}}}, {"B", {}}};
  OutputLabels labels;
  labels["A"] = {"x", "y", "z"};
  ASSERT_TRUE(ApplyClassification(Config(R"(name: "m" max_batch_size: 2)"), labels, requested, outputs).ok());
  EXPECT_THAT(outputs[0].shape, ElementsAre(1, 1));
  EXPECT_THAT(Strings(outputs[0]), ElementsAre("0.500000:1:y"));
  EXPECT_EQ(outputs[1].dtype, DataType::kFp32);
}

}  // namespace
}  // namespace infera
