#include "manager/model_statistics.h"

#include <algorithm>
#include <chrono>

#include "metrics/triton_metrics.h"

namespace infera {

ModelStatistics::ModelStatistics(int max_batch_size, std::shared_ptr<ModelMetrics> metrics)
    : metrics_(std::move(metrics)),
      by_batch_size_(static_cast<size_t>(max_batch_size > 0 ? max_batch_size : 1) + 1) {}

void ModelStatistics::RecordSuccess(uint64_t request_ns, uint64_t queue_ns, uint64_t rows) {
  success_.Add(1, request_ns);
  queue_.Add(1, queue_ns);
  inference_count_.fetch_add(rows, std::memory_order_relaxed);
  latency_.Record(request_ns);
  if (metrics_) {
    metrics_->ObserveSuccess(request_ns * 1e-9, queue_ns * 1e-9);
    if (TritonModelSeries* triton = metrics_->triton()) triton->RecordSuccess(rows, request_ns, queue_ns);
  }
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  last_inference_ms_.store(std::chrono::duration_cast<std::chrono::milliseconds>(now).count(),
                           std::memory_order_relaxed);
}

void ModelStatistics::RecordCacheHit(uint64_t request_ns, uint64_t lookup_ns) {
  success_.Add(1, request_ns);
  queue_.Add(1, 0);
  cache_hit_.Add(1, lookup_ns);
  latency_.Record(request_ns);
  if (metrics_) {
    metrics_->ObserveSuccess(request_ns * 1e-9, 0);
    if (TritonModelSeries* triton = metrics_->triton()) triton->RecordCacheHit(request_ns, lookup_ns);
  }
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  last_inference_ms_.store(std::chrono::duration_cast<std::chrono::milliseconds>(now).count(),
                           std::memory_order_relaxed);
}

void ModelStatistics::RecordCacheMiss(uint64_t ns) {
  cache_miss_.Add(1, ns);
  if (metrics_) {
    if (TritonModelSeries* triton = metrics_->triton()) triton->RecordCacheMiss(ns);
  }
}

void ModelStatistics::RecordFailure(absl::StatusCode code, uint64_t request_ns) {
  fail_.Add(1, request_ns);
  std::atomic<uint64_t>* bucket = &backend_error_;
  RequestOutcome outcome = RequestOutcome::kBackendError;
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kNotFound:
      bucket = &bad_request_;
      outcome = RequestOutcome::kBadRequest;
      break;
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable:
      bucket = &rejected_;
      outcome = RequestOutcome::kRejected;
      break;
    case absl::StatusCode::kDeadlineExceeded:
      bucket = &timeout_;
      outcome = RequestOutcome::kTimeout;
      break;
    case absl::StatusCode::kCancelled:
      bucket = &cancelled_;
      outcome = RequestOutcome::kCancelled;
      break;
    default:
      break;
  }
  bucket->fetch_add(1, std::memory_order_relaxed);
  if (metrics_) {
    metrics_->CountFailure(outcome);
    if (TritonModelSeries* triton = metrics_->triton()) triton->RecordFailure(outcome);
  }
}

void ModelStatistics::RecordExecution(uint64_t num_requests, uint64_t batch_rows,
                                      uint64_t input_ns, uint64_t infer_ns, uint64_t output_ns) {
  execution_count_.fetch_add(1, std::memory_order_relaxed);
  const size_t index = std::min<size_t>(std::max<uint64_t>(batch_rows, 1), by_batch_size_.size() - 1);
  AtomicBatchSize& batch = by_batch_size_[index];
  batch.input.Add(1, input_ns);
  batch.infer.Add(1, infer_ns);
  batch.output.Add(1, output_ns);
  if (metrics_) {
    metrics_->ObserveExecution(static_cast<int64_t>(batch_rows), (input_ns + infer_ns + output_ns) * 1e-9);
    if (TritonModelSeries* triton = metrics_->triton()) {
      triton->RecordExecution(num_requests, input_ns, infer_ns, output_ns);
    }
  }
  // Triton attributes an execution's stage time to each request in it.
  compute_input_.Add(num_requests, input_ns * num_requests);
  compute_infer_.Add(num_requests, infer_ns * num_requests);
  compute_output_.Add(num_requests, output_ns * num_requests);
}

StatisticsSnapshot ModelStatistics::Snapshot() const {
  StatisticsSnapshot s;
  s.last_inference_ms = last_inference_ms_.load(std::memory_order_relaxed);
  s.inference_count = inference_count_.load(std::memory_order_relaxed);
  s.execution_count = execution_count_.load(std::memory_order_relaxed);
  s.success = success_.Load();
  s.fail = fail_.Load();
  s.queue = queue_.Load();
  s.compute_input = compute_input_.Load();
  s.compute_infer = compute_infer_.Load();
  s.compute_output = compute_output_.Load();
  s.cache_hit = cache_hit_.Load();
  s.cache_miss = cache_miss_.Load();
  const FrontendStages& stages = *frontend_stages_;
  const auto load = [](const FrontendStages::Counter& c) {
    return StatisticsSnapshot::Duration{c.count.load(std::memory_order_relaxed), c.ns.load(std::memory_order_relaxed)};
  };
  s.decode = load(stages.decode_);
  s.encode = load(stages.encode_);
  s.write = load(stages.write_);
  s.write_failed = stages.write_failed_.load(std::memory_order_relaxed);
  s.failures = {bad_request_.load(std::memory_order_relaxed), rejected_.load(std::memory_order_relaxed),
                timeout_.load(std::memory_order_relaxed), cancelled_.load(std::memory_order_relaxed),
                backend_error_.load(std::memory_order_relaxed)};
  for (size_t size = 1; size < by_batch_size_.size(); ++size) {
    const AtomicBatchSize& batch = by_batch_size_[size];
    StatisticsSnapshot::BatchSize entry{size, batch.input.Load(), batch.infer.Load(),
                                        batch.output.Load()};
    if (entry.compute_infer.count > 0) s.batch_stats.push_back(entry);
  }
  return s;
}

}  // namespace infera
