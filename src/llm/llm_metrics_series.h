// LlmMetricsSeries: the Prometheus series of one LLM (infera::LlmMetrics from
// src/metrics, label `model`: docs/metrics.md), shared by every loaded version of it.
//
// Why shared: the series carry no version label, and prometheus-cpp hands the same
// metric objects to every Add() with the same labels and deletes them on Remove(). Two
// versions loaded at once (a version policy of latest 2, or a reload that loads the new
// version before unloading the old) would each own an infera::LlmMetrics over the same
// objects, and the first to unload would remove series the other still records into.
// Here the first Acquire() of a (registry, model) creates the series, later ones share
// them, and the last release removes them — creation and removal under one mutex.
//
// Counters and histograms simply add up over versions. Gauges are summed: each engine
// passes deltas of its own values (running, waiting, KV blocks in use and in total, KV
// capacity in tokens), so
// a version that unloads takes its share with it; the KV usage ratio is
// Σ used blocks / Σ blocks.
//
// Thread-safe. Recording is lock-free (prometheus-cpp atomics) except the KV ratio,
// which is recomputed from two atomics.
//
// Usage (the llm backend, at load):
//   std::shared_ptr<LlmMetricsSeries> series = LlmMetricsSeries::Acquire(server_metrics, "fortune", 2048);
//   series->prometheus().ObserveTimeToFirstToken(0.021);
//   series.reset();  // the last reference of "fortune" removes its series
#ifndef INFERA_LLM_LLM_METRICS_SERIES_H_
#define INFERA_LLM_LLM_METRICS_SERIES_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "metrics/llm_metrics.h"

namespace infera {
class ServerMetrics;
}

namespace infera::llm {

class LlmMetricsSeries {
 public:
  // The series of `model` in `metrics` (not null; it outlives every returned pointer).
  // `max_model_len` bounds the token histograms; the first Acquire() of a model sets it.
  static std::shared_ptr<LlmMetricsSeries> Acquire(ServerMetrics* metrics, const std::string& model,
                                                   int64_t max_model_len);

  infera::LlmMetrics& prometheus() { return *metrics_; }

  // Gauge contributions of one engine, as deltas of its own values.
  void AddRunning(int64_t delta) { metrics_->SetRunning(static_cast<double>(running_ += delta)); }
  void AddWaiting(int64_t delta) { metrics_->SetWaiting(static_cast<double>(waiting_ += delta)); }
  void AddKvBlocks(int64_t used_delta, int64_t total_delta);
  void AddKvCapacityTokens(int64_t delta) {
    metrics_->SetKvCacheCapacityTokens(static_cast<double>(kv_capacity_tokens_ += delta));
  }

  explicit LlmMetricsSeries(std::unique_ptr<infera::LlmMetrics> metrics) : metrics_(std::move(metrics)) {}

 private:
  std::unique_ptr<infera::LlmMetrics> metrics_;
  std::atomic<int64_t> running_{0}, waiting_{0}, kv_used_{0}, kv_total_{0}, kv_capacity_tokens_{0};
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLM_METRICS_SERIES_H_
