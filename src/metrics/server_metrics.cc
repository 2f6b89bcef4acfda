#include "metrics/server_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "prometheus/text_serializer.h"

namespace infera {
namespace {

template <typename Builder>
auto& Build(Builder builder, const char* name, const char* help, prometheus::Registry& registry) {
  return builder.Name(name).Help(help).Register(registry);
}

double ResidentBytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  double count = 0;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count - 3;  // ".", ".." and the directory's own descriptor
}

}  // namespace

ServerMetrics::ServerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  using prometheus::BuildCounter;
  using prometheus::BuildGauge;
  using prometheus::BuildHistogram;
  model_families_ = {
      &Build(BuildCounter(), "infera_requests_total", "Inference requests by outcome.", r),
      &Build(BuildCounter(), "infera_inferences_total", "Rows inferred (a batch-4 request counts 4).", r),
      &Build(BuildCounter(), "infera_executions_total", "Backend executions (batches).", r),
      &Build(BuildHistogram(), "infera_request_duration_seconds",
             "End-to-end duration of successful requests, request read to response ready.", r),
      &Build(BuildHistogram(), "infera_queue_duration_seconds", "Time requests waited in the scheduler queue.", r),
      &Build(BuildHistogram(), "infera_compute_duration_seconds",
             "Duration of one backend execution including input gather and output split.", r),
      &Build(BuildHistogram(), "infera_batch_size", "Rows per backend execution.", r),
      &Build(BuildGauge(), "infera_queue_depth", "Requests waiting for an instance.", r),
      &Build(BuildGauge(), "infera_inflight_requests", "Requests queued or executing.", r),
      &Build(BuildGauge(), "infera_instance_busy_ratio",
             "Fraction of the last interval the model's instances spent executing.", r),
      &Build(BuildGauge(), "infera_load_ratio",
             "Demand over capacity in the last interval: arrivals/s x mean service time / instances.", r),
  };
  llm_families_ = {
      &Build(BuildHistogram(), "infera_llm_time_to_first_token_seconds", "Time to first token.", r),
      &Build(BuildHistogram(), "infera_llm_inter_token_latency_seconds", "Time between output tokens.", r),
      &Build(BuildHistogram(), "infera_llm_e2e_request_latency_seconds", "End-to-end LLM request latency.", r),
      &Build(BuildHistogram(), "infera_llm_queue_time_seconds", "Time LLM requests waited to be scheduled.", r),
      &Build(BuildCounter(), "infera_llm_prompt_tokens_total", "Prompt tokens processed.", r),
      &Build(BuildCounter(), "infera_llm_generation_tokens_total", "Tokens generated.", r),
      &Build(BuildGauge(), "infera_llm_running_sequences", "Sequences in the running batch.", r),
      &Build(BuildGauge(), "infera_llm_waiting_sequences", "Sequences waiting to be scheduled.", r),
      &Build(BuildGauge(), "infera_llm_kv_cache_usage_ratio", "Fraction of KV cache blocks in use.", r),
      &Build(BuildCounter(), "infera_llm_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.", r),
      &Build(BuildCounter(), "infera_llm_prefix_cache_hits_total", "Prompt tokens found in the prefix cache.", r),
      &Build(BuildCounter(), "infera_llm_preemptions_total", "Sequences preempted for lack of KV cache.", r),
  };
  http_requests_ = &Build(BuildCounter(), "infera_http_requests_total", "HTTP responses by status code.", r);
  http_inflight_ = &Build(BuildGauge(), "infera_http_inflight_requests", "HTTP requests being served.", r).Add({});
  http_buffered_bytes_ = &Build(BuildGauge(), "infera_http_buffered_response_bytes",
                                "Bytes of HTTP responses produced but not yet taken by the clients' sockets.", r)
                              .Add({});
  http_write_timeouts_ = &Build(BuildCounter(), "infera_http_write_timeouts_total",
                                "HTTP connections closed because the client read nothing for the write timeout.", r)
                              .Add({});
  http_rejected_over_buffer_ =
      &Build(BuildCounter(), "infera_http_rejected_over_buffer_limit_total",
             "HTTP responses answered 503, and streams cut off, because clients left too many bytes unread.", r)
           .Add({});
  model_ready_ = &Build(BuildGauge(), "infera_model_ready", "1 when the model version is READY.", r);
  models_loaded_ = &Build(BuildGauge(), "infera_models_loaded", "Model versions READY.", r).Add({});
  server_ready_ = &Build(BuildGauge(), "infera_server_ready", "1 when /v2/health/ready answers 200.", r).Add({});
  canary_state_ = &Build(BuildGauge(), "infera_canary_state",
                         "Canary of a model: 1 active, 2 rolled back automatically, 3 promoted.", r);
  canary_weight_ = &Build(BuildGauge(), "infera_canary_weight_percent",
                          "Share of unversioned traffic the canary receives.", r);
  resident_memory_ = &Build(BuildGauge(), "process_resident_memory_bytes", "Resident memory size in bytes.", r).Add({});
  cpu_seconds_ = &Build(BuildCounter(), "process_cpu_seconds_total", "User and system CPU time in seconds.", r).Add({});
  start_time_ = &Build(BuildGauge(), "process_start_time_seconds", "Start time since the Unix epoch in seconds.", r).Add({});
  open_fds_ = &Build(BuildGauge(), "process_open_fds", "Open file descriptors.", r).Add({});
  start_time_->Set(static_cast<double>(std::time(nullptr)));
}

void ServerMetrics::SetHttpWriteStats(double buffered_response_bytes, uint64_t write_timeouts,
                                      uint64_t rejected_over_buffer_limit) {
  http_buffered_bytes_->Set(buffered_response_bytes);
  absl::MutexLock lock(&http_write_mu_);
  if (write_timeouts > http_write_timeouts_seen_) {
    http_write_timeouts_->Increment(static_cast<double>(write_timeouts - http_write_timeouts_seen_));
    http_write_timeouts_seen_ = write_timeouts;
  }
  if (rejected_over_buffer_limit > http_rejected_seen_) {
    http_rejected_over_buffer_->Increment(static_cast<double>(rejected_over_buffer_limit - http_rejected_seen_));
    http_rejected_seen_ = rejected_over_buffer_limit;
  }
}

std::shared_ptr<ModelMetrics> ServerMetrics::ForModel(const std::string& model, int64_t version) {
  auto key = std::make_pair(model, version);
  absl::MutexLock lock(&model_series_mu_);
  SharedModelSeries& shared = model_series_[key];
  if (shared.series == nullptr) shared.series = std::make_unique<ModelMetrics>(model_families_, model, version);
  ++shared.users;
  return std::shared_ptr<ModelMetrics>(shared.series.get(),
                                       [this, key = std::move(key)](ModelMetrics*) { ReleaseModelSeries(key); });
}

void ServerMetrics::ReleaseModelSeries(const std::pair<std::string, int64_t>& key) {
  absl::MutexLock lock(&model_series_mu_);
  auto it = model_series_.find(key);
  if (it == model_series_.end() || --it->second.users > 0) return;
  // Destroyed under the lock: its Family::Remove() calls finish before a concurrent
  // ForModel() of the same labels can Add() them again.
  model_series_.erase(it);
}

std::unique_ptr<LlmMetrics> ServerMetrics::ForLlm(const std::string& model) {
  return std::make_unique<LlmMetrics>(llm_families_, model);
}

void ServerMetrics::CountHttpResponse(int status) {
  if (status < 0 || status >= static_cast<int>(http_by_code_.size())) return;
  prometheus::Counter* counter = http_by_code_[status].load(std::memory_order_acquire);
  if (counter == nullptr) {
    absl::MutexLock lock(&http_mu_);
    counter = http_by_code_[status].load(std::memory_order_relaxed);
    if (counter == nullptr) {
      counter = &http_requests_->Add({{"code", std::to_string(status)}});
      http_by_code_[status].store(counter, std::memory_order_release);
    }
  }
  counter->Increment();
}

void ServerMetrics::SetReadiness(const std::vector<VersionReadiness>& versions, bool server_ready) {
  absl::MutexLock lock(&readiness_mu_);
  std::map<std::pair<std::string, int64_t>, prometheus::Gauge*> current;
  double loaded = 0;
  for (const VersionReadiness& v : versions) {
    const auto key = std::make_pair(v.model, v.version);
    auto it = readiness_.find(key);
    prometheus::Gauge* gauge = nullptr;
    if (it != readiness_.end()) {
      gauge = it->second;
      readiness_.erase(it);
    } else {
      gauge = &model_ready_->Add({{"model", v.model}, {"version", std::to_string(v.version)}});
    }
    gauge->Set(v.ready ? 1 : 0);
    loaded += v.ready ? 1 : 0;
    current[key] = gauge;
  }
  for (auto& [key, gauge] : readiness_) model_ready_->Remove(gauge);  // gone versions
  readiness_ = std::move(current);
  models_loaded_->Set(loaded);
  server_ready_->Set(server_ready ? 1 : 0);
}

void ServerMetrics::SetCanaries(const std::vector<CanaryReading>& canaries) {
  absl::MutexLock lock(&readiness_mu_);
  std::map<std::string, std::pair<prometheus::Gauge*, prometheus::Gauge*>> current;
  for (const CanaryReading& c : canaries) {
    auto it = canaries_.find(c.model);
    std::pair<prometheus::Gauge*, prometheus::Gauge*> gauges;
    if (it != canaries_.end()) {
      gauges = it->second;
      canaries_.erase(it);
    } else {
      gauges = {&canary_state_->Add({{"model", c.model}}), &canary_weight_->Add({{"model", c.model}})};
    }
    gauges.first->Set(c.state);
    gauges.second->Set(c.weight_percent);
    current[c.model] = gauges;
  }
  for (auto& [model, gauges] : canaries_) {
    canary_state_->Remove(gauges.first);
    canary_weight_->Remove(gauges.second);
  }
  canaries_ = std::move(current);
}

void ServerMetrics::RefreshProcessMetrics() {
  resident_memory_->Set(ResidentBytes());
  open_fds_->Set(OpenFds());
  absl::MutexLock lock(&process_mu_);
  const double cpu = CpuSeconds();
  if (cpu > cpu_seconds_seen_) cpu_seconds_->Increment(cpu - cpu_seconds_seen_);
  cpu_seconds_seen_ = std::max(cpu, cpu_seconds_seen_);
}

std::string ServerMetrics::Serialize() {
  RefreshProcessMetrics();
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace infera
