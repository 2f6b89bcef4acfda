// RunReport: the result schema of one `infera bench` run — what the table, CSV, JSON
// and plot writers (report_writers.h) print, and what bench scripts read back.
//
// One LevelResult per load level of the sweep (a concurrency or a request rate). All
// latencies are in microseconds in this struct. Streaming APIs (OpenAI completions and
// chat) fill `ttft`, `tpot` and the token counts; for KServe tensor inference
// they stay empty and the writers leave them out.
#ifndef INFERA_TOOLS_BENCH_RUN_REPORT_H_
#define INFERA_TOOLS_BENCH_RUN_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/bench/latency_histogram.h"
#include "tools/bench/server_stats.h"
#include "tools/bench/window_stats.h"

namespace infera::bench {

struct LatencySummary {
  int64_t count = 0;
  double mean_us = 0, min_us = 0, p50_us = 0, p90_us = 0, p95_us = 0, p99_us = 0, max_us = 0;

  static LatencySummary From(const LatencyHistogram& histogram);
};

struct LevelResult {
  // The load: closed loop (concurrency > 0) or open loop (request_rate > 0).
  int concurrency = 0;
  double request_rate = 0;
  std::string distribution;  // open loop: "constant" | "poisson"

  // Measurement.
  bool stable = false;  // false: max trials, --duration, or time limit ended it
  int windows = 0;      // windows merged into this result
  double duration_s = 0;
  int64_t sent = 0, ok = 0, errors = 0, dropped = 0;
  double throughput_rps = 0;  // successful requests per second
  double inferences_per_s = 0;  // throughput x batch size
  double send_rate = 0;         // open loop: requests sent per second (vs request_rate)
  LatencySummary latency;       // successful requests
  double metric_latency_us = 0;  // what stability and --latency-threshold use (mean or --percentile)
  LatencySummary send_lag;      // open loop: how late requests went out
  LatencySummary ttft, tpot;    // streaming APIs only
  int64_t output_tokens = 0;
  double output_tokens_per_s = 0;
  std::map<std::string, ErrorCount> error_counts;

  // Server side, when available.
  std::optional<ServerBreakdown> server;   // from the statistics endpoint
  double client_cpu_pct = 0;               // of one core, this process
  // This process's CPU µs per request completed over the measured span (the load
  // generator shares the machine with the server; 0 when nothing completed).
  double client_cpu_us_per_request = 0;
  // CPU taken meanwhile by every other process (not this one, not --server-pid's tree),
  // as % of the whole machine: how noisy the measurement was.
  double foreign_cpu_pct = 0;
  std::optional<double> server_cpu_pct;    // --server-pid: of one core
  std::optional<double> server_cpu_us_per_request;
};

struct RunReport {
  std::string command_line;
  std::string started_at;  // ISO 8601, UTC
  std::string url;         // host:port
  std::string protocol;    // "http" | "grpc"
  bool streaming = false;  // gRPC over ModelStreamInfer (--streaming)
  std::string service_kind = "kserve";
  std::string model, model_version, platform;
  int64_t batch_size = 1;
  std::string input_data;  // random | zero | FILE
  std::string input_format, output_format;  // json | binary
  size_t num_payloads = 0;
  int client_threads = 1;
  bool check = false;
  std::string mode;  // "concurrency" | "request_rate"
  std::string request_intervals_file;  // request_rate from --request-intervals FILE: the file
  std::string latency_metric;  // "avg" or "p99" etc: what stability and the threshold use
  std::vector<LevelResult> levels;

  // Whole run, warm-up and drain included: sent == ok + errors (nothing in flight at
  // the end), and server_requests counts what the server saw (when it has statistics).
  int64_t total_sent = 0, total_ok = 0, total_errors = 0, total_dropped = 0;
  std::optional<int64_t> server_requests;  // successes + failures per the server
  std::string stop_reason;  // empty: the sweep completed
  bool server_stats_available = false;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_RUN_REPORT_H_
