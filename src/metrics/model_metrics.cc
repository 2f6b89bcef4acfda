#include "metrics/model_metrics.h"

#include "metrics/triton_metrics.h"

namespace infera {
namespace {

// Latency buckets suited to ms-scale inference (seconds), shared by every duration.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return buckets;
}

const prometheus::Histogram::BucketBoundaries& BatchBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  return buckets;
}

}  // namespace

const char* RequestOutcomeName(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::kSuccess: return "success";
    case RequestOutcome::kBadRequest: return "bad_request";
    case RequestOutcome::kRejected: return "rejected";
    case RequestOutcome::kTimeout: return "timeout";
    case RequestOutcome::kCancelled: return "cancelled";
    case RequestOutcome::kBackendError: return "backend_error";
    case RequestOutcome::kCount: break;
  }
  return "unknown";
}

ModelMetrics::ModelMetrics(const ModelMetricFamilies& families, const std::string& model,
                           int64_t version, const TritonMetricFamilies* triton)
    : families_(families) {
  const prometheus::Labels labels = {{"model", model}, {"version", std::to_string(version)}};
  for (int i = 0; i < static_cast<int>(RequestOutcome::kCount); ++i) {
    prometheus::Labels with_outcome = labels;
    with_outcome["outcome"] = RequestOutcomeName(static_cast<RequestOutcome>(i));
    outcomes_[i] = &families_.requests->Add(with_outcome);
  }
  inferences_ = &families_.inferences->Add(labels);
  executions_ = &families_.executions->Add(labels);
  request_duration_ = &families_.request_duration->Add(labels, LatencyBuckets());
  queue_duration_ = &families_.queue_duration->Add(labels, LatencyBuckets());
  compute_duration_ = &families_.compute_duration->Add(labels, LatencyBuckets());
  batch_size_ = &families_.batch_size->Add(labels, BatchBuckets());
  queue_depth_ = &families_.queue_depth->Add(labels);
  inflight_ = &families_.inflight->Add(labels);
  busy_ratio_ = &families_.busy_ratio->Add(labels);
  load_ratio_ = &families_.load_ratio->Add(labels);
  if (triton != nullptr) triton_ = std::make_unique<TritonModelSeries>(*triton, model, version);
}

ModelMetrics::~ModelMetrics() {
  for (prometheus::Counter* c : outcomes_) families_.requests->Remove(c);
  families_.inferences->Remove(inferences_);
  families_.executions->Remove(executions_);
  families_.request_duration->Remove(request_duration_);
  families_.queue_duration->Remove(queue_duration_);
  families_.compute_duration->Remove(compute_duration_);
  families_.batch_size->Remove(batch_size_);
  families_.queue_depth->Remove(queue_depth_);
  families_.inflight->Remove(inflight_);
  families_.busy_ratio->Remove(busy_ratio_);
  families_.load_ratio->Remove(load_ratio_);
}

void ModelMetrics::SetLoad(double queue_depth, double inflight, double busy_ratio, double load_ratio) {
  queue_depth_->Set(queue_depth);
  inflight_->Set(inflight);
  busy_ratio_->Set(busy_ratio);
  load_ratio_->Set(load_ratio);
  if (triton_) triton_->SetPending(queue_depth);
}

}  // namespace infera
