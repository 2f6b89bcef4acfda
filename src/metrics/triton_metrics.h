// Triton's per-model Prometheus families (nv_inference_*), exported beside infera's own
// so that Triton's Grafana dashboards, alerts and HPA rules work unchanged.
//
// Names, types, help texts, units and labels are Triton core's (metrics.cc,
// metric_model_reporter.cc): counters, durations as cumulative microseconds, labels
// `model` and `version`, failures also by `reason` (REJECTED, CANCELED, BACKEND, OTHER).
// Latency summaries (`--metrics-config summary_latencies=true`) are Triton's
// nv_inference_*_summary_us, one observation per request in microseconds.
// The values are the statistics extension's: ModelStatistics records every event into its
// own counters and, in the same call, into these series (docs/metrics.md, "Triton's
// families"), so /v2/models/stats and /metrics agree (microseconds = nanoseconds / 1000,
// not truncated per request as Triton does).
//
// TritonModelSeries is owned by a ModelMetrics (same lifetime and sharing across a
// reload). Recording is a few relaxed atomic adds inside prometheus-cpp (no lock).
//
// Thread-safe.
#ifndef INFERA_METRICS_TRITON_METRICS_H_
#define INFERA_METRICS_TRITON_METRICS_H_

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "metrics/model_metrics.h"  // RequestOutcome
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "prometheus/summary.h"

namespace infera {

// Which Triton families are exported (--triton-metrics, --metrics-config).
struct TritonMetricsOptions {
  bool enabled = true;             // --triton-metrics: every nv_inference_* family
  bool latency_counters = true;    // --metrics-config counter_latencies: the *_duration_us
  // --metrics-config summary_latencies: the *_summary_us families, with these quantiles
  // (quantile, allowed error: summary_quantiles; Triton's defaults), over Triton's window
  // (prometheus-cpp's: the last 60 s, in 5 age buckets).
  bool latency_summaries = false;
  std::vector<std::pair<double, double>> summary_quantiles = {{0.5, 0.05}, {0.9, 0.01}, {0.95, 0.001}, {0.99, 0.001}};
};

// Triton's failure reasons (the `reason` label of nv_inference_request_failure).
enum class TritonFailureReason : int { kRejected = 0, kCanceled, kBackend, kOther, kCount };
const char* TritonFailureReasonName(TritonFailureReason reason);
// How infera's outcome of a failed request reads in Triton's terms: a full queue, an
// unloading model and a queue timeout are REJECTED (Triton: "request timeout in the
// scheduler"), a cancellation CANCELED, an execution or output failure BACKEND, a bad
// request OTHER.
TritonFailureReason TritonReasonOf(RequestOutcome outcome);

// The registered families (owned by the registry). Latency families are null when
// latency counters are off.
struct TritonMetricFamilies {
  prometheus::Family<prometheus::Counter>* request_success = nullptr;
  prometheus::Family<prometheus::Counter>* request_failure = nullptr;
  prometheus::Family<prometheus::Counter>* inference_count = nullptr;
  prometheus::Family<prometheus::Counter>* exec_count = nullptr;
  prometheus::Family<prometheus::Counter>* request_duration_us = nullptr;
  prometheus::Family<prometheus::Counter>* queue_duration_us = nullptr;
  prometheus::Family<prometheus::Counter>* compute_input_duration_us = nullptr;
  prometheus::Family<prometheus::Counter>* compute_infer_duration_us = nullptr;
  prometheus::Family<prometheus::Counter>* compute_output_duration_us = nullptr;
  prometheus::Family<prometheus::Gauge>* pending_request_count = nullptr;
  // Null unless latency summaries are on.
  prometheus::Family<prometheus::Summary>* request_summary_us = nullptr;
  prometheus::Family<prometheus::Summary>* queue_summary_us = nullptr;
  prometheus::Family<prometheus::Summary>* compute_input_summary_us = nullptr;
  prometheus::Family<prometheus::Summary>* compute_infer_summary_us = nullptr;
  prometheus::Family<prometheus::Summary>* compute_output_summary_us = nullptr;
  prometheus::Family<prometheus::Summary>* cache_hit_summary_us = nullptr;
  prometheus::Family<prometheus::Summary>* cache_miss_summary_us = nullptr;
  prometheus::Summary::Quantiles quantiles;
};

// Registers Triton's families in `registry` (call once per registry).
TritonMetricFamilies RegisterTritonFamilies(prometheus::Registry& registry, const TritonMetricsOptions& options);

// The nv_inference_* series of one model version.
class TritonModelSeries {
 public:
  TritonModelSeries(const TritonMetricFamilies& families, const std::string& model, int64_t version);
  ~TritonModelSeries();
  TritonModelSeries(const TritonModelSeries&) = delete;
  TritonModelSeries& operator=(const TritonModelSeries&) = delete;

  // A successful request of `rows` inferences (ModelStatistics::RecordSuccess).
  void RecordSuccess(uint64_t rows, uint64_t request_ns, uint64_t queue_ns);
  // A request answered from the response cache (ModelStatistics::RecordCacheHit): a
  // success with its duration and no queueing, no inference; Triton counts it so.
  void RecordCacheHit(uint64_t request_ns, uint64_t lookup_ns);
  // A cache miss's lookup + insert time (only the summary: the nv_cache_* counters are
  // rendered from the statistics, response_cache_metrics.h).
  void RecordCacheMiss(uint64_t ns);
  // A version that uses the response cache: its cache summaries exist from its load (at
  // zero), as Triton's do; otherwise they appear at the first hit or miss.
  void PrepareCacheSummaries();
  void RecordFailure(RequestOutcome outcome) {
    failures_[static_cast<int>(TritonReasonOf(outcome))]->Increment();
  }
  // One execution serving `num_requests` requests; each request is charged the
  // execution's stage durations, as Triton (and the statistics extension) do (the
  // summaries observe each request's share once per request).
  void RecordExecution(uint64_t num_requests, uint64_t input_ns, uint64_t infer_ns, uint64_t output_ns);
  // Requests waiting for an instance (set at scrape time).
  void SetPending(double pending) { pending_->Set(pending); }

 private:
  TritonMetricFamilies families_;
  prometheus::Counter* success_;
  std::array<prometheus::Counter*, static_cast<int>(TritonFailureReason::kCount)> failures_;
  prometheus::Counter* inference_count_;
  prometheus::Counter* exec_count_;
  // Null when latency counters are off.
  prometheus::Counter* request_duration_us_ = nullptr;
  prometheus::Counter* queue_duration_us_ = nullptr;
  prometheus::Counter* compute_input_duration_us_ = nullptr;
  prometheus::Counter* compute_infer_duration_us_ = nullptr;
  prometheus::Counter* compute_output_duration_us_ = nullptr;
  prometheus::Gauge* pending_;
  // Null when latency summaries are off. Observing takes the summary's own lock.
  prometheus::Summary* request_summary_us_ = nullptr;
  prometheus::Summary* queue_summary_us_ = nullptr;
  prometheus::Summary* compute_input_summary_us_ = nullptr;
  prometheus::Summary* compute_infer_summary_us_ = nullptr;
  prometheus::Summary* compute_output_summary_us_ = nullptr;
  // The cache summaries exist only for versions that use the cache (as Triton's cache
  // families do): created at the first hit or miss.
  std::once_flag cache_summaries_once_;
  prometheus::Summary* cache_hit_summary_us_ = nullptr;
  prometheus::Summary* cache_miss_summary_us_ = nullptr;
  prometheus::Labels labels_;
};

}  // namespace infera

#endif  // INFERA_METRICS_TRITON_METRICS_H_
