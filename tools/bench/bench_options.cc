#include "tools/bench/bench_options.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "common/str_cat.h"

namespace infera::bench {
namespace {

using Setter = std::function<absl::Status(BenchOptions&, std::string_view)>;

struct Flag {
  const char* short_name;  // "" when none
  const char* name;
  const char* value_name;  // nullptr: a switch
  const char* help;
  Setter set;
};

template <typename T>
absl::Status ParseNumber(std::string_view text, T min, T max, T* out) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max || (std::is_floating_point_v<T> && !std::isfinite(static_cast<double>(value)))) {
    return absl::InvalidArgumentError(StrCat("'", text, "' is not a number in [", min, ", ", max, "]"));
  }
  *out = value;
  return absl::OkStatus();
}

template <typename T>
Setter Number(T BenchOptions::*field, T min, T max) {
  return [=](BenchOptions& o, std::string_view v) { return ParseNumber(v, min, max, &(o.*field)); };
}

template <typename T>
Setter OptionalNumber(std::optional<T> BenchOptions::*field, T min, T max) {
  return [=](BenchOptions& o, std::string_view v) -> absl::Status {
    T value{};
    if (absl::Status s = ParseNumber(v, min, max, &value); !s.ok()) return s;
    o.*field = value;
    return absl::OkStatus();
  };
}

absl::Status SetText(std::string& field, std::string_view v) {
  if (v.empty()) return absl::InvalidArgumentError("needs a non-empty value");
  field = std::string(v);
  return absl::OkStatus();
}

Setter Text(std::string BenchOptions::*field) {
  return [=](BenchOptions& o, std::string_view v) { return SetText(o.*field, v); };
}

Setter Choice(std::string BenchOptions::*field, std::vector<std::string> choices) {
  return [=](BenchOptions& o, std::string_view v) -> absl::Status {
    for (const std::string& c : choices) {
      if (v == c) {
        o.*field = c;
        return absl::OkStatus();
      }
    }
    return absl::InvalidArgumentError(StrCat("must be one of ", StrJoin(choices, ", ")));
  };
}

Setter Range(std::optional<RangeSpec> BenchOptions::*field) {
  return [=](BenchOptions& o, std::string_view v) -> absl::Status {
    auto range = ParseRangeSpec(v);
    if (!range.ok()) return range.status();
    o.*field = *range;
    return absl::OkStatus();
  };
}

Setter TensorFormat(bool BenchOptions::*field) {
  return [=](BenchOptions& o, std::string_view v) -> absl::Status {
    if (v != "json" && v != "binary") return absl::InvalidArgumentError("must be json or binary");
    o.*field = v == "binary";
    return absl::OkStatus();
  };
}

absl::Status SetUrl(BenchOptions& o, std::string_view v) {
  o.url_given = true;
  if (v.substr(0, 7) == "http://") v.remove_prefix(7);
  const size_t colon = v.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError("must be HOST:PORT");
  }
  o.host = std::string(v.substr(0, colon));
  if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']') {
    o.host = o.host.substr(1, o.host.size() - 2);  // [::1]:8000
  }
  return ParseNumber<uint16_t>(v.substr(colon + 1), 1, 65535, &o.port);
}

absl::Status SetInputData(BenchOptions& o, std::string_view v) {
  if (v.empty()) return absl::InvalidArgumentError("needs random, zero or a file");
  o.input_data_text = std::string(v);
  if (v == "random") {
    o.input.mode = InputDataMode::kRandom;
  } else if (v == "zero") {
    o.input.mode = InputDataMode::kZero;
  } else {
    o.input.mode = InputDataMode::kFile;
    o.input.file = std::string(v);
  }
  return absl::OkStatus();
}

absl::Status SetIntRange(BenchOptions& o, std::string_view v) {
  const size_t colon = v.find(':');
  if (colon == std::string_view::npos) return absl::InvalidArgumentError("must be LOW:HIGH");
  int64_t low = 0, high = 0;
  if (!ParseNumber<int64_t>(v.substr(0, colon), INT64_MIN, INT64_MAX, &low).ok() ||
      !ParseNumber<int64_t>(v.substr(colon + 1), INT64_MIN, INT64_MAX, &high).ok() || high <= low) {
    return absl::InvalidArgumentError("must be LOW:HIGH integers with LOW < HIGH");
  }
  o.input.int_low = low;
  o.input.int_high = high;
  return absl::OkStatus();
}

Setter Switch(bool BenchOptions::*field) {
  return [=](BenchOptions& o, std::string_view) {
    o.*field = true;
    return absl::OkStatus();
  };
}

// A perf_analyzer flag that has no meaning for infera's client: accepted, and said so once.
Setter NoEffect(std::string note) {
  return [=](BenchOptions& o, std::string_view) {
    for (const std::string& n : o.notes) {
      if (n == note) return absl::OkStatus();
    }
    o.notes.push_back(note);
    return absl::OkStatus();
  };
}

constexpr const char* kSyncAsyncNote =
    "--sync/--async have no effect: infera's client always sends asynchronously on event loops, "
    "each concurrency slot waiting for its response before sending the next (perf_analyzer's "
    "closed loop in either mode)";

// perf_analyzer's --request-intervals: one gap in microseconds per line.
absl::Status SetRequestIntervals(BenchOptions& o, std::string_view v) {
  if (v.empty()) return absl::InvalidArgumentError("needs a file");
  std::ifstream file{std::string(v)};
  if (!file) return absl::NotFoundError(StrCat("cannot read ", v));
  std::string line;
  int64_t sum = 0;
  std::vector<int64_t> gaps;
  for (int number = 1; std::getline(file, line); ++number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty()) continue;
    int64_t us = 0;
    if (!ParseNumber<int64_t>(line, 0, int64_t{3600} * 1000000, &us).ok()) {
      return absl::InvalidArgumentError(StrCat(v, " line ", number, ": '", line.substr(0, 40),
                                               "' is not a gap in microseconds (0 to 3600000000)"));
    }
    if (gaps.size() >= 10000000) return absl::InvalidArgumentError(StrCat(v, ": more than 10000000 gaps"));
    gaps.push_back(us * 1000);
    sum += us;
  }
  if (gaps.empty() || sum == 0) return absl::InvalidArgumentError(StrCat(v, ": no gap above 0 microseconds"));
  o.request_gaps_ns = std::move(gaps);
  o.request_intervals_file = std::string(v);
  return absl::OkStatus();
}

const std::vector<Flag>& Flags() {
  static const std::vector<Flag> flags = {
      {"-m", "model-name", "MODEL", "Model to load-test (required).", Text(&BenchOptions::model)},
      {"-x", "model-version", "V", "Model version. Default: the server's choice.",
       Text(&BenchOptions::model_version)},
      {"-u", "url", "HOST:PORT", "Server address. Default 127.0.0.1:8000 (HTTP), 127.0.0.1:8001 (gRPC).",
       SetUrl},
      {"-i", "protocol", "http|grpc",
       "Protocol. Default http. gRPC sends binary tensors (raw_input_contents) and reads "
       "metadata and statistics over gRPC too.",
       Choice(&BenchOptions::protocol, {"http", "grpc"})},
      {"", "streaming", nullptr,
       "With -i grpc: send over ModelStreamInfer, one bidirectional stream per concurrency "
       "slot, each request sent when the previous answer on its stream arrived (closed loop, "
       "as unary).",
       [](BenchOptions& o, std::string_view) {
         o.streaming = true;
         return absl::OkStatus();
       }},
      {"", "ssl-grpc-use-ssl", nullptr, "With -i grpc: connect over TLS (perf_analyzer's flag).",
       [](BenchOptions& o, std::string_view) {
         o.grpc_tls.use_ssl = true;
         return absl::OkStatus();
       }},
      {"", "ssl-grpc-root-certifications-file", "FILE",
       "PEM CA certificates the server's certificate must chain to. Default: the system's.",
       [](BenchOptions& o, std::string_view v) { return SetText(o.grpc_tls.root_certificates_file, v); }},
      {"", "ssl-grpc-private-key-file", "FILE", "PEM private key of the client certificate (mutual TLS).",
       [](BenchOptions& o, std::string_view v) { return SetText(o.grpc_tls.private_key_file, v); }},
      {"", "ssl-grpc-certificate-chain-file", "FILE", "PEM client certificate chain (mutual TLS).",
       [](BenchOptions& o, std::string_view v) { return SetText(o.grpc_tls.certificate_chain_file, v); }},
      {"", "service-kind", "kserve|openai",
       "API: KServe v2 tensor inference (\"triton\" is accepted too), or the OpenAI API with "
       "streaming (TTFT, TPOT, output tokens/s). Default kserve.",
       Choice(&BenchOptions::service_kind, {"kserve", "triton", "openai"})},
      {"", "endpoint-type", "completions|chat",
       "OpenAI: /v1/completions (prompts of random token ids from --int-range) or "
       "/v1/chat/completions (prompts of random words). Default completions.",
       Choice(&BenchOptions::endpoint_type, {"completions", "chat"})},
      {"", "input-tokens", "N", "OpenAI: prompt length in tokens (chat: words). Default 64.",
       Number<int64_t>(&BenchOptions::input_tokens, 1, 1 << 20)},
      {"", "output-tokens", "N", "OpenAI: tokens generated per request (max_tokens, ignore_eos). Default 64.",
       Number<int64_t>(&BenchOptions::output_tokens, 1, 1 << 20)},
      {"-b", "batch-size", "N", "Rows per request (the batch dimension). Default 1.",
       Number<int64_t>(&BenchOptions::batch_size, 1, 1 << 20)},
      {"", "concurrency-range", "START:END[:STEP]",
       "Closed loop: sweep the number of requests in flight. STEP N or +N adds, xN "
       "multiplies (1:64:x2). Default 1.",
       Range(&BenchOptions::concurrency_range)},
      {"", "request-rate-range", "START:END[:STEP]",
       "Open loop: sweep the request rate (requests/s), as --concurrency-range.",
       Range(&BenchOptions::request_rate_range)},
      {"", "request-distribution", "constant|poisson",
       "Open loop arrivals: evenly spaced or a Poisson process. Default constant.",
       [](BenchOptions& o, std::string_view v) -> absl::Status {
         auto d = ParseArrivalDistribution(v);
         if (!d) return absl::InvalidArgumentError("must be constant or poisson");
         o.distribution = *d;
         return absl::OkStatus();
       }},
      {"", "max-connections", "N",
       "Open loop: connections (so requests in flight) at most; later arrivals wait and "
       "their wait counts in their latency. Default 256.",
       Number(&BenchOptions::max_connections, 1, 65536)},
      {"", "client-threads", "N", "Load generator threads (event loops). Default 1.",
       Number(&BenchOptions::client_threads, 1, 64)},
      {"", "request-intervals", "FILE",
       "Open loop with the given gaps: one gap in microseconds per line, sent in order and "
       "started over at the end (perf_analyzer's custom load); one level at their mean rate. "
       "Not with --concurrency-range or --request-rate-range.",
       SetRequestIntervals},
      {"", "max-threads", "N",
       "Accepted for perf_analyzer scripts, no effect: the client needs no thread per request "
       "(--client-threads sets its event loops).",
       [](BenchOptions& o, std::string_view v) -> absl::Status {
         int n = 0;
         if (absl::Status s = ParseNumber(v, 1, 65536, &n); !s.ok()) return s;
         return NoEffect(
             "--max-threads has no effect: infera's client needs no thread per request "
             "(--client-threads sets its event loops)")(o, v);
       }},
      {"", "sync", nullptr, "Accepted for perf_analyzer scripts, no effect (the client is asynchronous).",
       NoEffect(kSyncAsyncNote)},
      {"", "async", nullptr, "Accepted for perf_analyzer scripts, no effect (the client is asynchronous).",
       NoEffect(kSyncAsyncNote)},
      {"-p", "measurement-interval", "MS",
       "Length of one measurement window (count_windows: its minimum). Default 2000 (count_windows: "
       "1000).",
       [](BenchOptions& o, std::string_view v) {
         o.measurement_interval_given = true;
         return ParseNumber<int64_t>(v, 10, 3600000, &o.measurement_interval_ms);
       }},
      {"", "measurement-mode", "time_windows|count_windows",
       "time_windows: each window lasts --measurement-interval. count_windows: each window lasts "
       "until --measurement-request-count requests completed (at least 1 s). Default time_windows.",
       [](BenchOptions& o, std::string_view v) -> absl::Status {
         auto mode = ParseMeasurementMode(v);
         if (!mode) return absl::InvalidArgumentError(StrCat("'", v, "' must be time_windows or count_windows"));
         o.measurement_mode = *mode;
         return absl::OkStatus();
       }},
      {"", "measurement-request-count", "N",
       "count_windows: requests to complete in each window. Default 50.",
       Number<int64_t>(&BenchOptions::measurement_request_count, 1, 100000000)},
      {"-s", "stability-percentage", "P",
       "Stable when the last 3 windows' throughput and latency are within P % of their "
       "mean. Default 10.",
       Number<double>(&BenchOptions::stability_percentage, 0.1, 1000)},
      {"-r", "max-trials", "N", "Windows per level at most before giving up on stability. Default 10.",
       Number(&BenchOptions::max_trials, 3, 1000)},
      {"", "percentile", "P",
       "Use the P-th percentile latency (not the mean) for stability and --latency-threshold.",
       OptionalNumber<double>(&BenchOptions::percentile, 1, 100)},
      {"-l", "latency-threshold", "MS", "Stop the sweep after a level whose latency exceeds MS.",
       OptionalNumber<double>(&BenchOptions::latency_threshold_ms, 0.001, 3.6e6)},
      {"", "warmup", "MS", "Load before each level's measurement, not measured. Default 1000.",
       Number<int64_t>(&BenchOptions::warmup_ms, 0, 3600000)},
      {"", "duration", "S",
       "Measure each level for S seconds instead of until stable.",
       OptionalNumber<double>(&BenchOptions::duration_s, 0.01, 86400)},
      {"", "max-duration", "S", "Cap on the whole run; the sweep stops there. Default 300.",
       Number<double>(&BenchOptions::max_duration_s, 1, 604800)},
      {"", "request-timeout", "MS", "A request without a response by then is an error. Default 30000.",
       Number<int64_t>(&BenchOptions::request_timeout_ms, 1, 3600000)},
      {"", "input-data", "random|zero|FILE",
       "Input values: random, zeros, or perf_analyzer's JSON format ({\"data\": [...], "
       "optional \"validation_data\"}). Default random.",
       SetInputData},
      {"", "images", "DIR",
       "JPEG/PNG files for inputs that take encoded images (an image_preprocess input, or an "
       "ensemble input feeding one), cycled through. Default: the demo photos, "
       "demo-models/.images (make demo-models).",
       Text(&BenchOptions::images_dir)},
      {"", "string-data", "TEXT", "Every BYTES element of random or zero data is TEXT.",
       [](BenchOptions& o, std::string_view v) { return SetText(o.input.string_data, v); }},
      {"", "shape", "NAME:D1,D2", "Dimensions (batch excluded) of an input with variable ones; repeatable.",
       [](BenchOptions& o, std::string_view v) { return ParseShapeOverride(v, &o.shapes); }},
      {"", "num-payloads", "N", "Different random payloads, sent round-robin. Default 8.",
       [](BenchOptions& o, std::string_view v) {
         return ParseNumber(v, 1, 100000, &o.input.num_random_payloads);
       }},
      {"", "int-range", "LOW:HIGH", "Random integers in [LOW, HIGH). Default 0:100.", SetIntRange},
      {"", "seed", "N", "Seed of random data and Poisson arrivals. Default 1.",
       [](BenchOptions& o, std::string_view v) {
         return ParseNumber<uint64_t>(v, 0, UINT64_MAX, &o.input.seed);
       }},
      {"", "input-tensor-format", "json|binary", "Request tensors as JSON or binary. Default json.",
       TensorFormat(&BenchOptions::binary_inputs)},
      {"", "output-tensor-format", "json|binary", "Response tensors as JSON or binary. Default json.",
       TensorFormat(&BenchOptions::binary_outputs)},
      {"", "shared-memory", "none|system",
       "system: input tensors and outputs in POSIX shared memory registered with the server "
       "(Triton's system shared-memory extension; same host only). Default none.",
       Choice(&BenchOptions::shared_memory, {"none", "system"})},
      {"", "output-shared-memory-size", "BYTES",
       "With --shared-memory system: bytes reserved per output. Default 102400.",
       [](BenchOptions& o, std::string_view v) {
         return ParseNumber<uint64_t>(v, 1, uint64_t{1} << 40, &o.output_shared_memory_size);
       }},
      {"", "check", nullptr,
       "Check every response's outputs: validation_data from --input-data, or the "
       "built-in reference of add_sub and identity models.",
       [](BenchOptions& o, std::string_view) {
         o.check = true;
         return absl::OkStatus();
       }},
      {"-f", "csv", "FILE.csv", "Write one CSV row per level (latencies in microseconds).",
       Text(&BenchOptions::csv_file)},
      {"", "json", "FILE.json", "Write the whole report as JSON.", Text(&BenchOptions::json_file)},
      {"", "plot", "FILE.svg", "Write a latency-vs-throughput plot (self-contained SVG).",
       Text(&BenchOptions::plot_file)},
      {"", "server-pid", "PID", "Also report the CPU use per request of process PID and its children (the server).",
       OptionalNumber<int>(&BenchOptions::server_pid, 1, 1 << 30)},
      {"-v", "verbose", nullptr, "Print each measurement window on stderr as it ends.",
       Switch(&BenchOptions::verbose)},
      {"", "progress", "auto|on|off", "Live progress line. Default auto (when stdout is a terminal).",
       [](BenchOptions& o, std::string_view v) -> absl::Status {
         if (v != "auto" && v != "on" && v != "off") return absl::InvalidArgumentError("auto, on or off");
         o.progress = v == "auto" ? -1 : v == "on" ? 1 : 0;
         return absl::OkStatus();
       }},
  };
  return flags;
}

absl::Status Validate(const BenchOptions& o) {
  if (o.model.empty()) return absl::InvalidArgumentError("-m MODEL is required");
  if (!o.request_gaps_ns.empty() && (o.concurrency_range || o.request_rate_range)) {
    return absl::InvalidArgumentError(
        "--request-intervals is a load of its own: not with --concurrency-range or --request-rate-range");
  }
  if (o.concurrency_range && o.request_rate_range) {
    return absl::InvalidArgumentError("give --concurrency-range or --request-rate-range, not both");
  }
  if (o.concurrency_range) {
    for (double c : o.concurrency_range->Levels()) {
      if (c != std::floor(c)) return absl::InvalidArgumentError("--concurrency-range: levels must be integers");
    }
  }
  if (o.shared_memory == "system" && (o.check || o.service_kind == "openai")) {
    return absl::InvalidArgumentError(
        "--shared-memory system: outputs stay in shared memory, so --check and --service-kind "
        "openai do not apply");
  }
  if (o.streaming && (o.protocol != "grpc" || o.service_kind == "openai")) {
    return absl::InvalidArgumentError(
        "--streaming is gRPC ModelStreamInfer: it needs -i grpc and KServe tensors (not --service-kind openai, "
        "whose HTTP streaming is always on)");
  }
  const GrpcTlsFiles& tls = o.grpc_tls;
  const bool tls_files = !tls.root_certificates_file.empty() || !tls.private_key_file.empty() ||
                         !tls.certificate_chain_file.empty();
  if ((tls.use_ssl || tls_files) && o.protocol != "grpc") {
    return absl::InvalidArgumentError("--ssl-grpc-* flags need -i grpc");
  }
  if (tls_files && !tls.use_ssl) {
    return absl::InvalidArgumentError("--ssl-grpc-*-file flags need --ssl-grpc-use-ssl");
  }
  if (tls.private_key_file.empty() != tls.certificate_chain_file.empty()) {
    return absl::InvalidArgumentError(
        "--ssl-grpc-private-key-file and --ssl-grpc-certificate-chain-file go together (mutual TLS)");
  }
  if (o.service_kind == "openai" && o.protocol != "http") {
    return absl::InvalidArgumentError("--service-kind openai works over -i http only");
  }
  if (o.service_kind == "openai" && (o.check || o.batch_size != 1 || o.input.mode == InputDataMode::kFile)) {
    return absl::InvalidArgumentError(
        "--service-kind openai: --check, -b and --input-data FILE apply to KServe tensor models");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BenchOptions> ParseBenchOptions(const std::vector<std::string>& args) {
  BenchOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      return options;
    }
    std::optional<std::string_view> value;
    const Flag* flag = nullptr;
    if (arg.substr(0, 2) == "--") {
      std::string_view name = arg.substr(2);
      if (size_t eq = name.find('='); eq != std::string_view::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      for (const Flag& f : Flags()) {
        if (name == f.name) flag = &f;
      }
    } else if (arg.size() >= 2 && arg[0] == '-') {
      for (const Flag& f : Flags()) {
        if (arg.substr(0, 2) == f.short_name) flag = &f;
      }
      if (flag && arg.size() > 2) value = arg.substr(2);  // -msimple
    }
    if (!flag) return absl::InvalidArgumentError(StrCat("unknown flag '", arg, "'"));
    if (!flag->value_name) {
      if (value) return absl::InvalidArgumentError(StrCat("--", flag->name, " takes no value"));
    } else if (!value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(StrCat("--", flag->name, " needs a value (", flag->value_name, ")"));
      }
      value = args[++i];
    }
    if (absl::Status s = flag->set(options, value.value_or("")); !s.ok()) {
      return absl::InvalidArgumentError(StrCat("--", flag->name, ": ", s.message()));
    }
  }
  if (absl::Status s = Validate(options); !s.ok()) return s;
  if (!options.request_gaps_ns.empty()) {  // one open-loop level at the gaps' mean rate
    const double rate = ArrivalSchedule(options.request_gaps_ns).rate_per_s();
    options.request_rate_range = RangeSpec{rate, rate, RangeSpec::StepKind::kAdd, 1};
    options.distribution = ArrivalDistribution::kIntervals;
  }
  if (options.protocol == "grpc" && !options.url_given) options.port = 8001;  // Triton's ports
  return options;
}

WindowRule MeasurementWindowRule(const BenchOptions& o) {
  WindowRule rule;
  rule.mode = o.measurement_mode;
  rule.request_count = o.measurement_request_count;
  rule.min_ms = o.measurement_mode == MeasurementMode::kCountWindows && !o.measurement_interval_given
                    ? 1000
                    : o.measurement_interval_ms;
  return rule;
}

namespace {

constexpr size_t kHelpWidth = 100;
constexpr size_t kFlagColumn = 34;

// `text` wrapped into lines of at most kHelpWidth, each after `indent` spaces (the first
// line's start is `first`, already `indent` wide).
std::string Wrap(std::string first, std::string_view text, size_t indent) {
  std::string out;
  std::string line = std::move(first);
  size_t start = 0;
  bool empty = true;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (!empty && line.size() + 1 + word.size() > kHelpWidth) {
      out += line + "\n";
      line = std::string(indent, ' ');
      empty = true;
    }
    line += empty ? std::string(word) : StrCat(" ", word);
    empty = false;
    start = end + 1;
  }
  return out + line + "\n";
}

}  // namespace

std::string BenchHelpText() {
  std::string text =
      "Usage: infera bench -m MODEL [flags]\n"
      "       infera bench plot -o OUT.svg [--title T] NAME=REPORT.json...   (compare saved runs)\n\n"
      "Load-tests a KServe v2 server (infera, Triton, ...) or an OpenAI-compatible LLM server in\n"
      "the spirit of perf_analyzer (same flag names): closed-loop concurrency or open-loop\n"
      "request-rate sweeps, each level measured in windows until stable, every response checked.\n"
      "Prints one table (the client cpu columns are this process's CPU use); -f/--json/--plot\n"
      "write CSV, JSON and an SVG plot. Bounded: --max-duration caps the run.\n\n"
      "Examples (against `make run`):\n"
      "  infera bench -m simple --concurrency-range 1:64:x2\n"
      "  infera bench -m resnet18_classify --concurrency-range 1:4:x2      (sends the demo photos)\n"
      "  infera bench -m ranker -b 4 --request-rate-range 10:40:+10 --request-distribution poisson \\\n"
      "      --input-tensor-format binary -f ranker.csv --plot ranker.svg\n"
      "  infera bench -m fortune --service-kind openai --input-tokens 64 --output-tokens 64 \\\n"
      "      --concurrency-range 1:8:x2\n\n"
      "Input data files (--input-data FILE, perf_analyzer's JSON: one entry per request row):\n"
      "  image pipeline, a JPEG as base64 (input IMAGE of resnet18_classify):\n"
      "    printf '{\"data\": [{\"IMAGE\": {\"b64\": \"%s\"}}]}' \"$(base64 -w0 cat.jpg)\" > image.json\n"
      "    infera bench -m resnet18_classify --input-data image.json\n"
      "  text pipeline, sentences (input TEXT of text_embed):\n"
      "    echo '{\"data\": [{\"TEXT\": [\"The quick brown fox.\"]}, {\"TEXT\": [\"Hello there.\"]}]}' \\\n"
      "      > text.json\n"
      "    infera bench -m text_embed --input-data text.json\n\n"
      "Flags:\n";
  for (const Flag& f : Flags()) {
    std::string left = StrCat("  ", *f.short_name ? StrCat(f.short_name, ", ") : std::string("    "),
                              "--", f.name, f.value_name ? StrCat(" ", f.value_name) : std::string());
    if (left.size() < kFlagColumn) {
      left.resize(kFlagColumn, ' ');
    } else {
      text += left + "\n";
      left = std::string(kFlagColumn, ' ');
    }
    text += Wrap(left, f.help, kFlagColumn);
  }
  return text;
}

}  // namespace infera::bench
