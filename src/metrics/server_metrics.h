// ServerMetrics: infera's Prometheus registry — every metric family (docs/metrics.md),
// the factory for per-model series, server-level series, and the text exposition.
//
// The registry and the text format are prometheus-cpp's; infera's HTTP stack serves
// Serialize() on /metrics (HTTP port and --metrics-port).
//
// Thread-safe.
//
// Usage:
//   ServerMetrics metrics;
//   std::shared_ptr<ModelMetrics> m = metrics.ForModel("resnet18", 1);
//   m->ObserveSuccess(0.012, 0.001);           // hot path
//   std::string text = metrics.Serialize();    // on scrape
#ifndef INFERA_METRICS_SERVER_METRICS_H_
#define INFERA_METRICS_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "metrics/llm_metrics.h"
#include "metrics/model_metrics.h"
#include "metrics/triton_metrics.h"
#include "prometheus/registry.h"

namespace infera {

class ServerMetrics {
 public:
  // IMPORTANT: outlives every handle it hands out (ForModel(), ForLlm()).
  // `triton` chooses which of Triton's nv_inference_* families are exported
  // (triton_metrics.h); they are on by default.
  explicit ServerMetrics(const TritonMetricsOptions& triton = {});

  // The series of one model version (labels model, version), infera's and Triton's
  // (ModelMetrics::triton(); none when Triton's families are off). Handles for the same
  // labels share one set of series: prometheus-cpp hands the same metric objects to
  // every Add() with identical labels and frees them on Remove(), and a reload loads
  // the new version (same name and number) before the retiring one lets go. So the
  // first ForModel() of a label set creates its series and the last handle released
  // removes them from /metrics; creation and removal happen under one mutex, so a
  // release never frees what a concurrent ForModel() hands out.
  std::shared_ptr<ModelMetrics> ForModel(const std::string& model, int64_t version);
  // The series of one LLM (label model; its per-request token histograms bucketed up to
  // `max_model_len`). IMPORTANT: an exclusive owner — at most one per model at a time
  // (llm::LlmMetricsSeries shares it between versions).
  std::unique_ptr<LlmMetrics> ForLlm(const std::string& model, int64_t max_model_len);

  // One HTTP response with `status` (hot path: lock-free after the first of a code).
  void CountHttpResponse(int status);
  // The HTTP server's responses so far per status code (HttpServer::ResponseCounts),
  // read at each scrape: infera_http_requests_total advances by the delta since the last
  // call. Use either this or CountHttpResponse for a server, not both.
  void SetHttpResponseCounts(const std::vector<std::pair<int, uint64_t>>& counts);
  void SetHttpInflight(double n) { http_inflight_->Set(n); }
  // The HTTP server's write-side figures (HttpServer::Stats), read at each scrape:
  // infera_http_buffered_response_bytes, infera_http_write_timeouts_total and
  // infera_http_rejected_over_buffer_limit_total (the counters advance by the delta).
  void SetHttpWriteStats(double buffered_response_bytes, uint64_t write_timeouts,
                         uint64_t rejected_over_buffer_limit);
  // infera_http_tls_handshake_failures_total: the HTTP and metrics ports' failed TLS
  // handshakes so far (HttpServer::Stats; the counter advances by the delta).
  void SetHttpTlsHandshakeFailures(uint64_t failures);

  struct VersionReadiness {
    std::string model;
    int64_t version = 0;
    bool ready = false;
  };
  // Replaces the readiness series (infera_model_ready, infera_models_loaded,
  // infera_server_ready) with the current state.
  void SetReadiness(const std::vector<VersionReadiness>& versions, bool server_ready);

  struct CanaryReading {
    std::string model;
    int state = 0;  // 1 active, 2 rolled back, 3 promoted
    double weight_percent = 0;
  };
  // Replaces the canary series (infera_canary_state, infera_canary_weight_percent).
  void SetCanaries(const std::vector<CanaryReading>& canaries);

  // The exposition text (refreshes the process metrics first): every family, then the
  // LLM families again under vLLM's names (vllm_names.h).
  std::string Serialize();

 private:
  // The infera_http_requests_total series of `status` (0-599), created on first use.
  prometheus::Counter* HttpResponseCounter(int status);
  void RefreshProcessMetrics();
  // The deleter of a ForModel() handle: the last user of `key` removes its series.
  void ReleaseModelSeries(const std::pair<std::string, int64_t>& key);

  std::shared_ptr<prometheus::Registry> registry_;
  ModelMetricFamilies model_families_;
  bool triton_enabled_;
  TritonMetricFamilies triton_families_;  // registered only when triton_enabled_
  struct SharedModelSeries {
    std::unique_ptr<ModelMetrics> series;
    int users = 0;
  };
  absl::Mutex model_series_mu_;
  std::map<std::pair<std::string, int64_t>, SharedModelSeries> model_series_
      ABSL_GUARDED_BY(model_series_mu_);
  LlmMetricFamilies llm_families_;

  prometheus::Family<prometheus::Counter>* http_requests_;
  std::array<std::atomic<prometheus::Counter*>, 600> http_by_code_{};
  absl::Mutex http_mu_;  // serialises first-time creation of a code's counter
  prometheus::Gauge* http_inflight_;
  prometheus::Gauge* http_buffered_bytes_;
  prometheus::Counter* http_write_timeouts_;
  prometheus::Counter* http_rejected_over_buffer_;
  absl::Mutex http_write_mu_;  // serialises the counters' delta updates
  uint64_t http_write_timeouts_seen_ ABSL_GUARDED_BY(http_write_mu_) = 0;
  std::array<uint64_t, 600> http_responses_seen_ ABSL_GUARDED_BY(http_write_mu_){};
  uint64_t http_rejected_seen_ ABSL_GUARDED_BY(http_write_mu_) = 0;
  prometheus::Counter* http_tls_handshake_failures_;
  uint64_t http_tls_handshake_failures_seen_ ABSL_GUARDED_BY(http_write_mu_) = 0;

  prometheus::Family<prometheus::Gauge>* model_ready_;
  prometheus::Gauge* models_loaded_;
  prometheus::Gauge* server_ready_;
  absl::Mutex readiness_mu_;
  std::map<std::pair<std::string, int64_t>, prometheus::Gauge*> readiness_
      ABSL_GUARDED_BY(readiness_mu_);

  prometheus::Family<prometheus::Gauge>* canary_state_;
  prometheus::Family<prometheus::Gauge>* canary_weight_;
  std::map<std::string, std::pair<prometheus::Gauge*, prometheus::Gauge*>> canaries_
      ABSL_GUARDED_BY(readiness_mu_);

  prometheus::Gauge* resident_memory_;
  prometheus::Counter* cpu_seconds_;  // advanced by the /proc delta at each scrape
  double cpu_seconds_seen_ ABSL_GUARDED_BY(process_mu_) = 0;
  absl::Mutex process_mu_;
  prometheus::Gauge* start_time_;
  prometheus::Gauge* open_fds_;
};

}  // namespace infera

#endif  // INFERA_METRICS_SERVER_METRICS_H_
