#include "ensemble/ensemble_nesting.h"

#include <map>

#include "common/str_cat.h"
#include "ensemble/ensemble_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "repository/config_limits.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A graph given as a map (models absent from it are leaves), counting lookups.
struct FakeModels {
  std::map<std::string, std::vector<std::string>> steps;
  std::map<std::string, int> lookups;

  NestingLookup Lookup() {
    return [this](const std::string& name) -> std::optional<std::vector<std::string>> {
      ++lookups[name];
      auto it = steps.find(name);
      if (it == steps.end()) return std::nullopt;
      return it->second;
    };
  }
};

// e0 -> e1 -> ... -> e{n-1} -> "leaf".
FakeModels Chain(int n) {
  FakeModels models;
  for (int i = 0; i < n; ++i) models.steps[StrCat("e", i)] = {i + 1 < n ? StrCat("e", i + 1) : "leaf"};
  return models;
}

TEST(EnsembleStepNamesTest, DistinctSortedAndEmptyForOtherModels) {
  inference::ModelConfig ensemble = testing::Config(
      "platform: 'ensemble' ensemble_scheduling { step [ { model_name: 'b' }, { model_name: 'a' }, "
      "{ model_name: 'b' } ] }");
  EXPECT_THAT(EnsembleStepNames(ensemble), ElementsAre("a", "b"));
  EXPECT_TRUE(EnsembleStepNames(testing::UnaryModel("u")).empty());
}

TEST(NestingWalkTest, AChainAtTheBoundLoadsInOrderFromTheBottom) {
  FakeModels models = Chain(kMaxEnsembleDepth);
  NestingWalk walk(kMaxEnsembleDepth, models.Lookup());
  ASSERT_TRUE(walk.Walk("e0").ok());
  EXPECT_EQ(walk.Height("e0"), kMaxEnsembleDepth);
  EXPECT_EQ(walk.Height("leaf"), 0);
  ASSERT_EQ(walk.order().size(), static_cast<size_t>(kMaxEnsembleDepth + 1));
  EXPECT_EQ(walk.order().front(), "leaf");
  EXPECT_EQ(walk.order().back(), "e0");
  EXPECT_EQ(walk.DeepestChain("e0").size(), static_cast<size_t>(kMaxEnsembleDepth));
}

TEST(NestingWalkTest, AChainOf3000IsRefusedAfterReadingOnlyTheBoundPlusOne) {
  FakeModels models = Chain(3000);
  NestingWalk walk(kMaxEnsembleDepth, models.Lookup());
  absl::Status status = walk.Walk("e0");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(StrCat("ensembles nest more than ", kMaxEnsembleDepth, " deep: e0 -> e1")));
  EXPECT_THAT(status.message(), HasSubstr(StrCat("-> e", kMaxEnsembleDepth)));
  EXPECT_EQ(models.lookups.size(), static_cast<size_t>(kMaxEnsembleDepth + 1));
}

TEST(NestingWalkTest, CyclesAreRefusedNamingThem) {
  FakeModels models;
  models.steps = {{"p", {"q"}}, {"q", {"leaf", "p"}}, {"self", {"self"}}};
  absl::Status cycle = NestingWalk(kMaxEnsembleDepth, models.Lookup()).Walk("p");
  EXPECT_EQ(cycle.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cycle.message(), HasSubstr("ensembles nest in a cycle: p -> q -> p"));
  EXPECT_THAT(NestingWalk(kMaxEnsembleDepth, models.Lookup()).Walk("self").message(),
              HasSubstr("cycle: self -> self"));
}

TEST(NestingWalkTest, SharedModelsAreLookedUpOnceSoWideGraphsAreLinear) {
  // 15 layers of two ensembles, each naming both of the next layer: 2^15 paths.
  FakeModels models;
  for (int layer = 0; layer < 15; ++layer) {
    for (const char* side : {"l", "r"}) {
      models.steps[StrCat(side, layer)] =
          layer + 1 < 15 ? std::vector<std::string>{StrCat("l", layer + 1), StrCat("r", layer + 1)}
                         : std::vector<std::string>{"leaf"};
    }
  }
  models.steps["top"] = {"l0", "r0"};
  NestingWalk walk(kMaxEnsembleDepth, models.Lookup());
  ASSERT_TRUE(walk.Walk("top").ok());
  EXPECT_EQ(walk.Height("top"), 16);
  for (const auto& [name, count] : models.lookups) EXPECT_EQ(count, 1) << name;
  EXPECT_EQ(walk.order().back(), "top");
}

TEST(NestingWalkTest, AChainTooDeepThroughAModelWalkedBeforeIsRefused) {
  // top -> a -> e0 (14 deep) is walked first: 16 in all. Then top -> b -> m -> e0 reaches
  // the walked e0 again: 3 + 14 > 16.
  FakeModels models = Chain(14);
  models.steps["top"] = {"a", "b"};
  models.steps["a"] = {"e0"};
  models.steps["b"] = {"m"};
  models.steps["m"] = {"e0"};
  NestingWalk walk(kMaxEnsembleDepth, models.Lookup());
  absl::Status status = walk.Walk("top");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("top -> b -> m -> e0 -> e1"));
  EXPECT_EQ(models.lookups["e0"], 1);
  FakeModels again = models;
  EXPECT_TRUE(NestingWalk(kMaxEnsembleDepth, again.Lookup()).Walk("b").ok());
}

TEST(EnsembleGraphTest, ACycleThroughServingEnsemblesIsRefused) {
  EnsembleGraph graph;
  graph.Set("q", {"p"});  // q serves with an override whose step is p
  absl::Status status = graph.CheckReplace("p", {"q"}, kMaxEnsembleDepth);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("cycle: p -> q -> p"));
  EXPECT_TRUE(graph.CheckReplace("p", {"leaf"}, kMaxEnsembleDepth).ok());
  EXPECT_TRUE(graph.CheckReplace("p", {}, kMaxEnsembleDepth).ok());
}

TEST(EnsembleGraphTest, TheEnsemblesAboveAModelCountTowardsTheBound) {
  // a0 -> a1 -> ... -> a9 -> x (x a leaf now); y0 -> ... -> y5 -> leaf.
  EnsembleGraph graph;
  for (int i = 0; i < 10; ++i) graph.Set(StrCat("a", i), {i + 1 < 10 ? StrCat("a", i + 1) : "x"});
  for (int i = 0; i < 6; ++i) graph.Set(StrCat("y", i), {i + 1 < 6 ? StrCat("y", i + 1) : "leaf"});
  // x -> y0: 10 above + x + 6 below = 17.
  absl::Status status = graph.CheckReplace("x", {"y0"}, kMaxEnsembleDepth);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("a0 -> a1"));
  EXPECT_THAT(status.message(), HasSubstr("a9 -> x -> y0 -> y1"));
  // x -> y1: 16, allowed.
  EXPECT_TRUE(graph.CheckReplace("x", {"y1"}, kMaxEnsembleDepth).ok());
  // Once a9 no longer names x, x may nest deeper.
  graph.Set("a9", {"leaf"});
  EXPECT_TRUE(graph.CheckReplace("x", {"y0"}, kMaxEnsembleDepth).ok());
}

TEST(EnsembleGraphTest, SetReplacesTheReverseEdges) {
  EnsembleGraph graph;
  graph.Set("outer", {"x", "x", "other"});
  ASSERT_NE(graph.Steps("outer"), nullptr);
  EXPECT_THAT(*graph.Steps("outer"), ElementsAre("other", "x"));
  EXPECT_FALSE(graph.CheckReplace("x", {"outer"}, kMaxEnsembleDepth).ok());
  graph.Set("outer", {});
  EXPECT_EQ(graph.Steps("outer"), nullptr);
  EXPECT_TRUE(graph.CheckReplace("x", {"outer"}, kMaxEnsembleDepth).ok());
}

TEST(EnsembleGraphTest, ManyUsersAreEachVisitedOnce) {
  // 200 ensembles use "base"; each of them is used by "top". Linear, and depth 3.
  EnsembleGraph graph;
  std::vector<std::string> middle;
  for (int i = 0; i < 200; ++i) {
    middle.push_back(StrCat("m", i));
    graph.Set(middle.back(), {"base"});
  }
  graph.Set("top", middle);
  EXPECT_TRUE(graph.CheckReplace("base", {"leaf"}, 3).ok());
  EXPECT_THAT(graph.CheckReplace("base", {"leaf"}, 2).message(), HasSubstr("top -> m"));
}

}  // namespace
}  // namespace infera
