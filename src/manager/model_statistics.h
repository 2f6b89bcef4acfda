// ModelStatistics: the one place a model version's request outcomes and durations are
// recorded. It keeps cumulative counters in the shape of Triton's statistics extension
// (counts and summed nanoseconds per stage), read by the statistics endpoints, and
// feeds the version's Prometheus series (ModelMetrics: infera's and Triton's
// nv_inference_* families) in the same calls when metrics are on.
//
// Recorded on the hot path with relaxed atomic adds (no lock); a snapshot is not
// atomic across fields — fine for monitoring.
//
// Thread-safe.
#ifndef INFERA_MANAGER_MODEL_STATISTICS_H_
#define INFERA_MANAGER_MODEL_STATISTICS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "manager/latency_histogram.h"
#include "metrics/model_metrics.h"

namespace infera {

struct StatisticsSnapshot {
  struct Duration {
    uint64_t count = 0;
    uint64_t ns = 0;
  };
  // Executions of one batch size (Triton's batch_stats); stage durations are per
  // execution, not per request.
  struct BatchSize {
    uint64_t batch_size = 0;
    Duration compute_input;
    Duration compute_infer;
    Duration compute_output;
  };
  // Failed requests by reason (their sum is fail.count).
  struct Failures {
    uint64_t bad_request = 0;    // InvalidArgument and other client errors
    uint64_t rejected = 0;       // queue full, unloading (ResourceExhausted, Unavailable)
    uint64_t timeout = 0;        // expired in the queue (DeadlineExceeded)
    uint64_t cancelled = 0;      // client went away before execution
    uint64_t backend_error = 0;  // execution or output check failed (Internal, other)
  };
  uint64_t last_inference_ms = 0;  // wall clock, ms since epoch
  uint64_t inference_count = 0;    // rows served (a batch-4 request counts 4)
  uint64_t execution_count = 0;    // backend executions
  Duration success;                // end to end, successful requests
  Duration fail;                   // end to end, failed requests
  Duration queue;
  Duration compute_input;
  Duration compute_infer;
  Duration compute_output;
  std::vector<BatchSize> batch_stats;  // only sizes that ran, ascending
  Failures failures;
  // The response cache (docs/response_cache.md), as Triton's statistics: hits (ns: the
  // lookup) and misses (ns: the lookup plus the insert of the answer).
  Duration cache_hit;
  Duration cache_miss;
  // Frontend stages (not in Triton's statistics; read by the diagnosis): request body →
  // InferRequest, InferResponse → body, and (HTTP) response handed to the socket → last
  // byte taken. `write_failed` counts answers whose client was gone (a disconnect).
  Duration decode;
  Duration encode;
  Duration write;
  uint64_t write_failed = 0;
};

class ModelStatistics {
 public:
  // Batch sizes 1..max_batch_size get their own counters (larger ones are clamped).
  // `metrics` (may be null) receives the same events as Prometheus series.
  explicit ModelStatistics(int max_batch_size = 0, std::shared_ptr<ModelMetrics> metrics = nullptr);

  void RecordSuccess(uint64_t request_ns, uint64_t queue_ns, uint64_t rows);
  // A request answered from the response cache: a success (end to end `request_ns`, no
  // queue) and a cache hit whose lookup took `lookup_ns`; as Triton, no inference or
  // execution is counted.
  void RecordCacheHit(uint64_t request_ns, uint64_t lookup_ns);
  // A request the cache did not hold, executed and then inserted (`ns`: lookup + insert).
  void RecordCacheMiss(uint64_t ns);
  // A failed request; `code` decides its reason bucket.
  void RecordFailure(absl::StatusCode code, uint64_t request_ns);
  // One backend execution of `batch_rows` rows from `num_requests` requests, with its
  // stage durations (shared by its requests).
  void RecordExecution(uint64_t num_requests, uint64_t batch_rows, uint64_t input_ns,
                       uint64_t infer_ns, uint64_t output_ns);
  // The transports' stage counters (decode, encode, write), in an object of their own
  // so that a request being answered records into them without holding its version:
  // a held version handle would keep an unload or a shutdown drain waiting.
  class FrontendStages {
   public:
    void RecordDecode(uint64_t ns) { decode_.Add(1, ns); }
    void RecordEncode(uint64_t ns) { encode_.Add(1, ns); }
    // One response write; `completed` false when the client was gone.
    void RecordWrite(uint64_t ns, bool completed) {
      write_.Add(1, ns);
      if (!completed) write_failed_.fetch_add(1, std::memory_order_relaxed);
    }

   private:
    friend class ModelStatistics;
    struct Counter {
      std::atomic<uint64_t> count{0};
      std::atomic<uint64_t> ns{0};
      void Add(uint64_t n, uint64_t duration_ns) {
        count.fetch_add(n, std::memory_order_relaxed);
        ns.fetch_add(duration_ns, std::memory_order_relaxed);
      }
    };
    Counter decode_, encode_, write_;
    std::atomic<uint64_t> write_failed_{0};
  };
  // Shared with requests in flight; never null.
  const std::shared_ptr<FrontendStages>& frontend_stages() const { return frontend_stages_; }
  void RecordDecode(uint64_t ns) const { frontend_stages_->RecordDecode(ns); }
  void RecordEncode(uint64_t ns) const { frontend_stages_->RecordEncode(ns); }
  void RecordWrite(uint64_t ns, bool completed) const { frontend_stages_->RecordWrite(ns, completed); }
  StatisticsSnapshot Snapshot() const;

  ModelMetrics* metrics() const { return metrics_.get(); }

  // When these counters started (all zero then): the start of the version's history.
  std::chrono::steady_clock::time_point created() const { return created_; }

  // Latencies of successful requests (cumulative; for windowed quantiles).
  const LatencyHistogram& latency() const { return latency_; }

 private:
  std::shared_ptr<ModelMetrics> metrics_;  // shared with a reload of this version
  const std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  LatencyHistogram latency_;
  struct AtomicDuration {
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> ns{0};
    void Add(uint64_t n, uint64_t duration_ns) {
      count.fetch_add(n, std::memory_order_relaxed);
      ns.fetch_add(duration_ns, std::memory_order_relaxed);
    }
    StatisticsSnapshot::Duration Load() const {
      return {count.load(std::memory_order_relaxed), ns.load(std::memory_order_relaxed)};
    }
  };
  std::atomic<uint64_t> last_inference_ms_{0};
  std::atomic<uint64_t> inference_count_{0};
  std::atomic<uint64_t> execution_count_{0};
  AtomicDuration success_, fail_, queue_, compute_input_, compute_infer_, compute_output_;
  AtomicDuration cache_hit_, cache_miss_;
  const std::shared_ptr<FrontendStages> frontend_stages_ = std::make_shared<FrontendStages>();
  struct AtomicBatchSize {
    AtomicDuration input, infer, output;
  };
  std::vector<AtomicBatchSize> by_batch_size_;  // index = batch size; fixed at construction
  std::atomic<uint64_t> bad_request_{0}, rejected_{0}, timeout_{0}, cancelled_{0},
      backend_error_{0};
};

}  // namespace infera

#endif  // INFERA_MANAGER_MODEL_STATISTICS_H_
