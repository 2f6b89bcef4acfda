#include "tools/analyze/search.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

namespace infera::analyze {
namespace {

using ::testing::HasSubstr;

int Int(const ConfigPoint& p, const std::string& key, int otherwise) {
  auto it = p.find(key);
  if (it == p.end() || it->second == "off") return otherwise;
  return std::atoi(it->second.c_str());
}

// A fake server: throughput grows with instances up to `useful_instances`, batching
// multiplies it up to `useful_batch`, queue delay helps most at `best_delay_us`; p99 is
// a function of the same. The search is the logic under test.
struct FakeModel {
  int useful_instances = 3;
  int useful_batch = 4;
  int best_delay_us = 400;
  double p99_per_batch_ms = 1;
  std::string refuse;  // a label whose load fails
  std::vector<std::string> measured;

  PointResult operator()(const ConfigPoint& p) {
    measured.push_back(DescribePoint(p, Dimensions()));
    PointResult r;
    if (!refuse.empty() && measured.back() == refuse) {
      r.error = "load refused (HTTP 400): invalid combination";
      return r;
    }
    const int instances = Int(p, "instances", 1);
    const int batch = Int(p, "batch", 1);
    const bool batching = p.count("batch") && p.at("batch") != "off";
    const int delay = batching ? Int(p, "queue_delay_us", 0) : 0;
    double throughput = 100.0 * std::min(instances, useful_instances) * std::min(batch, useful_batch);
    if (batching) throughput *= 1.0 + 0.3 / (1.0 + std::abs(delay - best_delay_us) / 100.0);
    if (p.count("precision") && p.at("precision") == "bf16") throughput *= 1.5;
    r.loaded = true;
    r.throughput_rps = throughput;
    r.p99_ms = p99_per_batch_ms * batch + delay / 1000.0;
    r.objective_latency_ms = r.p99_ms;
    r.met = r.p99_ms <= 10;
    r.verdict = r.met ? Verdict::kMet : Verdict::kNotMet;
    r.score = r.met ? throughput : r.p99_ms;
    return r;
  }
};

SearchContext Context(int cores, int64_t max_batch) {
  SearchContext c;
  c.cores = cores;
  c.model_max_batch_size = max_batch;
  c.platform = "onnxruntime_onnx";
  c.max_queue_delay_us = 2000;
  return c;
}

const Objective kThroughput = *ParseObjective("max-throughput:p99<=10ms");

SearchResult RunFake(FakeModel& model, const SearchContext& context, const Objective& objective = kThroughput,
                 SearchOptions options = {}) {
  return RunSearch(Dimensions(), context, objective, options, [&model](const ConfigPoint& p) { return model(p); },
                   [] { return false; });
}

const MeasuredPoint& Best(const SearchResult& r) { return r.measured.at(r.best); }

TEST(SearchTest, FullGridCountsOnlyDistinctConfigs) {
  // 2 instances x (off + 3 batch sizes x 6 delays 0,100,...,1600) = 2 x 19.
  EXPECT_EQ(FullGridSize(Dimensions(), Context(2, 8)), 38);
  // No batching: instances only.
  EXPECT_EQ(FullGridSize(Dimensions(), Context(4, 0)), 4);
}

TEST(SearchTest, InstancesStopWhenTheyStopHelping) {
  FakeModel model;
  model.useful_instances = 3;
  const SearchResult r = RunFake(model, Context(8, 0));
  EXPECT_EQ(Best(r).point.at("instances"), "3");
  // 1, 2, 3 helped; 4 and 5 (patience 1) did not: the search stops instead of trying 6..8.
  EXPECT_EQ(model.measured,
            (std::vector<std::string>{"instances=1", "instances=2", "instances=3", "instances=4", "instances=5"}));
  EXPECT_TRUE(r.stop_reason.empty());
}

TEST(SearchTest, FindsBatchAndDelayWithFewerPointsThanTheGrid) {
  FakeModel model;
  model.useful_instances = 2;
  model.useful_batch = 8;
  model.best_delay_us = 400;
  const SearchResult r = RunFake(model, Context(2, 64));
  const MeasuredPoint& best = Best(r);
  EXPECT_EQ(best.point.at("instances"), "2");
  EXPECT_EQ(best.point.at("batch"), "8");
  EXPECT_EQ(best.point.at("queue_delay_us"), "400");
  EXPECT_TRUE(best.result.met);
  EXPECT_LT(static_cast<int64_t>(r.measured.size()), r.full_grid / 3)
      << r.measured.size() << " of " << r.full_grid;
}

TEST(SearchTest, PatienceLooksPastAPlateau) {
  // Batch 2 is no better than off (a plateau), batch 4 is: patience 1 finds it, 0 does not.
  struct Plateau {
    std::vector<std::string> measured;
    PointResult operator()(const ConfigPoint& p) {
      measured.push_back(DescribePoint(p, Dimensions()));
      const int batch = Int(p, "batch", 1);
      PointResult r;
      r.loaded = r.met = true;
      r.verdict = Verdict::kMet;
      r.score = r.throughput_rps = batch >= 4 ? 100.0 * batch : 100;
      return r;
    }
  };
  Plateau patient;
  SearchOptions options;
  options.max_points = 20;
  const SearchResult found = RunSearch(Dimensions(), Context(1, 8), kThroughput, options,
                                       [&](const ConfigPoint& p) { return patient(p); }, [] { return false; });
  EXPECT_EQ(found.measured.at(found.best).point.at("batch"), "8");
  Plateau hasty;
  options.patience = 0;
  const SearchResult missed = RunSearch(Dimensions(), Context(1, 8), kThroughput, options,
                                        [&](const ConfigPoint& p) { return hasty(p); }, [] { return false; });
  EXPECT_EQ(missed.measured.at(missed.best).point.at("batch"), "off");
}

TEST(SearchTest, BrokenSloStopsTheBatchDimension) {
  FakeModel model;
  model.useful_batch = 64;
  model.p99_per_batch_ms = 3;  // batch 4: 12 ms > 10 ms
  const SearchResult r = RunFake(model, Context(1, 64));
  EXPECT_EQ(Best(r).point.at("batch"), "2");
  for (const std::string& label : model.measured) {
    EXPECT_THAT(label, ::testing::Not(HasSubstr("batch=8"))) << "searched past the broken SLO";
  }
}

TEST(SearchTest, RefusedLoadIsRecordedAndSkipped) {
  FakeModel model;
  model.useful_instances = 1;
  model.useful_batch = 4;
  model.refuse = "instances=1 batch=2 queue_delay_us=0";
  const SearchResult r = RunFake(model, Context(1, 8));
  bool recorded = false;
  for (const MeasuredPoint& m : r.measured) {
    if (m.label == model.refuse) {
      recorded = true;
      EXPECT_FALSE(m.result.loaded);
      EXPECT_THAT(m.result.error, HasSubstr("invalid combination"));
    }
  }
  EXPECT_TRUE(recorded);
  // The next value of the dimension is still tried.
  EXPECT_TRUE(Best(r).result.loaded);
  EXPECT_EQ(Best(r).point.at("batch"), "4");
}

TEST(SearchTest, MaxPointsAndStopEndTheSearch) {
  FakeModel model;
  model.useful_instances = 8;
  SearchOptions options;
  options.max_points = 3;
  const SearchResult capped = RunFake(model, Context(8, 0), kThroughput, options);
  EXPECT_EQ(capped.measured.size(), 3u);
  EXPECT_THAT(capped.stop_reason, HasSubstr("--max-points 3"));

  FakeModel stopped_model;
  int calls = 0;
  const SearchResult stopped =
      RunSearch(Dimensions(), Context(8, 0), kThroughput, SearchOptions{},
                [&](const ConfigPoint& p) { return stopped_model(p); }, [&calls] { return ++calls > 2; });
  EXPECT_EQ(stopped.measured.size(), 2u);
  EXPECT_EQ(stopped.stop_reason, "stopped");
}

TEST(SearchTest, UnreachableObjectiveReportsBestEffort) {
  FakeModel model;
  model.p99_per_batch_ms = 20;  // never within 10 ms
  const SearchResult r = RunFake(model, Context(2, 8));
  ASSERT_GE(r.best, 0);
  EXPECT_FALSE(Best(r).result.met);
  EXPECT_EQ(Best(r).point.at("batch"), "off");  // the lowest latency seen
}

TEST(SearchTest, MinLatencyPicksTheLowestLatency) {
  FakeModel model;
  const Objective latency = *ParseObjective("min-latency:rate>=50");
  // For min-latency the fake's score must be latency: wrap it.
  auto measure = [&model](const ConfigPoint& p) {
    PointResult r = model(p);
    r.met = r.throughput_rps >= 50;
    r.verdict = r.met ? Verdict::kMet : Verdict::kNotMet;
    r.score = r.met ? r.p99_ms : r.throughput_rps;
    return r;
  };
  const SearchResult r = RunSearch(Dimensions(), Context(2, 8), latency, SearchOptions{}, measure, [] { return false; });
  EXPECT_EQ(Best(r).point.at("batch"), "off");  // batching only adds latency here
  EXPECT_DOUBLE_EQ(Best(r).result.p99_ms, 1);
}

TEST(SearchTest, PrecisionIsOneMoreDimensionForPytorchModels) {
  SearchContext context = Context(1, 0);
  context.precisions = {"fp32", "bf16", "int8_dynamic"};
  FakeModel other;
  RunFake(other, context);
  for (const std::string& label : other.measured) EXPECT_THAT(label, ::testing::Not(HasSubstr("precision")));

  context.platform = "pytorch_libtorch";
  FakeModel torch;
  const SearchResult r = RunFake(torch, context);
  EXPECT_EQ(Best(r).point.at("precision"), "bf16");
  EXPECT_EQ(r.full_grid, 3);
  EXPECT_EQ(r.measured.size(), 3u);
}

TEST(SearchTest, BatchDimensionNeverLowersMaxBatchSizeWithoutTheFlag) {
  // The ranker's case: max_batch_size 256. Every batch candidate keeps 256 (clients may
  // still send up to 256 rows); only the preferred batch size varies.
  inference::ModelConfig base;
  base.set_max_batch_size(256);
  const SearchContext context = Context(1, 256);
  const auto active = ActiveDimensions(Dimensions(), context);
  std::vector<std::string> batches;
  for (const auto& [d, values] : active) {
    if (d->name == "batch") batches = values;
  }
  ASSERT_EQ(batches, (std::vector<std::string>{"off", "2", "4", "8", "16", "32", "64", "128", "256"}));
  for (const std::string& b : batches) {
    auto config = ApplyPoint(base, {{"instances", "1"}, {"batch", b}}, Dimensions());
    ASSERT_TRUE(config.ok()) << b << ": " << config.status();
    EXPECT_EQ(config->max_batch_size(), 256) << b;
    if (b != "off") {
      EXPECT_THAT(config->dynamic_batching().preferred_batch_size(), ::testing::ElementsAre(std::stoi(b)));
    }
  }
  // With --allow-api-change the batch dimension sets max_batch_size too, and says why
  // that narrows the API.
  auto narrowed = ApplyPoint(base, {{"batch", "16"}}, Dimensions(), ApplyRules{true});
  ASSERT_TRUE(narrowed.ok()) << narrowed.status();
  EXPECT_EQ(narrowed->max_batch_size(), 16);
  EXPECT_THAT(NarrowsApi(base, *narrowed), HasSubstr("clients sending more than 16 rows would be refused"));
  // A 12-row maximum is a candidate of its own (no power of two).
  std::vector<std::string> twelve;
  for (const auto& [d, values] : ActiveDimensions(Dimensions(), Context(1, 12))) {
    if (d->name == "batch") twelve = values;
  }
  EXPECT_EQ(twelve, (std::vector<std::string>{"off", "2", "4", "8", "12"}));
}

TEST(SearchTest, ApplyPointRefusesANarrowerApiWithoutTheFlag) {
  // Whatever a dimension does, the result is checked: here a base whose max_batch_size
  // is below a point's value is fine (wider), a lower one is refused.
  inference::ModelConfig base;
  base.set_max_batch_size(8);
  base.add_input()->set_name("INPUT0");
  EXPECT_TRUE(ApplyPoint(base, {{"batch", "8"}}, Dimensions()).ok());
  inference::ModelConfig narrower = base;
  narrower.set_max_batch_size(4);
  EXPECT_THAT(NarrowsApi(base, narrower), HasSubstr("max_batch_size 8 -> 4"));
  inference::ModelConfig other_input = base;
  other_input.mutable_input(0)->add_dims(3);
  EXPECT_THAT(NarrowsApi(base, other_input), HasSubstr("input 'INPUT0'"));
  EXPECT_EQ(NarrowsApi(base, base), "");
}

TEST(SearchTest, SearchWithTheRealDimensionsKeepsMaxBatchSize) {
  // The whole search over a 256-row model: every measured config keeps max_batch_size.
  inference::ModelConfig base;
  base.set_max_batch_size(256);
  FakeModel model;
  model.useful_batch = 16;
  SearchOptions options;
  options.max_points = 40;
  const SearchResult r = RunSearch(Dimensions(), Context(2, 256), kThroughput, options,
                                   [&](const ConfigPoint& p) { return model(p); }, [] { return false; });
  ASSERT_GE(r.best, 0);
  for (const MeasuredPoint& m : r.measured) {
    auto config = ApplyPoint(base, m.point, Dimensions());
    ASSERT_TRUE(config.ok()) << m.label;
    EXPECT_EQ(config->max_batch_size(), 256) << m.label;
  }
}

}  // namespace
}  // namespace infera::analyze
