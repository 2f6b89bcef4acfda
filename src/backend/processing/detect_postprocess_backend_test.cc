#include <cmath>
#include <limits>

#include "backend/processing/postprocess_test_util.h"
#include "backend/processing/processing_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using testing::Fp32;
using ::testing::HasSubstr;
using testing::ParseConfig;
using testing::RunOnce;
using testing::Values;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::string Config(int n, int c, int m, const std::string& extra = "", int max_batch = 0) {
  const std::string N = std::to_string(n), C = std::to_string(c), M = std::to_string(m);
  return "backend: \"detect_postprocess\" max_batch_size: " + std::to_string(max_batch) +
         " input { name: \"boxes\" data_type: TYPE_FP32 dims: [" + N +
         ", 4] }"
         " input { name: \"scores\" data_type: TYPE_FP32 dims: [" +
         N + ", " + C +
         "] }"
         " output { name: \"det_boxes\" data_type: TYPE_FP32 dims: [" +
         M +
         ", 4] }"
         " output { name: \"det_scores\" data_type: TYPE_FP32 dims: [" +
         M +
         "] }"
         " output { name: \"det_classes\" data_type: TYPE_INT64 dims: [" +
         M +
         "] }"
         " output { name: \"num_detections\" data_type: TYPE_INT64 dims: [1] }"
         " parameters { key: \"max_detections\" value { string_value: \"" +
         M + "\" } } " + extra;
}

std::string Param(const std::string& key, const std::string& value) {
  return "parameters { key: \"" + key + "\" value { string_value: \"" + value + "\" } }";
}

struct Result {
  std::vector<float> boxes, scores;
  std::vector<int64_t> classes, count;
};

Result Detect(const std::string& config_text, Shape box_shape, std::vector<float> boxes,
              Shape score_shape, std::vector<float> scores) {
  auto backend = CreateDetectPostprocessBackend();
  const auto config = ParseConfig(config_text);
  std::vector<Tensor> inputs;
  inputs.push_back(Fp32("boxes", box_shape, boxes));
  inputs.push_back(Fp32("scores", score_shape, scores));
  auto out = RunOnce(*backend, config, std::move(inputs));
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return {Values<float>((*out)[0]), Values<float>((*out)[1]), Values<int64_t>((*out)[2]),
          Values<int64_t>((*out)[3])};
}

TEST(DetectPostprocessTest, IdenticalBoxesKeepTheFirstOfEqualScores) {
  Result r = Detect(Config(3, 1, 3), {3, 4}, {0, 0, 10, 10, 0, 0, 10, 10, 0, 0, 10, 10}, {3, 1},
                    {0.9f, 0.9f, 0.95f});
  EXPECT_THAT(r.count, ElementsAre(1));
  EXPECT_THAT(r.scores, ElementsAre(0.95f, 0, 0));
  EXPECT_THAT(r.boxes, ElementsAre(0, 0, 10, 10, 0, 0, 0, 0, 0, 0, 0, 0));
  // Equal scores: the lower box index wins.
  r = Detect(Config(2, 1, 2), {2, 4}, {0, 0, 10, 10, 0, 0, 10, 10}, {2, 1}, {0.5f, 0.5f});
  EXPECT_THAT(r.count, ElementsAre(1));
}

TEST(DetectPostprocessTest, IouExactlyAtTheThresholdDoesNotSuppress) {
  // [0,0,3,1] and [1,0,4,1]: intersection 2, union 4, IoU exactly 0.5.
  const std::vector<float> boxes = {0, 0, 3, 1, 1, 0, 4, 1};
  Result r =
      Detect(Config(2, 1, 4, Param("iou_threshold", "0.5")), {2, 4}, boxes, {2, 1}, {0.9f, 0.8f});
  EXPECT_THAT(r.count, ElementsAre(2));
  r = Detect(Config(2, 1, 4, Param("iou_threshold", "0.49")), {2, 4}, boxes, {2, 1}, {0.9f, 0.8f});
  EXPECT_THAT(r.count, ElementsAre(1));
}

TEST(DetectPostprocessTest, NestedBoxes) {
  // A small box inside a big one: IoU = 4/100, kept at 0.45, suppressed at 0.01.
  const std::vector<float> boxes = {0, 0, 10, 10, 2, 2, 4, 4};
  Result r = Detect(Config(2, 1, 2), {2, 4}, boxes, {2, 1}, {0.6f, 0.9f});
  EXPECT_THAT(r.count, ElementsAre(2));
  EXPECT_THAT(r.scores, ElementsAre(0.9f, 0.6f));
  r = Detect(Config(2, 1, 2, Param("iou_threshold", "0.01")), {2, 4}, boxes, {2, 1}, {0.6f, 0.9f});
  EXPECT_THAT(r.count, ElementsAre(1));
  EXPECT_THAT(r.boxes, ElementsAre(2, 2, 4, 4, 0, 0, 0, 0));
}

TEST(DetectPostprocessTest, PerClassVersusClassAgnostic) {
  // Two identical boxes, one per class; box 0 also scores for class 1.
  const std::vector<float> boxes = {0, 0, 10, 10, 0, 0, 10, 10};
  const std::vector<float> scores = {0.9f, 0.3f, 0.1f, 0.8f};
  Result r = Detect(Config(2, 2, 4), {2, 4}, boxes, {2, 2}, scores);
  EXPECT_THAT(r.count, ElementsAre(2));
  EXPECT_THAT(r.classes, ElementsAre(0, 1, 0, 0));
  EXPECT_THAT(r.scores, ElementsAre(0.9f, 0.8f, 0, 0));
  r = Detect(Config(2, 2, 4, Param("class_agnostic", "true")), {2, 4}, boxes, {2, 2}, scores);
  EXPECT_THAT(r.count, ElementsAre(1));
  EXPECT_THAT(r.classes, ElementsAre(0, 0, 0, 0));
}

TEST(DetectPostprocessTest, PerClassModeKeepsOneBoxForTwoClasses) {
  Result r = Detect(Config(1, 2, 4), {1, 4}, {0, 0, 1, 1}, {1, 2}, {0.5f, 0.7f});
  EXPECT_THAT(r.count, ElementsAre(2));
  EXPECT_THAT(r.classes, ElementsAre(1, 0, 0, 0));
}

TEST(DetectPostprocessTest, ThresholdNanAndInfinity) {
  // Score exactly at the threshold passes; NaN never; +inf ranks first.
  const std::vector<float> boxes = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};
  Result r = Detect(Config(4, 1, 4), {4, 4}, boxes, {4, 1}, {0.25f, kNan, 0.2f, kInf});
  EXPECT_THAT(r.count, ElementsAre(2));
  EXPECT_THAT(r.scores, ElementsAre(kInf, 0.25f, 0, 0));
  // All below the threshold: nothing, all zero.
  r = Detect(Config(4, 1, 4), {4, 4}, boxes, {4, 1}, {0.1f, 0.1f, 0.1f, 0.1f});
  EXPECT_THAT(r.count, ElementsAre(0));
  EXPECT_THAT(r.scores, ElementsAre(0, 0, 0, 0));
}

TEST(DetectPostprocessTest, DegenerateAndNonFiniteBoxes) {
  // Zero-area and inverted boxes neither suppress nor are suppressed; a NaN box is dropped.
  const std::vector<float> boxes = {0, 0, 10,   10, 5, 5, 5, 9, 8,    8,
                                    2, 2, kNan, 0,  1, 1, 0, 0, kInf, 1};
  Result r = Detect(Config(5, 1, 5), {5, 4}, boxes, {5, 1}, {0.5f, 0.9f, 0.8f, 0.99f, 0.98f});
  EXPECT_THAT(r.count, ElementsAre(3));
  EXPECT_THAT(r.scores, ElementsAre(0.9f, 0.8f, 0.5f, 0, 0));
}

TEST(DetectPostprocessTest, MaxDetectionsKeepsTheBest) {
  std::vector<float> boxes, scores;
  for (int i = 0; i < 6; ++i) {
    boxes.insert(boxes.end(), {float(10 * i), 0, float(10 * i + 5), 5});
    scores.push_back(0.3f + 0.1f * i);
  }
  Result r = Detect(Config(6, 1, 3), {6, 4}, boxes, {6, 1}, scores);
  EXPECT_THAT(r.count, ElementsAre(3));
  EXPECT_THAT(r.boxes, ElementsAre(50, 0, 55, 5, 40, 0, 45, 5, 30, 0, 35, 5));
}

TEST(DetectPostprocessTest, CxcywhDecodes) {
  Result r =
      Detect(Config(1, 1, 1, Param("box_format", "cxcywh")), {1, 4}, {5, 5, 4, 2}, {1, 1}, {0.9f});
  EXPECT_THAT(r.boxes, ElementsAre(3, 4, 7, 6));
}

TEST(DetectPostprocessTest, BatchRowsAreIndependent) {
  Result r = Detect(Config(2, 1, 2, "", 8), {2, 2, 4},
                    {0, 0, 10, 10, 0, 0, 10, 10, 0, 0, 10, 10, 20, 20, 30, 30}, {2, 2, 1},
                    {0.9f, 0.8f, 0.9f, 0.8f});
  EXPECT_THAT(r.count, ElementsAre(1, 2));
  EXPECT_THAT(r.scores, ElementsAre(0.9f, 0, 0.9f, 0.8f));
}

TEST(DetectPostprocessTest, ConfigErrorsNameTheProblem) {
  auto backend = CreateDetectPostprocessBackend();
  auto check = [&](const std::string& text, const std::string& needle) {
    absl::Status status = backend->ValidateConfig(ParseConfig(text));
    EXPECT_FALSE(status.ok()) << text;
    EXPECT_THAT(status.message(), HasSubstr(needle)) << text;
  };
  check(Config(200000, 1, 10), "over the limit");
  check(Config(100000, 101, 10), "over the limit");
  check(Config(10, 2, 5, Param("iou_threshold", "1.5")), "parameters[iou_threshold] '1.5'");
  check(Config(10, 2, 5, Param("box_format", "yxyx")), "must be one of xyxy, cxcywh");
  check(Config(10, 2, 5, Param("score_threshold", "nan")), "parameters[score_threshold]");
  auto text = Config(10, 2, 5);
  const std::string five = "string_value: \"5\"";
  text.replace(text.find(five), five.size(), "string_value: \"6\"");
  check(text, "output 'det_boxes' has dims [5,4]");
  text = Config(10, 2, 5);
  text.replace(text.find("dims: [10, 2]"), 13, "dims: [9, 2]");
  check(text, "'scores' has 9 rows");
  text = Config(10, 2, 5);
  text.replace(text.find("dims: [10, 4]"), 13, "dims: [-1, 4]");
  check(text, "has dims [-1,4]");
}

TEST(DetectPostprocessTest, WrongRuntimeShapeIsInvalidArgument) {
  auto backend = CreateDetectPostprocessBackend();
  const auto config = ParseConfig(Config(2, 1, 2));
  std::vector<Tensor> inputs;
  inputs.push_back(Fp32("boxes", {1, 4}, {0, 0, 1, 1}));
  inputs.push_back(Fp32("scores", {2, 1}, {0.5f, 0.5f}));
  auto out = RunOnce(*backend, config, std::move(inputs));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace infera
