// Command-line options of `infera serve`.
//
// Flag names follow Triton's tritonserver where the meaning is the same, so an
// operator's muscle memory (and scripts) carry over. Both `--flag=value` and
// `--flag value` are accepted.
#ifndef INFERA_SERVER_OPTIONS_H_
#define INFERA_SERVER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/admin_guard.h"
#include "security/tls_config.h"

namespace infera {

struct ServeOptions {
  std::string model_repository;
  std::string http_address = "0.0.0.0";
  int http_port = 8000;
  int http_thread_count = 0;  // 0: one per core, at most 4
  uint64_t http_max_input_size = 64ull << 20;
  int http_read_timeout_secs = 30;
  int http_write_timeout_secs = 30;
  uint64_t http_max_buffered_response_bytes = 512ull << 20;
  std::string grpc_address = "0.0.0.0";
  int grpc_port = 8001;
  uint64_t grpc_max_message_bytes = 64ull << 20;
  int grpc_infer_threads = 0;  // 0 (not given): one per CPU this process may use
  int metrics_port = 8002;
  // --http-health-port: a plaintext port answering only /v2/health/live and
  // /v2/health/ready (kubelet probes when the HTTP port requires mutual TLS). -1: off.
  int http_health_port = -1;
  bool allow_metrics = true;
  // Triton's nv_inference_* families beside infera's (--triton-metrics), and their
  // latency counters (Triton's --metrics-config counter_latencies).
  bool triton_metrics = true;
  bool metrics_counter_latencies = true;
  // Triton's summary_latencies / summary_quantiles (empty: Triton's default quantiles).
  bool metrics_summary_latencies = false;
  std::vector<std::pair<double, double>> metrics_summary_quantiles;
  // Triton --metrics-config settings infera accepts but does not act on (histogram
  // latencies): one start-up warning each, so a Triton command line still starts.
  std::vector<std::string> metrics_config_ignored;
  std::string server_id = "infera";  // --id: the name GET /v2 and ServerMetadata report
  std::string model_control_mode = "none";  // none | poll | explicit
  int repository_poll_secs = 15;
  std::vector<std::string> load_models;     // explicit mode: loaded at start
  std::string admin_token;                  // empty: admin API needs no token
  std::string audit_log_file;               // empty: audit lines go to the server log
  // API keys (docs/api_keys.md): --api-key (or env INFERA_API_KEY) and --api-key-file.
  // Neither: inference and reads stay open.
  std::string api_key;
  std::string api_key_file;
  // Triton's restricted-API groups, "<categories>:<key>=<value>" (api/admin_guard.h).
  std::vector<std::string> http_restricted_api;
  std::vector<std::string> grpc_restricted_protocol;
  // Admin API categories opened to every client without a credential (--allow-admin-api;
  // --allow-client-shm=true adds shared-memory). Closed by default (api/admin_guard.h).
  std::vector<ApiCategory> allow_admin_api;
  // TLS for the HTTP and metrics ports, and for gRPC unless Triton's --grpc-use-ssl flags
  // are given (docs/tls.md). Off (plaintext) without --tls-cert-file.
  TlsConfig tls;
  // Triton's gRPC SSL flags, as given (FinishTlsOptions turns them into grpc_tls).
  bool grpc_use_ssl = false;
  bool grpc_use_ssl_mutual = false;
  std::string grpc_server_cert;
  std::string grpc_server_key;
  std::string grpc_root_cert;
  // What the gRPC port serves: Triton's flags when any is given, else `tls`.
  TlsConfig grpc_tls;
  // Triton's --strict-readiness: true, the server is ready only when every model is
  // (one failed load takes it out); false, ready once it has started and is not draining,
  // whatever its models' states (each model's own readiness still says which serve).
  bool strict_readiness = true;
  int shutdown_delay_secs = 0;
  // Tracing (docs/metrics.md#tracing). Trace mode "triton" writes Triton's JSON
  // traces to trace_file; "opentelemetry" exports OTLP to trace_endpoint.
  std::string trace_endpoint;  // empty: no OTLP export
  std::string trace_file;      // empty: no trace file
  // "triton" or "opentelemetry"; FinishTraceOptions sets it when not given (opentelemetry
  // with --trace-endpoint, else triton).
  std::string trace_mode;
  // Triton's trace_level values as given (OFF, TIMESTAMPS, TENSORS; repeatable). Empty:
  // TIMESTAMPS with --trace-endpoint, OFF otherwise (Triton's default).
  std::vector<std::string> trace_level;
  // Every N-th request is traced; unset: 100 (opentelemetry) or 1000 (triton, Triton's).
  std::optional<int64_t> trace_rate;
  int64_t trace_count = -1;
  int64_t trace_log_frequency = 0;
  int exit_timeout_secs = 30;
  int log_verbose = 0;
  std::string log_format = "text";  // text | ISO8601 | json
  // Triton's --log-info / --log-warning / --log-error (common/log_switches.h).
  bool log_info = true;
  bool log_warning = true;
  bool log_error = true;
  int model_load_thread_count = 0;  // 0: one per usable CPU, at most 8 (LoadThreads)
  std::string cpu_placement = "none";  // none | pinned (docs/cpu_placement.md)
  int max_queue_size = 1024;
  // The response cache's capacity (--cache-config local,size=N; docs/response_cache.md).
  // 0: no cache.
  uint64_t response_cache_bytes = 0;
  bool help = false;
};

// Parses the arguments after `infera serve`. InvalidArgument naming the flag for an
// unknown flag, a missing or malformed value, or a missing --model-repository: one line,
// which `infera serve` prints followed by a pointer to --help (not the whole help).
absl::StatusOr<ServeOptions> ParseServeOptions(const std::vector<std::string>& args);

// A boolean flag's value as Triton parses it: true/on/1 or false/off/0, any case.
// InvalidArgument quoting the value otherwise.
absl::StatusOr<bool> ParseBoolFlagValue(std::string_view value);

// Triton's --cache-config value "<cache>,<key>=<value>": only the `local` cache and its
// `size` key (bytes). InvalidArgument naming what is wrong.
absl::StatusOr<uint64_t> ParseCacheConfig(std::string_view value);

// The threads that load models: --model-load-thread-count, or for 0 one per CPU the
// process may use (`cpus`), at most 8 (each load in flight holds a model's file and its
// deserialised and optimised copies: the cap bounds the memory peak of a start).
int LoadThreads(const ServeOptions& options, int cpus);

// The `infera serve --help` text: what infera serves, then every flag, its default and
// what it does, no line over kHelpColumns. Each flag's line starts "  --NAME [VALUE]"; its
// description goes on over lines indented deeper (tests/deploy/deploy_checks.py reads the
// flags and their "Default N" from it).
std::string ServeHelpText();

// The widest line of every --help and usage text (an 100-column terminal shows them unwrapped).
inline constexpr size_t kHelpColumns = 100;

}  // namespace infera

#endif  // INFERA_SERVER_OPTIONS_H_
