#include "manager/model_statistics.h"

#include <chrono>

namespace infera {

void ModelStatistics::RecordSuccess(uint64_t request_ns, uint64_t queue_ns, uint64_t rows) {
  success_.Add(1, request_ns);
  queue_.Add(1, queue_ns);
  inference_count_.fetch_add(rows, std::memory_order_relaxed);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  last_inference_ms_.store(std::chrono::duration_cast<std::chrono::milliseconds>(now).count(),
                           std::memory_order_relaxed);
}

void ModelStatistics::RecordFailure(uint64_t request_ns) { fail_.Add(1, request_ns); }

void ModelStatistics::RecordExecution(uint64_t num_requests, uint64_t input_ns, uint64_t infer_ns,
                                      uint64_t output_ns) {
  execution_count_.fetch_add(1, std::memory_order_relaxed);
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
  return s;
}

}  // namespace infera
