// Cost of recording on the request hot path (docs/benchmarks.md, "Metrics overhead").
//   build/bench/micro/metrics_benchmark --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include "manager/model_statistics.h"
#include "metrics/server_metrics.h"

namespace infera {
namespace {

// Arg "prometheus": 0 statistics only, 1 plus infera's and Triton's series (the
// default), 2 plus infera's series only (--triton-metrics=false).
TritonMetricsOptions TritonFor(const benchmark::State& state) { return {.enabled = state.range(0) != 2}; }

// One successful request as ModelVersion records it: statistics (Triton's counters and
// the latency histogram) plus the Prometheus series.
void BM_RecordSuccess(benchmark::State& state) {
  ServerMetrics metrics(TritonFor(state));
  ModelStatistics statistics(8, state.range(0) ? metrics.ForModel("m", 1) : nullptr);
  uint64_t ns = 1000;
  for (auto _ : state) {
    statistics.RecordSuccess(ns, ns / 4, 1);
    ns = (ns * 7 + 13) % 50'000'000;
  }
}
BENCHMARK(BM_RecordSuccess)->Arg(0)->Arg(1)->Arg(2)->ArgName("prometheus")->Threads(1)->Threads(2);

void BM_RecordExecution(benchmark::State& state) {
  ServerMetrics metrics(TritonFor(state));
  ModelStatistics statistics(8, state.range(0) ? metrics.ForModel("m", 1) : nullptr);
  for (auto _ : state) statistics.RecordExecution(4, 4, 1000, 50000, 2000);
}
BENCHMARK(BM_RecordExecution)->Arg(0)->Arg(1)->Arg(2)->ArgName("prometheus");

void BM_Serialize(benchmark::State& state) {
  ServerMetrics metrics;  // Triton's families included
  std::vector<std::shared_ptr<ModelMetrics>> models;
  for (int i = 0; i < state.range(0); ++i) models.push_back(metrics.ForModel("model" + std::to_string(i), 1));
  for (auto _ : state) benchmark::DoNotOptimize(metrics.Serialize());
}
BENCHMARK(BM_Serialize)->Arg(1)->Arg(10);

// A scrape with LLMs loaded: their infera_llm_* series plus the vLLM view of them
// (vllm_names.h), which is made here, at scrape time.
void BM_SerializeLlms(benchmark::State& state) {
  ServerMetrics metrics;
  std::vector<std::unique_ptr<LlmMetrics>> llms;
  for (int i = 0; i < state.range(0); ++i) llms.push_back(metrics.ForLlm("llm" + std::to_string(i), 4096));
  for (auto _ : state) benchmark::DoNotOptimize(metrics.Serialize());
}
BENCHMARK(BM_SerializeLlms)->Arg(1)->Arg(4);

// One ended LLM request as the engine records it in Prometheus (the finished counter,
// e2e and two token histograms, the three phase histograms).
void BM_RecordLlmFinished(benchmark::State& state) {
  ServerMetrics metrics;
  std::unique_ptr<LlmMetrics> llm = metrics.ForLlm("llm", 4096);
  for (auto _ : state) {
    llm->ObserveFinished(LlmFinish::kLength, 1.5, 120, 256);
    llm->ObservePhases(0.1, 1.3, 1.4);
  }
}
BENCHMARK(BM_RecordLlmFinished);

}  // namespace
}  // namespace infera

BENCHMARK_MAIN();
