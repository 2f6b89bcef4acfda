#include "server/options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <optional>

#include "api/admin_guard.h"
#include "common/cpu_placement.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "security/tls_config.h"

namespace infera {
namespace {

// The largest response cache: a bound, not a reservation (entries are allocated as
// answers are cached).
constexpr uint64_t kMaxResponseCacheBytes = 1ull << 40;

// The smallest non-zero --trace-rate: every billionth request (1/P must fit an int64_t).
constexpr double kMinTraceRate = 1e-9;

struct Flag {
  const char* name;
  const char* value_name;  // nullptr: a boolean switch
  const char* help;
  std::function<absl::Status(ServeOptions&, std::string_view)> set;
};

template <typename T>
std::function<absl::Status(ServeOptions&, std::string_view)> Integer(T ServeOptions::*field,
                                                                       T min, T max) {
  return [=](ServeOptions& o, std::string_view value) -> absl::Status {
    T parsed{};
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (ec != std::errc() || end != value.data() + value.size() || parsed < min || parsed > max) {
      return absl::InvalidArgumentError(
          StrCat("'", value, "' is not an integer in [", min, ", ", max, "]"));
    }
    o.*field = parsed;
    return absl::OkStatus();
  };
}

std::function<absl::Status(ServeOptions&, std::string_view)> Bool(bool ServeOptions::*field) {
  return [=](ServeOptions& o, std::string_view value) -> absl::Status {
    ASSIGN_OR_RETURN(o.*field, ParseBoolFlagValue(value));
    return absl::OkStatus();
  };
}

absl::Status SetText(std::string& field, std::string_view value) {
  if (value.empty()) return absl::InvalidArgumentError("needs a non-empty value");
  field = std::string(value);
  return absl::OkStatus();
}

// Triton's summary_quantiles: "Q:E,Q:E,..." (a quantile and its allowed error, each
// strictly between 0 and 1: the summary's estimator divides by q, 1 - q and uses E as a
// rank tolerance).
absl::StatusOr<std::vector<std::pair<double, double>>> ParseSummaryQuantiles(std::string_view value) {
  if (value.empty()) return absl::InvalidArgumentError("summary_quantiles needs Q:E[,Q:E...]");
  auto in_open_unit_interval = [](std::string_view text, double& parsed) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    return ec == std::errc() && end == text.data() + text.size() && parsed > 0 && parsed < 1;
  };
  std::vector<std::pair<double, double>> quantiles;
  while (!value.empty()) {
    const size_t comma = value.find(',');
    const std::string_view pair = value.substr(0, comma);
    const size_t colon = pair.find(':');
    double quantile = 0, error = 0;
    if (colon == pair.npos || !in_open_unit_interval(pair.substr(0, colon), quantile) ||
        !in_open_unit_interval(pair.substr(colon + 1), error)) {
      return absl::InvalidArgumentError(StrCat(
          "summary_quantiles: '", pair, "' is not QUANTILE:ERROR with both in (0, 1)"));
    }
    if (quantiles.size() == 16) return absl::InvalidArgumentError("summary_quantiles: at most 16 quantiles");
    quantiles.emplace_back(quantile, error);
    value = comma == value.npos ? std::string_view() : value.substr(comma + 1);
    if (comma != std::string_view::npos && value.empty()) {
      return absl::InvalidArgumentError("summary_quantiles: trailing ','");
    }
  }
  return quantiles;
}

// --trace-rate: Triton's integer N >= 1 (every N-th request), or infera's fraction P
// (0, or 1e-9 to 1: every round(1/P)-th). The two agree at 1.
absl::Status SetTraceRate(ServeOptions& o, std::string_view v) {
  int64_t every = 0;
  auto [int_end, int_ec] = std::from_chars(v.data(), v.data() + v.size(), every);
  if (int_ec == std::errc() && int_end == v.data() + v.size() && every >= 0) {
    o.trace_rate = every;
    return absl::OkStatus();
  }
  double rate = -1;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), rate);
  // "nan" parses and passes every comparison, and round(1/P) of a tiny P does not fit an
  // integer: finite, and 0 or at least kMinTraceRate.
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(rate) ||
      !(rate == 0 || (rate >= kMinTraceRate && rate <= 1))) {
    return absl::InvalidArgumentError(StrCat("'", v, "' is not an integer N >= 0 (every N-th request) or a fraction in [",
                                             kMinTraceRate, ", 1]"));
  }
  o.trace_rate = rate > 0 ? std::max<int64_t>(1, std::llround(1.0 / rate)) : 0;
  return absl::OkStatus();
}

absl::Status SetTraceLevel(ServeOptions& o, std::string_view v) {
  if (v != "OFF" && v != "TIMESTAMPS" && v != "TENSORS") {
    return absl::InvalidArgumentError(StrCat("'", v, "' is not a trace level (OFF, TIMESTAMPS or TENSORS)"));
  }
  o.trace_level.emplace_back(v);
  return absl::OkStatus();
}

absl::Status SetTraceInteger(int64_t& field, std::string_view v, int64_t min) {
  int64_t parsed = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || parsed < min) {
    return absl::InvalidArgumentError(StrCat("'", v, "' is not an integer >= ", min));
  }
  field = parsed;
  return absl::OkStatus();
}

absl::Status SetTraceMode(ServeOptions& o, std::string_view v) {
  if (v != "triton" && v != "opentelemetry") {
    return absl::InvalidArgumentError(StrCat("mode '", v, "' is not triton or opentelemetry"));
  }
  o.trace_mode = std::string(v);
  return absl::OkStatus();
}

// Triton's --trace-config [MODE,]SETTING=VALUE.
absl::Status SetTraceConfig(ServeOptions& o, std::string_view v) {
  std::string_view mode;
  std::string_view setting = v;
  const size_t comma = v.find(',');
  if (comma != std::string_view::npos && comma < v.find('=')) {
    mode = v.substr(0, comma);
    setting = v.substr(comma + 1);
  }
  const size_t eq = setting.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("'", v, "' is not [triton,|opentelemetry,]SETTING=VALUE"));
  }
  const std::string_view key = setting.substr(0, eq), value = setting.substr(eq + 1);
  absl::Status status;
  if (mode.empty()) {
    if (key == "rate") {
      status = SetTraceRate(o, value);
    } else if (key == "level") {
      status = SetTraceLevel(o, value);
    } else if (key == "count") {
      status = SetTraceInteger(o.trace_count, value, -1);
    } else if (key == "mode") {
      status = SetTraceMode(o, value);
    } else {
      return absl::InvalidArgumentError(
          StrCat("'", v, "': unknown global trace setting '", key, "' (rate, level, count, mode)"));
    }
  } else if (mode == "triton") {
    if (key == "file") {
      status = SetText(o.trace_file, value);
    } else if (key == "log-frequency") {
      status = SetTraceInteger(o.trace_log_frequency, value, 0);
    } else {
      return absl::InvalidArgumentError(StrCat("'", v, "': unknown triton trace setting '", key, "' (file, log-frequency)"));
    }
  } else if (mode == "opentelemetry") {
    if (key == "url") {
      status = SetText(o.trace_endpoint, value);
    } else {
      return absl::InvalidArgumentError(
          StrCat("'", v, "': opentelemetry setting '", key, "' is not supported (infera knows url)"));
    }
  } else {
    return absl::InvalidArgumentError(StrCat("'", v, "': unknown trace mode '", mode, "' (triton or opentelemetry)"));
  }
  if (!status.ok()) return absl::InvalidArgumentError(StrCat("'", v, "': ", status.message()));
  return absl::OkStatus();
}

// One trace mode, and its destination: a file for triton, an endpoint for opentelemetry.
absl::Status FinishTraceOptions(ServeOptions& o) {
  if (o.trace_mode.empty()) o.trace_mode = o.trace_endpoint.empty() ? "triton" : "opentelemetry";
  if (o.trace_mode == "triton" && !o.trace_endpoint.empty()) {
    return absl::InvalidArgumentError(
        "--trace-endpoint (opentelemetry,url) is for trace mode opentelemetry, but mode is triton "
        "(drop --trace-config mode=triton, or the endpoint)");
  }
  if (o.trace_mode == "opentelemetry") {
    if (!o.trace_file.empty()) {
      return absl::InvalidArgumentError(
          "--trace-file (triton,file) is for trace mode triton, but mode is opentelemetry: choose one");
    }
    for (const std::string& level : o.trace_level) {
      if (level == "TENSORS") {
        return absl::InvalidArgumentError(
            "--trace-config level=TENSORS: trace mode opentelemetry records timestamps only (TENSORS "
            "needs mode triton and a trace file)");
      }
    }
  }
  return absl::OkStatus();
}

// Resolves which TLS files the gRPC port serves and checks both configurations.
absl::Status FinishTlsOptions(ServeOptions& options) {
  RETURN_IF_ERROR(ValidateTlsConfig(options.tls, "--tls-"));
  const bool triton_flags = options.grpc_use_ssl || options.grpc_use_ssl_mutual ||
                            !options.grpc_server_cert.empty() || !options.grpc_server_key.empty() ||
                            !options.grpc_root_cert.empty();
  if (!triton_flags) {
    options.grpc_tls = options.tls;
    return absl::OkStatus();
  }
  if (!options.grpc_use_ssl && !options.grpc_use_ssl_mutual) {
    return absl::InvalidArgumentError("--grpc-server-cert / --grpc-server-key / --grpc-root-cert need --grpc-use-ssl=true");
  }
  if (options.grpc_server_cert.empty() || options.grpc_server_key.empty()) {
    return absl::InvalidArgumentError("--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key");
  }
  options.grpc_tls = TlsConfig{options.grpc_server_cert, options.grpc_server_key, options.grpc_root_cert,
                               options.grpc_use_ssl_mutual ? TlsClientAuth::kRequire : TlsClientAuth::kNone};
  return ValidateTlsConfig(options.grpc_tls, "--grpc-");
}

std::function<absl::Status(ServeOptions&, std::string_view)> Text(std::string ServeOptions::*field) {
  return [=](ServeOptions& o, std::string_view value) { return SetText(o.*field, value); };
}

const std::vector<Flag>& Flags() {
  static const std::vector<Flag> flags = {
      {"model-repository", "DIR", "Triton-layout model repository to serve (required).",
       Text(&ServeOptions::model_repository)},
      {"id", "NAME",
       "The server's name in GET /v2 and gRPC ServerMetadata (Triton's --id). Default infera.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         if (v.empty() || v.size() > 128) return absl::InvalidArgumentError("must be 1 to 128 bytes");
         o.server_id = std::string(v);
         return absl::OkStatus();
       }},
      {"http-address", "ADDR", "Address the HTTP server binds. Default 0.0.0.0.",
       Text(&ServeOptions::http_address)},
      {"http-port", "N", "HTTP port (KServe v2 REST). 0 picks a free port and logs it. Default 8000.",
       Integer(&ServeOptions::http_port, 0, 65535)},
      {"http-health-port", "N",
       "A plaintext port answering only /v2/health/live and /v2/health/ready (as the HTTP "
       "port does; every other path 404), for kubelet probes when the HTTP port requires "
       "client certificates (docs/tls.md). 0 picks a free port and logs it. Default: off.",
       Integer(&ServeOptions::http_health_port, 0, 65535)},
      {"strict-readiness", "true|false",
       "Triton's flag. true: /v2/health/ready, gRPC ServerReady and grpc.health.v1 say ready "
       "only when every model is ready (one failed load takes the server out of a load "
       "balancer). false: ready once the server has started and is not draining, even if "
       "models failed to load; /v2/models/NAME/ready still tells each model. Default true.",
       Bool(&ServeOptions::strict_readiness)},
      {"http-thread-count", "N",
       "HTTP I/O threads (each serves many connections). Default: one per core, at most 4.",
       Integer(&ServeOptions::http_thread_count, 0, 256)},
      {"http-max-input-size", "BYTES",
       "Largest request body accepted; larger ones get 413. Default 67108864 (64 MiB).",
       Integer<uint64_t>(&ServeOptions::http_max_input_size, 1, 1ull << 40)},
      {"http-read-timeout-secs", "N",
       "A request must arrive completely within N seconds (else 408); idle keep-alive "
       "connections are closed after N seconds. Default 30.",
       Integer(&ServeOptions::http_read_timeout_secs, 1, 3600)},
      {"http-write-timeout-secs", "N",
       "A response write that makes no progress (the client reads nothing) for N seconds "
       "closes the connection. Default 30.",
       Integer(&ServeOptions::http_write_timeout_secs, 1, 3600)},
      {"http-max-buffered-response-bytes", "BYTES",
       "Bytes of finished HTTP responses that clients have not read yet, all connections "
       "together; a response over it (while others wait) gets 503. Default 536870912 (512 MiB).",
       Integer<uint64_t>(&ServeOptions::http_max_buffered_response_bytes, 1, 1ull << 40)},
      {"grpc-address", "ADDR", "Address the gRPC server binds. Default 0.0.0.0.",
       Text(&ServeOptions::grpc_address)},
      {"grpc-port", "N",
       "gRPC port (KServe v2 gRPC + grpc.health.v1). 0 picks a free port and logs it. "
       "Default 8001.",
       Integer(&ServeOptions::grpc_port, 0, 65535)},
      {"grpc-max-message-bytes", "BYTES",
       "Largest gRPC request or response message; larger ones fail with RESOURCE_EXHAUSTED. "
       "Default 67108864 (64 MiB).",
       Integer<uint64_t>(&ServeOptions::grpc_max_message_bytes, 1, 2147483647)},
      {"grpc-infer-threads", "N",
       "Threads serving gRPC ModelInfer / ModelStreamInfer, each polling its own completion "
       "queue and running the calls it receives. Default: one per CPU this process may use.",
       Integer(&ServeOptions::grpc_infer_threads, 1, 1024)},
      {"metrics-port", "N",
       "Port serving Prometheus /metrics (also served on the HTTP port). 0 picks a free port "
       "and logs it. Default 8002.",
       Integer(&ServeOptions::metrics_port, 0, 65535)},
      {"allow-metrics", "true|false", "Record and serve Prometheus metrics. Default true.",
       Bool(&ServeOptions::allow_metrics)},
      {"triton-metrics", "true|false",
       "Also export Triton's per-model families (nv_inference_request_success, "
       "nv_inference_queue_duration_us, ...) so Triton's dashboards work. Default true.",
       Bool(&ServeOptions::triton_metrics)},
      {"metrics-config", "KEY=VALUE",
       "Triton's metrics settings: counter_latencies=true|false (the "
       "nv_inference_*_duration_us counters; default true), summary_latencies=true|false (the "
       "nv_inference_*_summary_us summaries; default false), summary_quantiles=Q:E,... "
       "(default 0.5:0.05,0.9:0.01,0.95:0.001,0.99:0.001). histogram_latencies is accepted "
       "with a warning (infera exports its own latency histograms).",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         const size_t eq = v.find('=');
         const std::string_view key = v.substr(0, eq), value = eq == v.npos ? "" : v.substr(eq + 1);
         if (key == "counter_latencies") {
           absl::StatusOr<bool> on = ParseBoolFlagValue(value);
           if (!on.ok()) return absl::InvalidArgumentError(StrCat("'", v, "': counter_latencies: ", on.status().message()));
           o.metrics_counter_latencies = *on;
           return absl::OkStatus();
         }
         if (key == "summary_latencies" || key == "histogram_latencies") {
           absl::StatusOr<bool> on = ParseBoolFlagValue(value);
           if (!on.ok()) return absl::InvalidArgumentError(StrCat("'", v, "': ", key, ": ", on.status().message()));
           if (key == "summary_latencies") {
             o.metrics_summary_latencies = *on;
           } else {
             o.metrics_config_ignored.push_back(std::string(v));
           }
           return absl::OkStatus();
         }
         if (key == "summary_quantiles") {
           ASSIGN_OR_RETURN(o.metrics_summary_quantiles, ParseSummaryQuantiles(value));
           return absl::OkStatus();
         }
         return absl::InvalidArgumentError(StrCat(
             "'", v, "': unknown key (infera knows counter_latencies, summary_latencies, "
             "summary_quantiles, histogram_latencies)"));
       }},
      {"trace-endpoint", "URL",
       "OTLP/HTTP (JSON) traces endpoint, e.g. http://collector:4318/v1/traces. Empty: no "
       "tracing. Export is batched and never blocks requests.",
       [](ServeOptions& o, std::string_view v) {
         o.trace_endpoint = std::string(v);
         return absl::OkStatus();
       }},
      {"trace-rate", "N|P",
       "Deprecated Triton flag, as --trace-config rate=N: every N-th request is traced "
       "(Triton's trace_rate). A fraction P in (0, 1] means every round(1/P)-th (infera's "
       "older form; 0: none). In opentelemetry mode a request whose W3C traceparent is "
       "sampled is traced too. Default 1000 (triton mode) or 100 (opentelemetry). "
       "Changeable at run time: /v2/trace/setting.",
       SetTraceRate},
      {"trace-config", "[MODE,]SETTING=VALUE",
       "Triton's trace settings (repeatable): rate=N, level=OFF|TIMESTAMPS|TENSORS (repeat for "
       "both), count=N (-1: unlimited), mode=triton|opentelemetry; triton,file=PATH (Triton's "
       "JSON traces), triton,log-frequency=N (a new file PATH.0, PATH.1, ... every N traces; "
       "0: one file); opentelemetry,url=URL (as --trace-endpoint).",
       SetTraceConfig},
      {"trace-file", "PATH", "Deprecated Triton flag, as --trace-config triton,file=PATH.",
       [](ServeOptions& o, std::string_view v) { return SetText(o.trace_file, v); }},
      {"trace-level", "LEVEL", "Deprecated Triton flag, as --trace-config level=LEVEL (repeatable).",
       SetTraceLevel},
      {"trace-count", "N", "Deprecated Triton flag, as --trace-config count=N.",
       [](ServeOptions& o, std::string_view v) { return SetTraceInteger(o.trace_count, v, -1); }},
      {"trace-log-frequency", "N", "Deprecated Triton flag, as --trace-config triton,log-frequency=N.",
       [](ServeOptions& o, std::string_view v) { return SetTraceInteger(o.trace_log_frequency, v, 0); }},
      {"model-control-mode", "none|poll|explicit",
       "none: load every model at start. poll: also rescan the repository every "
       "--repository-poll-secs and load, reload or unload what changed. explicit: load only "
       "--load-model models, then what the repository API asks for. Default none.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         if (v != "none" && v != "poll" && v != "explicit") {
           return absl::InvalidArgumentError("must be none, poll or explicit");
         }
         o.model_control_mode = std::string(v);
         return absl::OkStatus();
       }},
      {"repository-poll-secs", "N", "Poll interval in poll mode. Default 15.",
       Integer(&ServeOptions::repository_poll_secs, 1, 86400)},
      {"load-model", "NAME",
       "Explicit mode: a model to load at start (repeat the flag; * loads all).",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         if (v.empty()) return absl::InvalidArgumentError("needs a model name");
         o.load_models.emplace_back(v);
         return absl::OkStatus();
       }},
      {"admin-token", "TOKEN",
       "Require 'Authorization: Bearer TOKEN' for the admin API: repository load/unload, "
       "canary promotion, /v2/logging, trace setting updates, shared-memory register / "
       "unregister (HTTP and gRPC); a token also opens them to its holders. Default: no "
       "token, and those operations are off unless --allow-admin-api, --allow-client-shm or "
       "explicit mode (load/unload/promote) opens them.",
       Text(&ServeOptions::admin_token)},
      {"audit-log-file", "PATH",
       "Append the audit log (one JSON line per admin action and per refused admin access; "
       "docs/security.md) to PATH, created 0600. Default: the server log, tagged \"audit\".",
       Text(&ServeOptions::audit_log_file)},
      {"api-key", "KEY",
       "Require 'Authorization: Bearer KEY' (gRPC metadata authorization) on every route but "
       "health and the metrics port; the key may read and infer on every model. Prefer env "
       "INFERA_API_KEY (kept out of `ps`). docs/api_keys.md.",
       Text(&ServeOptions::api_key)},
      {"api-key-file", "PATH",
       "API keys, hashed at rest, one per line: '<id> sha256:<hex> rights=read,infer,admin "
       "models=<globs> [rps=N] [tokens_per_min=N]'; reloaded when the file changes. With keys, "
       "--admin-token is a key with every right. Create keys with `infera api-key create`.",
       Text(&ServeOptions::api_key_file)},
      {"allow-admin-api", "CATEGORIES",
       "Open the admin operations of these categories (model-repository, logging, "
       "shared-memory, trace; comma-separated, repeatable) to every client that reaches the "
       "ports, without --admin-token or a restricted-API header. Logs a SECURITY warning at "
       "start. Default: none (reads stay open).",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(std::vector<ApiCategory> categories, ParseApiCategories(v));
         for (ApiCategory c : categories) {
           if (std::find(o.allow_admin_api.begin(), o.allow_admin_api.end(), c) == o.allow_admin_api.end()) {
             o.allow_admin_api.push_back(c);
           }
         }
         return absl::OkStatus();
       }},
      {"allow-client-shm", "true|false",
       "Triton's switch: let every client register system shared-memory regions (the same as "
       "--allow-admin-api=shared-memory; with --admin-token or a restricted shared-memory group "
       "their holders may register anyway). Default false.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(const bool allow, ParseBoolFlagValue(v));
         auto it = std::find(o.allow_admin_api.begin(), o.allow_admin_api.end(), ApiCategory::kSharedMemory);
         if (allow && it == o.allow_admin_api.end()) o.allow_admin_api.push_back(ApiCategory::kSharedMemory);
         if (!allow && it != o.allow_admin_api.end()) o.allow_admin_api.erase(it);
         return absl::OkStatus();
       }},
      {"http-restricted-api", "CATEGORIES:KEY=VALUE",
       "Triton's restricted API groups: requests to the categories (model-repository, "
       "logging, shared-memory, trace; comma-separated) need HTTP header KEY: VALUE, else 403. "
       "Repeatable; a category may be in one group only. In addition to --admin-token.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         if (absl::Status s = ParseApiRestriction(v).status(); !s.ok()) return s;
         o.http_restricted_api.emplace_back(v);
         return absl::OkStatus();
       }},
      {"grpc-restricted-protocol", "CATEGORIES:KEY=VALUE",
       "The same for gRPC: the RPCs of the categories need metadata "
       "'triton-grpc-protocol-KEY: VALUE', else PERMISSION_DENIED. Repeatable.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         if (absl::Status s = ParseApiRestriction(v).status(); !s.ok()) return s;
         o.grpc_restricted_protocol.emplace_back(v);
         return absl::OkStatus();
       }},
      {"tls-cert-file", "PEM",
       "Serve TLS (1.2 and 1.3) on the HTTP, metrics and gRPC ports with this certificate "
       "chain; needs --tls-key-file. Both files are read again when they change on disk "
       "(cert-manager rotation) without a restart. Default: plaintext (docs/tls.md).",
       [](ServeOptions& o, std::string_view v) { return SetText(o.tls.cert_file, v); }},
      {"tls-key-file", "PEM", "The private key of --tls-cert-file.",
       [](ServeOptions& o, std::string_view v) { return SetText(o.tls.key_file, v); }},
      {"tls-ca-file", "PEM",
       "Mutual TLS: the CAs client certificates must chain to (with --tls-client-auth).",
       [](ServeOptions& o, std::string_view v) { return SetText(o.tls.ca_file, v); }},
      {"tls-client-auth", "none|optional|require",
       "Mutual TLS: ask clients for a certificate verified against --tls-ca-file; require "
       "refuses a client without one in the handshake. Default none.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(o.tls.client_auth, ParseTlsClientAuth(v));
         return absl::OkStatus();
       }},
      {"grpc-use-ssl", "true|false",
       "Triton's flag: TLS on the gRPC port with --grpc-server-cert / --grpc-server-key (then "
       "the --tls-* flags do not apply to gRPC). Default false.",
       Bool(&ServeOptions::grpc_use_ssl)},
      {"grpc-use-ssl-mutual", "true|false",
       "Triton's flag: gRPC clients must present a certificate verified against "
       "--grpc-root-cert (implies --grpc-use-ssl). Default false.",
       Bool(&ServeOptions::grpc_use_ssl_mutual)},
      {"grpc-server-cert", "PEM", "Triton's flag: the gRPC port's certificate chain.",
       Text(&ServeOptions::grpc_server_cert)},
      {"grpc-server-key", "PEM", "Triton's flag: the gRPC port's private key.",
       Text(&ServeOptions::grpc_server_key)},
      {"grpc-root-cert", "PEM", "Triton's flag: the CAs gRPC client certificates must chain to.",
       Text(&ServeOptions::grpc_root_cert)},
      {"shutdown-delay-secs", "N",
       "On SIGTERM, readiness turns false at once but requests are served normally for N "
       "seconds (endpoint propagation on Kubernetes) before the drain. Default 0.",
       Integer(&ServeOptions::shutdown_delay_secs, 0, 3600)},
      {"exit-timeout-secs", "N",
       "On SIGTERM/SIGINT, wait up to N seconds for in-flight requests before exiting. "
       "A second signal exits at once. Default 30.",
       Integer(&ServeOptions::exit_timeout_secs, 0, 86400)},
      {"log-verbose", "N", "Verbose logging level; 1 logs every request outcome. Default 0.",
       Integer(&ServeOptions::log_verbose, 0, 10)},
      {"log-info", "true|false", "Write INFO messages (Triton's switch). Default true.",
       Bool(&ServeOptions::log_info)},
      {"log-warning", "true|false", "Write WARNING messages (Triton's switch). Default true.",
       Bool(&ServeOptions::log_warning)},
      {"log-error", "true|false", "Write ERROR messages (Triton's switch). Default true.",
       Bool(&ServeOptions::log_error)},
      {"log-format", "text|ISO8601|json",
       "Log line format: human text (Triton's name: default), the same with Triton's ISO8601 "
       "timestamps, or one JSON object per line.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         if (v != "text" && v != "default" && v != "json" && v != "ISO8601") {
           return absl::InvalidArgumentError("must be text (or default), ISO8601 or json");
         }
         o.log_format = v == "json" ? "json" : v == "ISO8601" ? "ISO8601" : "text";
         return absl::OkStatus();
       }},
      {"model-load-thread-count", "N",
       "Threads that load models at start (largest first; a model's instances are created and "
       "warmed on them in parallel too) and that run repository load/unload requests. 0: one per "
       "CPU the process may use, at most 8. Default 0.",
       Integer(&ServeOptions::model_load_thread_count, 0, 64)},
      {"cpu-placement", "none|pinned",
       "pinned: give the I/O threads (HTTP, gRPC, the rest of the server) and each pytorch "
       "instance's intra-op threads their own CPUs and pin them there; the topology found "
       "and the plan are logged (docs/cpu_placement.md). none: the kernel schedules. "
       "Default none.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         RETURN_IF_ERROR(ParseCpuPlacementMode(v).status());
         o.cpu_placement = std::string(v);
         return absl::OkStatus();
       }},
      {"max-queue-size", "N",
       "Requests that may wait per model version before new ones are rejected with 429. "
       "Default 1024.",
       Integer(&ServeOptions::max_queue_size, 1, 1 << 24)},
      {"cache-config", "local,size=BYTES",
       "Triton's response cache: answers of models whose config has response_cache "
       "{ enable: true } are cached, least recently used out beyond BYTES "
       "(docs/response_cache.md). Only the `local` cache. Default: no cache.",
       [](ServeOptions& o, std::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(o.response_cache_bytes, ParseCacheConfig(v));
         return absl::OkStatus();
       }},
      {"response-cache-byte-size", "BYTES",
       "Triton's deprecated form of --cache-config local,size=BYTES.",
       Integer<uint64_t>(&ServeOptions::response_cache_bytes, 0, kMaxResponseCacheBytes)},
      {"help", nullptr, "Show this help.",
       [](ServeOptions& o, std::string_view) {
         o.help = true;
         return absl::OkStatus();
       }},
  };
  return flags;
}

}  // namespace

absl::StatusOr<ServeOptions> ParseServeOptions(const std::vector<std::string>& args) {
  ServeOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "-h") arg = "--help";
    if (arg.substr(0, 2) != "--") {
      return absl::InvalidArgumentError(StrCat("unexpected argument '", arg, "' (flags start with --)"));
    }
    arg.remove_prefix(2);
    std::string_view name = arg.substr(0, arg.find('='));
    std::optional<std::string_view> value;
    if (name.size() < arg.size()) value = arg.substr(name.size() + 1);
    const Flag* flag = nullptr;
    for (const Flag& f : Flags()) {
      if (name == f.name) flag = &f;
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(StrCat("unknown flag --", name));
    }
    if (!value && flag->value_name != nullptr) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(StrCat("--", name, " needs a value (", flag->value_name, ")"));
      }
      value = args[++i];
    }
    absl::Status status = flag->set(options, value.value_or(""));
    if (!status.ok()) return absl::InvalidArgumentError(StrCat("--", name, ": ", status.message()));
  }
  if (!options.help && options.model_repository.empty()) {
    return absl::InvalidArgumentError("--model-repository is required");
  }
  // A category in two groups of one transport is refused at start, as Triton does.
  for (const auto* groups : {&options.http_restricted_api, &options.grpc_restricted_protocol}) {
    AdminGuard::Options guard;
    for (const std::string& group : *groups) guard.restrictions.push_back(*ParseApiRestriction(group));
    if (absl::Status s = AdminGuard::Create(std::move(guard)).status(); !s.ok()) {
      return absl::InvalidArgumentError(
          StrCat(groups == &options.http_restricted_api ? "--http-restricted-api: "
                                                        : "--grpc-restricted-protocol: ",
                 s.message()));
    }
  }
  if (!options.help) RETURN_IF_ERROR(FinishTlsOptions(options));
  if (!options.help) RETURN_IF_ERROR(FinishTraceOptions(options));
  if (!options.load_models.empty() && options.model_control_mode != "explicit") {
    return absl::InvalidArgumentError("--load-model needs --model-control-mode=explicit");
  }
  return options;
}

absl::StatusOr<bool> ParseBoolFlagValue(std::string_view value) {
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "true" || lower == "on" || lower == "1") return true;
  if (lower == "false" || lower == "off" || lower == "0") return false;
  return absl::InvalidArgumentError(StrCat("must be true or false (or 1, 0, on, off), not '", value, "'"));
}

absl::StatusOr<uint64_t> ParseCacheConfig(std::string_view value) {
  const size_t comma = value.find(',');
  const std::string_view cache = value.substr(0, comma);
  if (cache != "local") {
    return absl::InvalidArgumentError(
        StrCat("cache '", cache, "' is not supported (only 'local': local,size=BYTES)"));
  }
  if (comma == std::string_view::npos) return absl::InvalidArgumentError("expected local,size=BYTES");
  const std::string_view setting = value.substr(comma + 1);
  const size_t equals = setting.find('=');
  if (equals == std::string_view::npos || setting.substr(0, equals) != "size") {
    return absl::InvalidArgumentError(StrCat("unknown setting '", setting, "' of the local cache (expected size=BYTES)"));
  }
  const std::string_view number = setting.substr(equals + 1);
  uint64_t bytes = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), bytes);
  if (ec != std::errc() || end != number.data() + number.size() || bytes > kMaxResponseCacheBytes) {
    return absl::InvalidArgumentError(
        StrCat("size '", number, "' is not an integer in [0, ", kMaxResponseCacheBytes, "]"));
  }
  return bytes;
}

int LoadThreads(const ServeOptions& options, int cpus) {
  if (options.model_load_thread_count > 0) return options.model_load_thread_count;
  return std::clamp(cpus, 1, 8);
}

namespace {

// `text` as lines of at most `width` characters (words are never split; a word longer
// than `width` gets a line of its own).
std::vector<std::string> WrapWords(std::string_view text, size_t width) {
  std::vector<std::string> lines(1);
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t space = text.find(' ', pos);
    const std::string_view word = text.substr(pos, space == text.npos ? text.npos : space - pos);
    pos = space == text.npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width) lines.emplace_back();
    if (!lines.back().empty()) lines.back() += ' ';
    lines.back() += word;
  }
  return lines;
}

}  // namespace

std::string ServeHelpText() {
  // Each flag: "  --name VALUE" in the left column, its description wrapped beside it
  // (below it when the name does not fit), continuation lines indented to the column.
  constexpr size_t kColumn = 36;
  std::string text =
      "Usage: infera serve --model-repository DIR [flags]\n"
      "\n"
      "Serves every model of a Triton-layout repository, on one HTTP port (--http-port):\n"
      "  KServe v2 REST    /v2/models/NAME/infer, /v2/health/ready, ... (Triton's API)\n"
      "  OpenAI API        /v1/chat/completions, /v1/completions for LLMs (backend \"llm\"),\n"
      "                    /v1/embeddings for embedding models, /v1/models lists both\n"
      "  web console       http://HOST:HTTP_PORT/console (models, live charts, playground, chat)\n"
      "and KServe v2 gRPC on --grpc-port, Prometheus metrics on --metrics-port.\n"
      "Boolean flags take true|false (or 1|0); --flag=VALUE and --flag VALUE both work.\n"
      "\n"
      "Flags:\n";
  for (const Flag& f : Flags()) {
    const std::string left = StrCat("  --", f.name, f.value_name ? StrCat(" ", f.value_name) : "");
    const std::vector<std::string> lines = WrapWords(f.help, kHelpColumns - kColumn);
    const std::string indent(kColumn, ' ');
    size_t first = 0;
    if (left.size() + 2 <= kColumn) {  // two spaces at least between name and text
      text += StrCat(left, std::string(kColumn - left.size(), ' '), lines[0], "\n");
      first = 1;
    } else {
      text += left + "\n";
    }
    for (size_t i = first; i < lines.size(); ++i) text += StrCat(indent, lines[i], "\n");
  }
  return text;
}

}  // namespace infera
