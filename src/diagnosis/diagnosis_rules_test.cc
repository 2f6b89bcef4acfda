#include "diagnosis/diagnosis_rules.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::diagnosis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

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

// ---- LLMs -----------------------------------------------------------------------------

// An LLM window after OpenAI traffic, as the statistics record it: every request's
// "queue" is the engine's wait for a batch slot (here 60 % of server time), the
// instances' scheduler never ran (utilisation 0 of 8 instances). The engine: 200 ms per
// generation, 20 ms of it queued, TTFT 30 ms, TPOT 9 ms, KV cache 20 % at its peak,
// 4 of 8 sequences running, nobody waiting.
WindowSummary LlmBase() {
  WindowSummary w = Base();
  w.facts.llm = true;
  w.facts.max_num_batched_tokens = 512;
  w.facts.kv_cache_memory = "64MiB";
  w.requests = w.successes = 1287;
  SetQueue(w, 0.6);
  w.compute_share = 0.4;
  w.instances = 8;
  w.busy_seconds = 0;
  w.utilisation = 0;
  WindowSummary::Llm llm;
  llm.finished = 1287;
  llm.tokens_per_second = 400;
  llm.prompt_tokens_per_request = 12;
  llm.output_tokens_per_request = 20;
  llm.e2e_ms = 200;
  llm.queue_ms = 20;
  llm.ttft_ms = 30;
  llm.prefill_ms = 10;
  llm.decode_ms = 170;
  llm.tpot_ms = 9;
  llm.kv_cache_usage_peak = 0.2;
  llm.kv_cache_usage_mean = 0.1;
  llm.num_running_peak = 4;
  llm.num_running_mean = 2;
  llm.max_num_seqs = 8;
  w.llm = llm;
  return w;
}

bool AddsInstances(const Diagnosis& d) {
  for (const Action& a : d.actions) {
    if (a.kind == ActionKind::kAddInstances || a.action.find("instance") != std::string::npos) return true;
  }
  return false;
}

// Regression (issue 30): 1,287 OpenAI requests to the demo LLM were diagnosed
// "queueing, add 1 instance (8 -> 9)" at 0 % utilisation from the queue-only stage record.
TEST(DiagnosisRulesTest, LlmIsJudgedByItsEngineNotByTheQueueStage) {
  const WindowSummary w = LlmBase();
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "healthy") << d.summary;
  EXPECT_FALSE(AddsInstances(d));
  EXPECT_THAT(d.summary, HasSubstr("TTFT 30.0 ms, TPOT 9.0 ms"));
  EXPECT_EQ(d.evidence[0].name, "ttft_ms");
  EXPECT_TRUE(CheckConsistency(w, d).empty());
}

TEST(DiagnosisRulesTest, LlmIdleBelowItsMinimum) {
  WindowSummary w = LlmBase();
  w.requests = kMinLlmRequests - 1;
  EXPECT_EQ(ClassOf(w), "idle");
  w.requests = kMinLlmRequests;
  EXPECT_EQ(ClassOf(w), "healthy");
  w.llm.reset();  // an LLM whose engine reported nothing is not judged by its instances
  EXPECT_EQ(ClassOf(w), "idle");
}

TEST(DiagnosisRulesTest, KvCacheBoundByPreemptionsEvenWithFewRequests) {
  WindowSummary w = LlmBase();
  w.requests = 3;
  w.llm->preemptions = 2;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "kv_cache_bound");
  EXPECT_EQ(d.evidence[0].name, "preemptions");
  EXPECT_THAT(d.actions[0].action, HasSubstr("kv_cache_memory_bytes 64MiB"));
  EXPECT_THAT(d.actions[1].action, HasSubstr("kv_cache_dtype fp16"));
  EXPECT_THAT(d.actions[2].action, HasSubstr("lower max_num_seqs from 8 to 4"));
  w.facts.kv_cache_dtype = "bf16";  // already 16 bits: not offered again
  EXPECT_THAT(Diagnose(w).actions[1].action, HasSubstr("max_num_seqs"));
  w.llm->preemptions = 0;
  EXPECT_EQ(ClassOf(w), "idle");
}

TEST(DiagnosisRulesTest, KvCacheBoundByFullCacheWithWaitingSequences) {
  WindowSummary w = LlmBase();
  w.llm->kv_cache_usage_peak = kKvCacheFull;
  w.llm->num_waiting_peak = 3;
  EXPECT_EQ(ClassOf(w), "kv_cache_bound");
  w.llm->num_waiting_peak = 0;  // full but nobody waits: using the cache well
  EXPECT_EQ(ClassOf(w), "healthy");
  w.llm->num_waiting_peak = 3;
  w.llm->kv_cache_usage_peak = kKvCacheFull - 0.01;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, DecodeBoundWhenTheBatchIsFullAndRequestsWait) {
  WindowSummary w = LlmBase();
  w.llm->num_running_peak = 8;
  w.llm->num_waiting_peak = 12;
  w.llm->queue_ms = 0.3 * w.llm->e2e_ms;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "decode_bound");
  EXPECT_EQ(d.evidence[0].name, "running_sequences_peak");
  EXPECT_THAT(d.actions[0].action, HasSubstr("raise max_num_seqs from 8 to 16"));
  EXPECT_FALSE(AddsInstances(d));
  // A KV cache with no room left: more sequences are not offered.
  w.llm->kv_cache_usage_peak = kKvRoomForMore;
  const Diagnosis full = Diagnose(w);
  EXPECT_EQ(full.bottleneck_class, "decode_bound");
  EXPECT_THAT(full.actions[0].action, HasSubstr("num_threads"));
  // Borderlines: a short queue, or a batch below max_num_seqs, is not decode_bound.
  w.llm->queue_ms = 0.29 * w.llm->e2e_ms;
  EXPECT_NE(ClassOf(w), "decode_bound");
  w.llm->queue_ms = 0.3 * w.llm->e2e_ms;
  w.llm->num_running_peak = 7;
  EXPECT_EQ(ClassOf(w), "queueing");
  // A tiny model's few-millisecond generations: a 4 ms wait is no bottleneck.
  w.llm->num_running_peak = 8;
  w.llm->e2e_ms = 10;
  w.llm->queue_ms = kMinEngineQueueMs - 1;
  w.llm->ttft_ms = w.llm->queue_ms + 0.5;
  w.llm->prefill_ms = 0.5;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, LlmQueueingWithFreeSlotsAndFreeKv) {
  WindowSummary w = LlmBase();
  w.llm->queue_ms = 120;
  w.llm->num_waiting_peak = 5;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "queueing");
  EXPECT_EQ(d.evidence[0].name, "engine_queue_share");
  EXPECT_THAT(d.actions[0].action, HasSubstr("raise max_num_batched_tokens from 512 to 1024"));
  EXPECT_FALSE(AddsInstances(d));
}

TEST(DiagnosisRulesTest, PrefillBoundWithLongPrompts) {
  WindowSummary w = LlmBase();
  w.llm->prompt_tokens_per_request = 400;
  w.llm->ttft_ms = 100;
  w.llm->prefill_ms = 80;  // 40 % of 200 ms
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "prefill_bound");
  EXPECT_THAT(d.actions[0].action, HasSubstr("enable_prefix_caching"));
  w.facts.prefix_caching = true;
  EXPECT_THAT(Diagnose(w).actions[0].action, HasSubstr("shorten the prompts"));
  w.llm->prefill_ms = 79;
  EXPECT_EQ(ClassOf(w), "healthy");
}

TEST(DiagnosisRulesTest, LlmClientBoundByAbortedGenerations) {
  WindowSummary w = LlmBase();
  w.failures.cancelled = 100;
  EXPECT_EQ(ClassOf(w), "client_bound");
}

// ---- Figures never contradicted by an action --------------------------------------------

// Regression (issue 30): a 5 s burst in the default 60 s window read "instances are
// saturated (utilisation 10 %)". Utilisation is now over the seconds with traffic (see
// window_summary_test); a window whose requests waited although the instances were
// mostly free is not called saturated and gets no instances.
TEST(DiagnosisRulesTest, QueueingAtLowUtilisationNeitherSaturatedNorAddsInstances) {
  WindowSummary w = Base();
  SetQueue(w, 0.6);
  w.instances = 1;
  w.utilisation = 0.10;
  const Diagnosis d = Diagnose(w);
  EXPECT_EQ(d.bottleneck_class, "queueing");
  EXPECT_FALSE(d.claims_saturation);
  EXPECT_THAT(d.summary, Not(HasSubstr("saturated")));
  EXPECT_THAT(d.summary, HasSubstr("bursts"));
  EXPECT_FALSE(AddsInstances(d));
  EXPECT_TRUE(CheckConsistency(w, d).empty());
  w.utilisation = kAddInstanceUtilisation;  // half busy: instances help, not "saturated"
  const Diagnosis half = Diagnose(w);
  EXPECT_TRUE(AddsInstances(half));
  EXPECT_THAT(half.summary, Not(HasSubstr("saturated")));
  w.utilisation = kBusyUtilisation;
  EXPECT_THAT(Diagnose(w).summary, HasSubstr("instances are saturated"));
}

TEST(DiagnosisRulesTest, CheckConsistencyFindsContradictedActions) {
  WindowSummary w = Base();
  w.utilisation = 0.0;
  Diagnosis d;
  d.bottleneck_class = "queueing";
  d.summary = "instances are saturated";
  d.claims_saturation = true;
  d.actions.push_back({"add 1 instance (instance_group count 8 -> 9)", "", ActionKind::kAddInstances});
  std::vector<std::string> faults = CheckConsistency(w, d);
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_THAT(faults[0], HasSubstr("at utilisation 0 %"));
  EXPECT_THAT(faults[1], HasSubstr("'saturated' at utilisation 0 %"));
  w.utilisation = 0.97;
  EXPECT_TRUE(CheckConsistency(w, d).empty());
  w.facts.llm = true;  // never instances for an LLM
  EXPECT_THAT(CheckConsistency(w, d), ElementsAre(HasSubstr("for an LLM")));
  // "keep the instance count" while they are busy; more sequences into a full cache.
  WindowSummary busy = Base();
  busy.utilisation = 0.9;
  Diagnosis keep;
  keep.actions.push_back({"keep the instance count", "", ActionKind::kKeepInstances});
  EXPECT_EQ(CheckConsistency(busy, keep).size(), 1u);
  WindowSummary llm = LlmBase();
  llm.llm->kv_cache_usage_peak = 0.95;
  Diagnosis more;
  more.actions.push_back({"raise max_num_seqs", "", ActionKind::kRaiseMaxNumSeqs});
  EXPECT_EQ(CheckConsistency(llm, more).size(), 1u);
  llm.llm->preemptions = 1;
  Diagnosis healthy;
  healthy.bottleneck_class = "healthy";
  EXPECT_EQ(CheckConsistency(llm, healthy).size(), 1u);
}

// Every rule, over a grid of windows on both sides of its thresholds: no diagnosis has
// an action (or a claim) one of its own figures refutes.
TEST(DiagnosisRulesTest, NoDiagnosisContradictsItsFigures) {
  int checked = 0;
  for (bool llm : {false, true}) {
    for (double utilisation : {0.0, 0.1, 0.49, 0.5, 0.79, 0.8, 1.0}) {
      for (double queue : {0.0, 0.29, 0.3, 0.9}) {
        for (double compute : {0.2, 0.5, 0.9}) {
          for (double kv : {0.1, 0.5, 0.95}) {
            for (int64_t running : {1, 8}) {
              WindowSummary w = llm ? LlmBase() : Base();
              w.utilisation = utilisation;
              SetQueue(w, queue);
              w.compute_share = compute;
              if (w.llm) {
                w.llm->queue_ms = queue * w.llm->e2e_ms;
                w.llm->kv_cache_usage_peak = kv;
                w.llm->num_waiting_peak = queue > 0 ? 2 : 0;
                w.llm->num_running_peak = running;
              } else {
                w.facts = ModelFacts{running, running > 1, 100, false};
              }
              const Diagnosis d = Diagnose(w);
              EXPECT_THAT(CheckConsistency(w, d), ::testing::IsEmpty()) << d.bottleneck_class << ": " << d.summary;
              for (const Evidence& e : d.evidence) EXPECT_NE(e.name, "withheld") << e.detail;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 7 * 4 * 3 * 3 * 2);
}

// ---- Ensembles ----------------------------------------------------------------------------

TEST(DiagnosisRulesTest, EnsembleIsJudgedByItsSlowestStep) {
  WindowSummary pipeline = Base();
  pipeline.mean_latency_us = 15000;
  WindowSummary step = Base();
  step.compute_share = 0.9;
  const Diagnosis slow = Diagnose(step);
  ASSERT_EQ(slow.bottleneck_class, "compute_bound");
  const Diagnosis d = DiagnoseEnsemble(
      pipeline, {{"preprocess", 1, 1000, 2000, "healthy"}, {"classifier", 1, 1000, 12000, "compute_bound"}}, 1, slow);
  EXPECT_EQ(d.bottleneck_class, "compute_bound");
  EXPECT_EQ(d.slowest_step, "classifier");
  EXPECT_THAT(d.summary, HasSubstr("the slowest step is 'classifier' (12.0 ms of the pipeline's 15.0 ms"));
  EXPECT_EQ(d.evidence[0].name, "step preprocess");
  ASSERT_FALSE(d.actions.empty());
  EXPECT_THAT(d.actions[0].action, HasSubstr("in 'classifier': "));
  ASSERT_EQ(d.steps.size(), 2u);
  pipeline.requests = kMinRequests - 1;
  EXPECT_EQ(DiagnoseEnsemble(pipeline, {}, 0, slow).bottleneck_class, "idle");
}

TEST(DiagnosisRulesTest, NumberFormats) {
  EXPECT_EQ(Fixed(1.25, 1), "1.2");  // round-half-even of the binary value
  EXPECT_EQ(Fixed(2.0 / 3.0, 2), "0.67");
  EXPECT_EQ(Percent(0.974), "97 %");
  EXPECT_EQ(Fixed(1.0 / 0.0, 1), "0");
}

}  // namespace
}  // namespace infera::diagnosis
