#include "ensemble/ensemble_plan.h"

#include <map>

#include "ensemble/ensemble_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::infera::testing::BinaryModel;
using ::infera::testing::Config;
using ::infera::testing::kDiamond;
using ::infera::testing::UnaryModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class EnsemblePlanTest : public ::testing::Test {
 protected:
  EnsemblePlanTest() {
    for (const char* name : {"a", "b", "c"}) models_[name] = UnaryModel(name);
    models_["d"] = BinaryModel("d");
  }
  StepConfigLookup Lookup() {
    return [this](const std::string& name,
                  std::optional<int64_t>) -> absl::StatusOr<const inference::ModelConfig*> {
      auto it = models_.find(name);
      if (it == models_.end()) return absl::NotFoundError("unknown model '" + name + "'");
      return &it->second;
    };
  }
  absl::Status Build(const std::string& text) { return BuildEnsemblePlan(Config(text), Lookup()).status(); }

  std::map<std::string, inference::ModelConfig> models_;
};

TEST_F(EnsemblePlanTest, DiamondPlan) {
  auto plan = BuildEnsemblePlan(Config(kDiamond), Lookup());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->steps.size(), 4u);
  EXPECT_THAT(plan->consumers["X"], ElementsAre(0));
  EXPECT_THAT(plan->consumers["ta"], ElementsAre(1, 2));
  EXPECT_THAT(plan->consumers["tb"], ElementsAre(3));
  EXPECT_EQ(plan->steps[3].num_distinct_inputs, 2);
  EXPECT_THAT(plan->outputs, ElementsAre("Y"));
  EXPECT_TRUE(plan->initial_steps.empty());
}

TEST_F(EnsemblePlanTest, ModelVersionMinusOneOrUnsetIsNewestElsePinned) {
  std::string text = kDiamond;
  text.replace(text.find("model_name: \"b\" model_version: -1"), 33, "model_name: \"b\" model_version: 3");
  text.replace(text.find("model_name: \"c\" model_version: -1"), 33, "model_name: \"c\"");
  auto plan = BuildEnsemblePlan(Config(text), Lookup());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->steps[0].model_version, std::nullopt);
  EXPECT_EQ(plan->steps[1].model_version, 3);
  EXPECT_EQ(plan->steps[2].model_version, std::nullopt);
}

TEST_F(EnsemblePlanTest, UnknownStepModelNamesTheStep) {
  std::string text = kDiamond;
  text.replace(text.find("model_name: \"c\""), 15, "model_name: \"zz\"");
  absl::Status s = Build(text);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);  // the lookup said NotFound
  EXPECT_THAT(s.message(), HasSubstr("ensemble 'diamond' step 2 (model 'zz'): unknown model 'zz'"));
}

TEST_F(EnsemblePlanTest, UnmappedStepInput) {
  std::string text = kDiamond;
  text.replace(text.find("input_map { key: \"B\" value: \"tc\" }"), 34, "");
  absl::Status s = Build(text);
  EXPECT_THAT(s.message(), HasSubstr("step 3 (model 'd'): input 'B' is not mapped"));
}

TEST_F(EnsemblePlanTest, InputMapKeyNotAnInput) {
  std::string text = kDiamond;
  text.replace(text.find("key: \"B\" value: \"tc\""), 8, "key: \"Q\"");
  EXPECT_THAT(Build(text).message(), HasSubstr("step 3 (model 'd'): input_map key 'Q' is not an input"));
}

TEST_F(EnsemblePlanTest, OutputMapKeyNotAnOutput) {
  std::string text = kDiamond;
  text.replace(text.find("key: \"OUT\" value: \"tc\""), 10, "key: \"NOPE\"");
  EXPECT_THAT(Build(text).message(), HasSubstr("step 2 (model 'c'): output_map key 'NOPE' is not an output"));
}

TEST_F(EnsemblePlanTest, TensorProducedTwice) {
  std::string text = kDiamond;
  text.replace(text.find("value: \"tc\" }"), 11, "value: \"tb\"");
  absl::Status s = Build(text);
  EXPECT_THAT(s.message(), HasSubstr("step 2 (model 'c'): output 'OUT' writes tensor 'tb', which step 1 already"));
}

TEST_F(EnsemblePlanTest, StepOutputOverwritesEnsembleInput) {
  std::string text = kDiamond;
  text.replace(text.find("value: \"tc\" }"), 11, "value: \"X\"");
  EXPECT_THAT(Build(text).message(), HasSubstr("which is an ensemble input"));
}

TEST_F(EnsemblePlanTest, TensorNeverProduced) {
  std::string text = kDiamond;
  text.replace(text.find("key: \"B\" value: \"tc\""), 20, "key: \"B\" value: \"ghost\"");
  EXPECT_THAT(Build(text).message(),
              HasSubstr("step 3 (model 'd'): input 'B' reads tensor 'ghost', which no step and no ensemble input"));
}

TEST_F(EnsemblePlanTest, EnsembleOutputNotProduced) {
  std::string text = kDiamond;
  text.replace(text.find("output [{ name: \"Y\""), 19, "output [{ name: \"Z\"");
  EXPECT_THAT(Build(text).message(), HasSubstr("ensemble 'diamond': output 'Z' is not produced by any step"));
}

TEST_F(EnsemblePlanTest, UnusedEnsembleInput) {
  std::string text = kDiamond;
  text.replace(text.find("input [{ name: \"X\" data_type: TYPE_INT32 dims: [4] }]"), 53,
               "input [{ name: \"X\" data_type: TYPE_INT32 dims: [4] }, { name: \"W\" data_type: TYPE_INT32 dims: [4] }]");
  EXPECT_THAT(Build(text).message(), HasSubstr("input 'W' is not used by any step"));
}

TEST_F(EnsemblePlanTest, CycleNamesAStepOnIt) {
  // b reads tc (from c), c reads tb (from b).
  std::string text = kDiamond;
  text.replace(text.find("key: \"IN\" value: \"ta\" } output_map { key: \"OUT\" value: \"tb\""), 21,
               "key: \"IN\" value: \"tc\"");
  text.replace(text.find("key: \"IN\" value: \"ta\" } output_map { key: \"OUT\" value: \"tc\""), 21,
               "key: \"IN\" value: \"tb\"");
  absl::Status s = Build(text);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("step 1 (model 'b'): is on a cycle"));
}

TEST_F(EnsemblePlanTest, SelfLoop) {
  const char* text = R"pb(
    name: "loop" platform: "ensemble"
    input [{ name: "X" data_type: TYPE_INT32 dims: [4] }]
    output [{ name: "Y" data_type: TYPE_INT32 dims: [4] }]
    ensemble_scheduling { step [
      { model_name: "a" input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "Y" } },
      { model_name: "d" input_map { key: "A" value: "X" } input_map { key: "B" value: "self" }
        output_map { key: "OUT" value: "self" } }
    ] })pb";
  EXPECT_THAT(Build(text).message(), HasSubstr("step 1 (model 'd'): is on a cycle"));
}

TEST_F(EnsemblePlanTest, DtypeMismatchBetweenProducerAndConsumer) {
  models_["c"] = UnaryModel("c", 0, "TYPE_FP32");
  absl::Status s = Build(kDiamond);
  EXPECT_THAT(s.message(), HasSubstr("tensor 'ta' is TYPE_INT32 [4] from ensemble 'diamond' step 0 (model 'a') "
                                     "output 'OUT' but ensemble 'diamond' step 2 (model 'c') input 'IN' expects "
                                     "TYPE_FP32 [4]"));
}

TEST_F(EnsemblePlanTest, DimsMismatch) {
  models_["b"] = Config("name: 'b' input [{ name: 'IN' data_type: TYPE_INT32 dims: [5] }]"
                        " output [{ name: 'OUT' data_type: TYPE_INT32 dims: [4] }]");
  EXPECT_THAT(Build(kDiamond).message(), HasSubstr("step 1 (model 'b') input 'IN' expects TYPE_INT32 [5]"));
}

TEST_F(EnsemblePlanTest, VariableDimsAgree) {
  models_["b"] = Config("name: 'b' input [{ name: 'IN' data_type: TYPE_INT32 dims: [-1] }]"
                        " output [{ name: 'OUT' data_type: TYPE_INT32 dims: [4] }]");
  EXPECT_TRUE(Build(kDiamond).ok());
}

TEST_F(EnsemblePlanTest, BatchingEnsembleNeedsBatchingSteps) {
  std::string text = std::string(kDiamond) + " max_batch_size: 4";
  absl::Status s = Build(text);
  EXPECT_THAT(s.message(), HasSubstr("step 0 (model 'a'): max_batch_size 0 is less than the ensemble's 4"));
  for (const char* name : {"a", "b", "c"}) models_[name] = UnaryModel(name, 8);
  models_["d"] = BinaryModel("d");
  models_["d"].set_max_batch_size(2);
  EXPECT_THAT(Build(text).message(), HasSubstr("step 3 (model 'd'): max_batch_size 2 is less than"));
  models_["d"].set_max_batch_size(4);
  EXPECT_TRUE(Build(text).ok());
}

TEST_F(EnsemblePlanTest, NonBatchingEnsembleComparesFullShapes) {
  // A batching step's full shape is [-1, 4]: the ensemble's [4] does not fit, [2, 4] does.
  models_["a"] = UnaryModel("a", 8);
  EXPECT_THAT(Build(kDiamond).message(), HasSubstr("expects TYPE_INT32 [-1, 4]"));
}

TEST_F(EnsemblePlanTest, OptionalEnsembleInputRefused) {
  std::string text = kDiamond;
  text.replace(text.find("dims: [4] }]"), 12, "dims: [4] optional: true }]");
  EXPECT_THAT(Build(text).message(), HasSubstr("input 'X' is optional"));
}

}  // namespace
}  // namespace infera
