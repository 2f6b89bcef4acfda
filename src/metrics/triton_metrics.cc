#include "metrics/triton_metrics.h"

namespace infera {
namespace {

prometheus::Family<prometheus::Counter>* Counter(prometheus::Registry& registry, const char* name, const char* help) {
  return &prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::Family<prometheus::Summary>* Summary(prometheus::Registry& registry, const char* name, const char* help) {
  return &prometheus::BuildSummary().Name(name).Help(help).Register(registry);
}

// Microseconds from nanoseconds, unrounded: the counter then equals the statistics
// extension's nanosecond sum / 1000.
double Micros(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

const char* TritonFailureReasonName(TritonFailureReason reason) {
  switch (reason) {
    case TritonFailureReason::kRejected: return "REJECTED";
    case TritonFailureReason::kCanceled: return "CANCELED";
    case TritonFailureReason::kBackend: return "BACKEND";
    case TritonFailureReason::kOther: return "OTHER";
    case TritonFailureReason::kCount: break;
  }
  return "OTHER";
}

TritonFailureReason TritonReasonOf(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::kRejected:
    case RequestOutcome::kTimeout: return TritonFailureReason::kRejected;
    case RequestOutcome::kCancelled: return TritonFailureReason::kCanceled;
    case RequestOutcome::kBackendError: return TritonFailureReason::kBackend;
    default: return TritonFailureReason::kOther;
  }
}

// Help texts are Triton's (core src/metrics.cc), so the families read the same.
TritonMetricFamilies RegisterTritonFamilies(prometheus::Registry& r, const TritonMetricsOptions& options) {
  TritonMetricFamilies f;
  f.request_success =
      Counter(r, "nv_inference_request_success", "Number of successful inference requests, all batch sizes");
  f.request_failure =
      Counter(r, "nv_inference_request_failure", "Number of failed inference requests, all batch sizes");
  f.inference_count =
      Counter(r, "nv_inference_count", "Number of inferences performed (does not include cached requests)");
  f.exec_count =
      Counter(r, "nv_inference_exec_count", "Number of model executions performed (does not include cached requests)");
  if (options.latency_counters) {
    f.request_duration_us = Counter(r, "nv_inference_request_duration_us",
                                    "Cumulative inference request duration in microseconds (includes cached requests)");
    f.queue_duration_us = Counter(r, "nv_inference_queue_duration_us",
                                  "Cumulative inference queuing duration in microseconds (includes cached requests)");
    f.compute_input_duration_us =
        Counter(r, "nv_inference_compute_input_duration_us",
                "Cumulative compute input duration in microseconds (does not include cached requests)");
    f.compute_infer_duration_us =
        Counter(r, "nv_inference_compute_infer_duration_us",
                "Cumulative compute inference duration in microseconds (does not include cached requests)");
    f.compute_output_duration_us =
        Counter(r, "nv_inference_compute_output_duration_us",
                "Cumulative inference compute output duration in microseconds (does not include cached requests)");
  }
  if (options.latency_summaries) {
    f.request_summary_us = Summary(r, "nv_inference_request_summary_us",
                                   "Summary of inference request duration in microseconds (includes cached requests)");
    f.queue_summary_us = Summary(r, "nv_inference_queue_summary_us",
                                 "Summary of inference queuing duration in microseconds (includes cached requests)");
    f.compute_input_summary_us =
        Summary(r, "nv_inference_compute_input_summary_us",
                "Summary of compute input duration in microseconds (does not include cached requests)");
    f.compute_infer_summary_us =
        Summary(r, "nv_inference_compute_infer_summary_us",
                "Summary of compute inference duration in microseconds (does not include cached requests)");
    f.compute_output_summary_us =
        Summary(r, "nv_inference_compute_output_summary_us",
                "Summary of compute output duration in microseconds (does not include cached requests)");
    f.cache_hit_summary_us = Summary(r, "nv_cache_hit_summary_us", "Summary of cache hit duration in microseconds");
    f.cache_miss_summary_us =
        Summary(r, "nv_cache_miss_summary_us", "Summary of cache miss duration in microseconds");
    for (const auto& [quantile, error] : options.summary_quantiles) f.quantiles.push_back({quantile, error});
  }
  f.pending_request_count = &prometheus::BuildGauge()
                                 .Name("nv_inference_pending_request_count")
                                 .Help("Instantaneous number of pending requests awaiting execution per-model.")
                                 .Register(r);
  return f;
}

TritonModelSeries::TritonModelSeries(const TritonMetricFamilies& families, const std::string& model, int64_t version)
    : families_(families), labels_({{"model", model}, {"version", std::to_string(version)}}) {
  const prometheus::Labels& labels = labels_;
  success_ = &families_.request_success->Add(labels);
  for (int i = 0; i < static_cast<int>(TritonFailureReason::kCount); ++i) {
    prometheus::Labels with_reason = labels;
    with_reason["reason"] = TritonFailureReasonName(static_cast<TritonFailureReason>(i));
    failures_[i] = &families_.request_failure->Add(with_reason);
  }
  inference_count_ = &families_.inference_count->Add(labels);
  exec_count_ = &families_.exec_count->Add(labels);
  if (families_.request_duration_us != nullptr) {
    request_duration_us_ = &families_.request_duration_us->Add(labels);
    queue_duration_us_ = &families_.queue_duration_us->Add(labels);
    compute_input_duration_us_ = &families_.compute_input_duration_us->Add(labels);
    compute_infer_duration_us_ = &families_.compute_infer_duration_us->Add(labels);
    compute_output_duration_us_ = &families_.compute_output_duration_us->Add(labels);
  }
  pending_ = &families_.pending_request_count->Add(labels);
  if (families_.request_summary_us != nullptr) {
    request_summary_us_ = &families_.request_summary_us->Add(labels, families_.quantiles);
    queue_summary_us_ = &families_.queue_summary_us->Add(labels, families_.quantiles);
    compute_input_summary_us_ = &families_.compute_input_summary_us->Add(labels, families_.quantiles);
    compute_infer_summary_us_ = &families_.compute_infer_summary_us->Add(labels, families_.quantiles);
    compute_output_summary_us_ = &families_.compute_output_summary_us->Add(labels, families_.quantiles);
  }
}

TritonModelSeries::~TritonModelSeries() {
  families_.request_success->Remove(success_);
  for (prometheus::Counter* c : failures_) families_.request_failure->Remove(c);
  families_.inference_count->Remove(inference_count_);
  families_.exec_count->Remove(exec_count_);
  if (request_duration_us_ != nullptr) {
    families_.request_duration_us->Remove(request_duration_us_);
    families_.queue_duration_us->Remove(queue_duration_us_);
    families_.compute_input_duration_us->Remove(compute_input_duration_us_);
    families_.compute_infer_duration_us->Remove(compute_infer_duration_us_);
    families_.compute_output_duration_us->Remove(compute_output_duration_us_);
  }
  families_.pending_request_count->Remove(pending_);
  if (request_summary_us_ != nullptr) {
    families_.request_summary_us->Remove(request_summary_us_);
    families_.queue_summary_us->Remove(queue_summary_us_);
    families_.compute_input_summary_us->Remove(compute_input_summary_us_);
    families_.compute_infer_summary_us->Remove(compute_infer_summary_us_);
    families_.compute_output_summary_us->Remove(compute_output_summary_us_);
  }
  if (cache_hit_summary_us_ != nullptr) {
    families_.cache_hit_summary_us->Remove(cache_hit_summary_us_);
    families_.cache_miss_summary_us->Remove(cache_miss_summary_us_);
  }
}

void TritonModelSeries::PrepareCacheSummaries() {
  std::call_once(cache_summaries_once_, [this] {
    if (families_.cache_hit_summary_us == nullptr) return;
    cache_hit_summary_us_ = &families_.cache_hit_summary_us->Add(labels_, families_.quantiles);
    cache_miss_summary_us_ = &families_.cache_miss_summary_us->Add(labels_, families_.quantiles);
  });
}

void TritonModelSeries::RecordCacheHit(uint64_t request_ns, uint64_t lookup_ns) {
  success_->Increment();
  if (request_summary_us_ != nullptr) {
    request_summary_us_->Observe(Micros(request_ns));
    queue_summary_us_->Observe(0);
    PrepareCacheSummaries();
    cache_hit_summary_us_->Observe(Micros(lookup_ns));
  }
  if (request_duration_us_ != nullptr) request_duration_us_->Increment(Micros(request_ns));
}

void TritonModelSeries::RecordCacheMiss(uint64_t ns) {
  if (request_summary_us_ == nullptr) return;
  PrepareCacheSummaries();
  cache_miss_summary_us_->Observe(Micros(ns));
}

void TritonModelSeries::RecordSuccess(uint64_t rows, uint64_t request_ns, uint64_t queue_ns) {
  success_->Increment();
  inference_count_->Increment(static_cast<double>(rows));
  if (request_summary_us_ != nullptr) {
    request_summary_us_->Observe(Micros(request_ns));
    queue_summary_us_->Observe(Micros(queue_ns));
  }
  if (request_duration_us_ == nullptr) return;
  request_duration_us_->Increment(Micros(request_ns));
  queue_duration_us_->Increment(Micros(queue_ns));
}

void TritonModelSeries::RecordExecution(uint64_t num_requests, uint64_t input_ns, uint64_t infer_ns,
                                        uint64_t output_ns) {
  exec_count_->Increment();
  if (compute_input_summary_us_ != nullptr) {
    for (uint64_t i = 0; i < num_requests; ++i) {
      compute_input_summary_us_->Observe(Micros(input_ns));
      compute_infer_summary_us_->Observe(Micros(infer_ns));
      compute_output_summary_us_->Observe(Micros(output_ns));
    }
  }
  if (compute_input_duration_us_ == nullptr) return;
  compute_input_duration_us_->Increment(Micros(input_ns * num_requests));
  compute_infer_duration_us_->Increment(Micros(infer_ns * num_requests));
  compute_output_duration_us_->Increment(Micros(output_ns * num_requests));
}

}  // namespace infera
