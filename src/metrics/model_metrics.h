// ModelMetrics: the Prometheus series of one model version (labels model, version):
// infera's, and Triton's nv_inference_* ones (triton()) unless they are turned off.
//
// Created by ServerMetrics::ForModel() when a version loads and shared by every loaded
// version with the same name and number (a reload); its series disappear from /metrics
// when the last of them unloads. Never constructed directly outside ServerMetrics: two
// ModelMetrics over the same labels would share prometheus-cpp's metric objects, and the
// first destroyed would free them under the other. Recording is on the request hot path:
// every call is a few relaxed atomic updates inside prometheus-cpp (no lock).
//
// Thread-safe.
#ifndef INFERA_METRICS_MODEL_METRICS_H_
#define INFERA_METRICS_MODEL_METRICS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"

namespace infera {

// Why a request did not succeed (the `outcome` label of infera_requests_total).
enum class RequestOutcome : int {
  kSuccess = 0,
  kBadRequest,
  kRejected,
  kTimeout,
  kCancelled,
  kBackendError,
  kCount,
};
const char* RequestOutcomeName(RequestOutcome outcome);

class TritonModelSeries;      // triton_metrics.h
struct TritonMetricFamilies;  // triton_metrics.h

// The metric families a ModelMetrics adds its series to (owned by ServerMetrics).
struct ModelMetricFamilies {
  prometheus::Family<prometheus::Counter>* requests;
  prometheus::Family<prometheus::Counter>* inferences;
  prometheus::Family<prometheus::Counter>* executions;
  prometheus::Family<prometheus::Histogram>* request_duration;
  prometheus::Family<prometheus::Histogram>* queue_duration;
  prometheus::Family<prometheus::Histogram>* compute_duration;
  prometheus::Family<prometheus::Histogram>* batch_size;
  prometheus::Family<prometheus::Gauge>* queue_depth;
  prometheus::Family<prometheus::Gauge>* inflight;
  prometheus::Family<prometheus::Gauge>* busy_ratio;
  prometheus::Family<prometheus::Gauge>* load_ratio;
};

class ModelMetrics {
 public:
  // `triton` (may be null: --triton-metrics=false) adds the version's Triton series.
  ModelMetrics(const ModelMetricFamilies& families, const std::string& model, int64_t version,
               const TritonMetricFamilies* triton = nullptr);
  ~ModelMetrics();
  ModelMetrics(const ModelMetrics&) = delete;
  ModelMetrics& operator=(const ModelMetrics&) = delete;

  // Hot path.
  void ObserveSuccess(double request_seconds, double queue_seconds) {
    outcomes_[static_cast<int>(RequestOutcome::kSuccess)]->Increment();
    request_duration_->Observe(request_seconds);
    queue_duration_->Observe(queue_seconds);
  }
  void CountFailure(RequestOutcome outcome) { outcomes_[static_cast<int>(outcome)]->Increment(); }
  void ObserveExecution(int64_t rows, double compute_seconds) {
    executions_->Increment();
    inferences_->Increment(static_cast<double>(rows));
    compute_duration_->Observe(compute_seconds);
    batch_size_->Observe(static_cast<double>(rows));
  }

  // Set at scrape time (queue_depth is also Triton's nv_inference_pending_request_count).
  void SetLoad(double queue_depth, double inflight, double busy_ratio, double load_ratio);

  // The version's nv_inference_* series; null when Triton's families are off. Fed by
  // ModelStatistics with the statistics extension's values.
  TritonModelSeries* triton() const { return triton_.get(); }

 private:
  ModelMetricFamilies families_;
  std::array<prometheus::Counter*, static_cast<int>(RequestOutcome::kCount)> outcomes_;
  prometheus::Counter* inferences_;
  prometheus::Counter* executions_;
  prometheus::Histogram* request_duration_;
  prometheus::Histogram* queue_duration_;
  prometheus::Histogram* compute_duration_;
  prometheus::Histogram* batch_size_;
  prometheus::Gauge* queue_depth_;
  prometheus::Gauge* inflight_;
  prometheus::Gauge* busy_ratio_;
  prometheus::Gauge* load_ratio_;
  std::unique_ptr<TritonModelSeries> triton_;
};

}  // namespace infera

#endif  // INFERA_METRICS_MODEL_METRICS_H_
