#include "diagnosis/diagnosis_rules.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::diagnosis {
namespace {

using ::testing::HasSubstr;

// A window with nothing wrong: 100 req/s, 1 of 2 instances' worth busy (25 %), server
// time 1000 us = decode 100 + queue 100 + compute 700 + encode 100.
WindowSummary Base() {
  WindowSummary w;
  w.facts = ModelFacts{0, false, 0, false};
  w.seconds = 10;
  w.requests = 1000;
  w.successes = 1000;
  w.rate_per_second = 100;
  w.mean_latency_us = 1000;
  w.concurrency = 0.1;
  w.decode = {100, 0.1, 1000};
  w.queue = {100, 0.1, 1000};
  w.compute_infer = {300, 0.3, 1000};  // below kComputeShare on its own
  w.compute_input = {50, 0.05, 1000};
  w.compute_output = {50, 0.05, 1000};
  w.encode = {100, 0.1, 1000};
  w.server_us = 700;
  w.compute_share = 0.4 / 0.8 * 0.8;  // 0.4
  w.serialisation_share = 0.2;
  w.queue.share = 0.1;
  w.write = {10, 0.01, 1000};
  w.executions = 1000;
  w.rows = 1000;
  w.mean_batch_size = 1;
  w.instances = 2;
  w.busy_seconds = 5;
  w.utilisation = 0.25;
  return w;
}

std::string ClassOf(const WindowSummary& w) { return Diagnose(w).bottleneck_class; }

// Queue wait as `share` of the server time (mean and share kept consistent).
void SetQueue(WindowSummary& w, double share) {
  w.queue.share = share;
  w.queue.mean_us = share * w.server_us;
}

TEST(DiagnosisRulesTest, BaseIsHealthy) {
  const Diagnosis d = Diagnose(Base());
  EXPECT_EQ(d.bottleneck_class, "healthy");
  EXPECT_FALSE(d.evidence.empty());
}

TEST(DiagnosisRulesTest, IdleBelowMinimumRequests) {
  WindowSummary w = Base();
  w.requests = kMinRequests - 1;
  SetQueue(w, 0.9);  // would be queueing with enough requests
  w.utilisation = 0.99;
  EXPECT_EQ(ClassOf(w), "idle");
  w.requests = kMinRequests;
  EXPECT_EQ(ClassOf(w), "queueing");
}

TEST(DiagnosisRulesTest, QueueingWhenRequestsWaitForAnInstance) {
  WindowSummary w = Base();
  w.queue.mean_us = 620;
  w.server_us = 1000;
  w.queue.share = 0.62;
  w.utilisation = 0.97;
  w.instances = 1;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "queueing");
  ASSERT_FALSE(d.actions.empty());
  // 97 % of 1 instance at 70 %: 2 instances in all, utilisation about half.
  EXPECT_THAT(d.actions[0].action, HasSubstr("add 1 instance (instance_group count 1 -> 2)"));
  EXPECT_THAT(d.actions[0].expected_effect, HasSubstr("97 % -> about 48 %"));
  EXPECT_THAT(d.actions[0].expected_effect, HasSubstr("62 %"));
  // Utilisation diluted by idle stretches of the window does not hide it.
  w.utilisation = 0.5;
  EXPECT_EQ(ClassOf(w), "queueing");
  // Borderline: just under the share is not queueing.
  w.queue.mean_us = 290;
  w.queue.share = 0.29;
  EXPECT_NE(ClassOf(w), "queueing");
  w.queue.mean_us = 300;
  w.queue.share = 0.30;
  EXPECT_EQ(ClassOf(w), "queueing");
}

// With dynamic batching, the queue wait up to max_queue_delay may be the batcher's:
// only the wait beyond it counts as waiting for an instance.
TEST(DiagnosisRulesTest, QueueWithinTheBatchingDelayIsNotQueueing) {
  WindowSummary w = Base();
  w.facts = ModelFacts{8, true, 500, false};
  w.mean_batch_size = 3;
  w.server_us = 1000;
  w.queue.mean_us = 790;  // 290 beyond the delay: 29 %
  w.queue.share = 0.79;
  EXPECT_EQ(ClassOf(w), "batching_ineffective");
  w.queue.mean_us = 800;  // 300 beyond: 30 %
  EXPECT_EQ(ClassOf(w), "queueing");
}

TEST(DiagnosisRulesTest, QueueingFromRejections) {
  WindowSummary w = Base();
  w.failures.rejected = 10;  // 1 % of 1000
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "queueing");
  EXPECT_THAT(d.actions.back().action, HasSubstr("max_queue_size"));
  w.failures.rejected = 9;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, QueueingAddsInstancesToReachSeventyPercent) {
  WindowSummary w = Base();
  SetQueue(w, 0.8);
  w.utilisation = 1.0;
  w.instances = 4;  // 4 / 0.7 = 5.7 -> 6 instances
  EXPECT_THAT(Diagnose(w).actions[0].action, HasSubstr("add 2 instances (instance_group count 4 -> 6)"));
}

TEST(DiagnosisRulesTest, ComputeBound) {
  WindowSummary w = Base();
  w.compute_share = kComputeShare;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "compute_bound");
  EXPECT_EQ(d.evidence[0].name, "compute_share");
  EXPECT_THAT(d.actions.back().action, HasSubstr("keep the instance count"));
  w.compute_share = kComputeShare - 0.01;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, ComputeBoundWithBusyInstancesSuggestsMoreForThroughput) {
  WindowSummary w = Base();
  w.compute_share = 0.9;
  w.utilisation = 0.9;  // busy, but nothing queues
  EXPECT_THAT(Diagnose(w).actions.back().expected_effect, HasSubstr("more throughput"));
}

TEST(DiagnosisRulesTest, SerialisationBound) {
  WindowSummary w = Base();
  w.serialisation_share = kSerialisationShare;
  w.decode.share = 0.2;
  w.encode.share = 0.1;
  w.compute_share = 0.6;  // serialisation is checked before compute
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "serialisation_bound");
  EXPECT_THAT(d.actions[0].action, HasSubstr("binary tensors"));
  EXPECT_THAT(d.actions[0].expected_effect, HasSubstr("JSON decode is 20 %"));
  w.serialisation_share = kSerialisationShare - 0.01;
  EXPECT_EQ(ClassOf(w), "compute_bound");
}

TEST(DiagnosisRulesTest, BatchingIneffectiveSmallBatchesAtHighRate) {
  WindowSummary w = Base();
  w.facts = ModelFacts{8, true, 100, false};
  w.rate_per_second = 9000;
  w.concurrency = 4;
  w.mean_batch_size = 1.3;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "batching_ineffective");
  // 4 rows at 9000 req/s: (4 - 1) / 9000 s = 333 us, expected batch 4.
  EXPECT_THAT(d.actions.back().action, HasSubstr("raise max_queue_delay_microseconds from 100 to 333"));
  EXPECT_THAT(d.actions.back().expected_effect, HasSubstr("mean batch 1.3 -> about 4.0 at 9000 req/s"));
  // Borderlines: batches above 1.5 rows, or a rate below 20 req/s, are fine.
  w.mean_batch_size = kSmallBatch + 0.01;
  EXPECT_EQ(ClassOf(w), "healthy");
  w.mean_batch_size = kSmallBatch;
  w.rate_per_second = kBatchingRate - 0.1;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, BatchingIneffectiveWithSerialClientsSaysDelayCannotHelp) {
  WindowSummary w = Base();
  w.facts = ModelFacts{8, true, 0, false};
  w.concurrency = 0.9;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "batching_ineffective");
  EXPECT_THAT(d.actions[0].action, HasSubstr("send several rows per request"));
}

TEST(DiagnosisRulesTest, BatchingDelayDominates) {
  WindowSummary w = Base();
  w.facts = ModelFacts{8, true, 5000, false};
  w.mean_batch_size = 3;
  w.server_us = 6000;
  w.queue.mean_us = 4000;  // within the 5000 us delay
  w.queue.share = 0.67;
  w.utilisation = 0.2;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "batching_ineffective");
  EXPECT_THAT(d.actions[0].action, HasSubstr("lower max_queue_delay_microseconds from 5000 to 2500"));
  SetQueue(w, kQueueShare - 0.01);  // a short queue is no problem
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, BatchingNotConfiguredWhereItWouldHelp) {
  WindowSummary w = Base();
  w.facts = ModelFacts{16, false, 0, false};
  w.utilisation = kBatchWorthUtilisation;
  w.concurrency = 3;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "batching_ineffective");
  EXPECT_THAT(d.actions.back().action, HasSubstr("enable dynamic_batching"));
  w.utilisation = kBatchWorthUtilisation - 0.01;
  EXPECT_EQ(ClassOf(w), "healthy");
  w.facts.max_batch_size = 0;  // a model that cannot batch is never told to
  w.utilisation = 0.7;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, ClientBoundByDisconnects) {
  WindowSummary w = Base();
  w.failures.cancelled = 30;
  w.write_failed = 20;  // 50 of 1000 = 5 %
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "client_bound");
  EXPECT_THAT(d.summary, HasSubstr("5 %"));
  w.write_failed = 19;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, ClientBoundBySlowReads) {
  WindowSummary w = Base();
  w.write.share = kWriteShare;
  w.write.mean_us = 300;
  SetQueue(w, 0.9);  // client problems are checked before queueing
  w.utilisation = 0.95;
  w.encode.mean_us = 150;  // write = 2 × encode: the reader is slower than the encoder
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "client_bound");
  EXPECT_THAT(d.summary, HasSubstr("read slowly"));
  w.write.share = kWriteShare - 0.01;
  EXPECT_EQ(ClassOf(w), "queueing");
}

// A big body written about as fast as it was encoded is serialisation, not the client.
TEST(DiagnosisRulesTest, WriteAsFastAsEncodeIsNotClientBound) {
  WindowSummary w = Base();
  w.write.share = 0.6;
  w.write.mean_us = 300;
  w.encode.mean_us = 151;
  w.serialisation_share = 0.9;
  EXPECT_EQ(ClassOf(w), "serialisation_bound");
}

TEST(DiagnosisRulesTest, MemoryBoundByPreemptionsEvenWithFewRequests) {
  WindowSummary w = Base();
  w.facts.llm = true;
  w.requests = 3;
  w.llm = WindowSummary::Llm{2, 50, 0.5, 4, 0, 8};
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "memory_bound");
  EXPECT_THAT(d.actions[0].action, HasSubstr("kv_cache_memory_bytes"));
  EXPECT_THAT(d.actions[1].action, HasSubstr("lower max_num_seqs from 8 to 4"));
  w.llm->preemptions = 0;
  EXPECT_EQ(ClassOf(w), "idle");
}

TEST(DiagnosisRulesTest, MemoryBoundByFullCacheWithWaitingSequences) {
  WindowSummary w = Base();
  w.llm = WindowSummary::Llm{0, 50, kKvCacheFull, 8, 3, 8};
  EXPECT_EQ(ClassOf(w), "memory_bound");
  w.llm->num_waiting = 0;  // full but nobody waits: using the cache well
  EXPECT_EQ(ClassOf(w), "healthy");
  w.llm->num_waiting = 3;
  w.llm->kv_cache_usage = kKvCacheFull - 0.01;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, NumberFormats) {
  EXPECT_EQ(Fixed(1.25, 1), "1.2");  // round-half-even of the binary value
  EXPECT_EQ(Fixed(2.0 / 3.0, 2), "0.67");
  EXPECT_EQ(Percent(0.974), "97 %");
  EXPECT_EQ(Fixed(1.0 / 0.0, 1), "0");
}

}  // namespace
}  // namespace infera::diagnosis
