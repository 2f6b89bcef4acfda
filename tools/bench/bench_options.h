// BenchOptions: the command line of `infera bench`. Flag names follow Triton's
// perf_analyzer wherever the meaning is the same (-m, -x, -u, -i, -b,
// --concurrency-range, --request-rate-range, --request-distribution,
// --measurement-interval, --stability-percentage, --max-trials, --percentile,
// --latency-threshold, --input-data, --shape, --input-tensor-format,
// --output-tensor-format, -f, --ssl-grpc-*, --measurement-mode, --measurement-request-count,
// -v, --string-data, --request-intervals); the rest are infera's. perf_analyzer's --sync,
// --async and --max-threads are accepted and have no effect (infera's client is
// asynchronous on event loops): BenchOptions::notes says so. BenchHelpText() lists them
// all, wrapped to 100 columns.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_BENCH_OPTIONS_H_
#define INFERA_TOOLS_BENCH_BENCH_OPTIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "tools/bench/arrival_schedule.h"
#include "tools/bench/input_data.h"
#include "tools/bench/measurement_window.h"
#include "tools/bench/range_spec.h"

namespace infera::bench {

// perf_analyzer's --ssl-grpc-* flags: TLS (and a client certificate) to the gRPC port.
struct GrpcTlsFiles {
  bool use_ssl = false;
  std::string root_certificates_file;  // the CAs the server's certificate must chain to
  std::string private_key_file;        // mutual TLS: the client's key ...
  std::string certificate_chain_file;  // ... and certificate chain
};

struct BenchOptions {
  bool help = false;
  std::string model;
  std::string model_version;
  std::string host = "127.0.0.1";
  uint16_t port = 8000;  // 8001 with -i grpc unless -u is given
  bool url_given = false;
  std::string protocol = "http";        // http | grpc
  bool streaming = false;               // -i grpc: ModelStreamInfer instead of ModelInfer
  GrpcTlsFiles grpc_tls;                // -i grpc over TLS
  std::string service_kind = "kserve";  // kserve (triton accepted) | openai
  int64_t batch_size = 1;
  // OpenAI API (--service-kind openai): streaming completions or chat.
  std::string endpoint_type = "completions";  // completions | chat
  int64_t input_tokens = 64;
  int64_t output_tokens = 64;

  // Load: exactly one of the two (concurrency 1 when neither is given).
  std::optional<RangeSpec> concurrency_range;
  std::optional<RangeSpec> request_rate_range;
  ArrivalDistribution distribution = ArrivalDistribution::kConstant;
  int max_connections = 256;  // open loop: connections (requests in flight) at most
  int client_threads = 1;

  // Measurement.
  int64_t measurement_interval_ms = 2000;
  bool measurement_interval_given = false;  // count_windows: the minimum, else 1000 ms
  MeasurementMode measurement_mode = MeasurementMode::kTimeWindows;
  int64_t measurement_request_count = 50;   // count_windows
  // --request-intervals FILE: open loop with these gaps between arrivals (ns), a single
  // level at their mean rate (request_rate_range is set to it).
  std::vector<int64_t> request_gaps_ns;
  std::string request_intervals_file;
  double stability_percentage = 10;
  int max_trials = 10;
  std::optional<double> percentile;  // latency used for stability/threshold; else avg
  std::optional<double> latency_threshold_ms;
  int64_t warmup_ms = 1000;
  std::optional<double> duration_s;  // fixed measurement per level (no stability)
  double max_duration_s = 300;       // the whole run
  int64_t request_timeout_ms = 30000;

  // Data.
  InputDataOptions input;
  std::string images_dir;  // --images: encoded images for image inputs (image_inputs.h)
  std::string input_data_text = "random";
  std::map<std::string, Shape> shapes;
  bool binary_inputs = false;
  bool binary_outputs = false;
  bool check = false;
  // perf_analyzer's --shared-memory: "none" or "system" (bench_shared_memory.h).
  std::string shared_memory = "none";
  uint64_t output_shared_memory_size = 100 * 1024;  // per output slot

  // Output.
  std::string csv_file;
  std::string json_file;
  std::string plot_file;
  std::optional<int> server_pid;
  int progress = -1;  // -1: when stdout is a terminal; 0 off; 1 on
  bool verbose = false;  // -v: each measurement window on stderr

  // perf_analyzer flags accepted without effect, one sentence each for stderr.
  std::vector<std::string> notes;
};

// The window rule of --measurement-mode (measurement_window.h).
WindowRule MeasurementWindowRule(const BenchOptions& options);

absl::StatusOr<BenchOptions> ParseBenchOptions(const std::vector<std::string>& args);
std::string BenchHelpText();

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_BENCH_OPTIONS_H_
