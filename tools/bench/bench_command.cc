#include "tools/bench/bench_command.h"

#include <sys/resource.h>

#include <atomic>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "common/str_cat.h"
#include "tools/bench/bench_options.h"
#include "tools/bench/bench_runner.h"
#include "tools/bench/bench_shared_memory.h"
#include "tools/bench/http_client.h"
#include "tools/bench/image_inputs.h"
#include "tools/bench/kserve_http_payload.h"
#include "tools/bench/openai_payload.h"
#include "tools/bench/plot_command.h"
#include "tools/bench/report_writers.h"
#include "tools/bench/response_checker.h"
#include "tools/bench/simple_http.h"
#ifdef INFERA_BENCH_HAS_GRPC
#include "tools/bench/grpc_client.h"
#include "tools/bench/grpc_stream_client.h"
#endif

namespace infera::bench {
namespace {

constexpr int kControlTimeoutMs = 5000;

std::atomic<bool> g_stop{false};

void OnSigint(int) { g_stop.store(true); }

std::string NowIso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

// Many connections need descriptors: raise the soft limit to the hard one.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

std::string Target(const BenchOptions& o) { return StrCat(o.host, ":", o.port); }

#ifdef INFERA_BENCH_HAS_GRPC
// The gRPC port's address and, with --ssl-grpc-use-ssl, TLS credentials from the files
// (read again for each use: a handful of times per run).
absl::StatusOr<GrpcTarget> TargetOfGrpc(const BenchOptions& o) {
  auto credentials = MakeBenchCredentials(o.grpc_tls);
  if (!credentials.ok()) return credentials.status();
  return GrpcTarget{Target(o), *std::move(credentials)};
}
#endif

absl::StatusOr<ModelMetadata> FetchMetadata(const BenchOptions& o) {
#ifdef INFERA_BENCH_HAS_GRPC
  if (o.protocol == "grpc") {
    auto target = TargetOfGrpc(o);
    if (!target.ok()) return target.status();
    return FetchGrpcModelMetadata(*target, o.model, o.model_version, kControlTimeoutMs);
  }
#endif
  const std::string path = ModelPath(o.model, o.model_version);
  auto reply = SimpleHttpGet(o.host, o.port, path, kControlTimeoutMs);
  if (!reply.ok()) return absl::UnavailableError(StrCat("cannot reach the server: ", reply.status().message()));
  if (reply->status != 200) {
    return absl::NotFoundError(StrCat("GET ", path, " answered ", reply->status, ": ", reply->body.substr(0, 300)));
  }
  auto metadata = ParseModelMetadata(reply->body);
  if (!metadata.ok()) return metadata.status();
  if (metadata->name.empty()) metadata->name = o.model;
  // Triton's model configuration extension, when the server has it.
  auto config = SimpleHttpGet(o.host, o.port, path + "/config", kControlTimeoutMs);
  if (config.ok() && config->status == 200) metadata->max_batch_size = ParseMaxBatchSize(config->body);
  return metadata;
}

std::optional<ServerStats> FetchStats(const BenchOptions& o) {
#ifdef INFERA_BENCH_HAS_GRPC
  if (o.protocol == "grpc") {
    auto target = TargetOfGrpc(o);
    if (!target.ok()) return std::nullopt;
    return FetchGrpcModelStats(*target, o.model, o.model_version, kControlTimeoutMs);
  }
#endif
  auto reply = SimpleHttpGet(o.host, o.port, ModelPath(o.model, o.model_version) + "/stats", kControlTimeoutMs);
  if (!reply.ok() || reply->status != 200) return std::nullopt;
  auto stats = ParseServerStats(reply->body, o.model, o.model_version);
  if (!stats.ok()) return std::nullopt;
  return *stats;
}

// --shared-memory system: the payloads' tensors move into registered regions.
absl::StatusOr<std::unique_ptr<BenchSharedMemory>> SetUpSharedMemory(const BenchOptions& o,
                                                                     const ModelMetadata& metadata,
                                                                     std::vector<PayloadData>& payloads) {
  std::vector<std::string> outputs;
  for (const TensorSpec& spec : metadata.outputs) outputs.push_back(spec.name);
  BenchSharedMemory::Register register_region;
  BenchSharedMemory::Unregister unregister_region;
  if (o.protocol == "grpc") {
#ifdef INFERA_BENCH_HAS_GRPC
    register_region = [&o](const BenchSharedMemory::Region& r) {
      auto target = TargetOfGrpc(o);
      if (!target.ok()) return target.status();
      return GrpcSharedMemoryRegister(*target, r.name, r.key, r.byte_size, kControlTimeoutMs);
    };
    unregister_region = [&o](const std::string& name) {
      auto target = TargetOfGrpc(o);
      if (!target.ok()) return target.status();
      return GrpcSharedMemoryUnregister(*target, name, kControlTimeoutMs);
    };
#endif
  } else {
    auto post = [&o](const std::string& path, const std::string& body) -> absl::Status {
      auto reply = SimpleHttpRequest("POST", o.host, o.port, path, body, {{"Content-Type", "application/json"}},
                                     kControlTimeoutMs);
      if (!reply.ok()) return reply.status();
      if (reply->status != 200) {
        return absl::UnavailableError(StrCat("POST ", path, " answered ", reply->status, ": ", reply->body.substr(0, 300)));
      }
      return absl::OkStatus();
    };
    register_region = [post](const BenchSharedMemory::Region& r) {
      return post(StrCat("/v2/systemsharedmemory/region/", r.name, "/register"),
                  StrCat("{\"key\":\"", r.key, "\",\"offset\":0,\"byte_size\":", r.byte_size, "}"));
    };
    unregister_region = [post](const std::string& name) {
      return post(StrCat("/v2/systemsharedmemory/region/", name, "/unregister"), "");
    };
  }
  if (!register_region) {
    return absl::UnimplementedError("-i grpc: this build has no gRPC stubs (proto/grpc_service.proto)");
  }
  return BenchSharedMemory::Create(payloads, outputs, o.output_shared_memory_size, std::move(register_region),
                                   std::move(unregister_region));
}

// Triton's model configuration extension (HTTP, or gRPC's ModelConfig) as JSON.
std::optional<std::string> FetchConfigJson(const BenchOptions& o, const std::string& model) {
#ifdef INFERA_BENCH_HAS_GRPC
  if (o.protocol == "grpc") {
    auto target = TargetOfGrpc(o);
    if (!target.ok()) return std::nullopt;
    return FetchGrpcModelConfigJson(*target, model, kControlTimeoutMs);
  }
#endif
  auto reply = SimpleHttpGet(o.host, o.port, ModelPath(model, "") + "/config", kControlTimeoutMs);
  if (!reply.ok() || reply->status != 200) return std::nullopt;
  return reply->body;
}

std::string SelfExecutable() {
  std::error_code error;
  std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : path.string();
}

// Random or zero data for inputs that take encoded images would fail every request: they
// get real images (--images, else the demo photos). Returns the input data options and
// appends what was chosen to `*described` (printed in the report's title).
absl::StatusOr<InputDataOptions> WithImages(const BenchOptions& o, std::string* described) {
  InputDataOptions input = o.input;
  if (input.mode == InputDataMode::kFile) return input;
  input.image_inputs = EncodedImageInputs(o.model, [&o](const std::string& m) { return FetchConfigJson(o, m); });
  if (input.image_inputs.empty()) return input;
  std::vector<std::string> dirs = o.images_dir.empty() ? DefaultImageDirs(SelfExecutable())
                                                        : std::vector<std::string>{o.images_dir};
  std::string tried;
  for (const std::string& dir : dirs) {
    auto images = ReadImageFiles(dir);
    if (images.ok()) {
      input.images = std::move(*images);
      *described += StrCat("; ", StrJoin(std::vector<std::string>(input.image_inputs.begin(), input.image_inputs.end()), ", "),
                           ": the ", input.images.size(), " images of ", dir);
      return input;
    }
    if (!o.images_dir.empty()) return absl::NotFoundError(StrCat("--images: ", images.status().message()));
    tried += StrCat(tried.empty() ? "" : ", ", dir);
  }
  return absl::NotFoundError(StrCat("input ", *input.image_inputs.begin(),
                                    " takes encoded images and random bytes would fail every request, but no "
                                    "demo photos were found (looked in ", tried,
                                    "; `make demo-models` writes them): give --images DIR or --input-data FILE"));
}

// Payload tensors, with the expected outputs attached when checking.
absl::StatusOr<std::vector<PayloadData>> MakePayloads(const BenchOptions& o, const ModelMetadata& metadata,
                                                      std::string* described) {
  const bool from_file = o.input.mode == InputDataMode::kFile;
  auto inputs = ResolveInputShapes(metadata, o.shapes, o.batch_size, from_file);
  if (!inputs.ok()) return inputs.status();
  auto input = WithImages(o, described);
  if (!input.ok()) return input.status();
  auto payloads = MakePayloadData(*inputs, metadata.outputs, ModelBatches(metadata, o.shapes), o.batch_size, *input);
  if (!payloads.ok()) return payloads.status();
  if (!o.check) return payloads;
  for (PayloadData& p : *payloads) {
    if (!p.expected_outputs.empty()) continue;
    auto expected = BuiltinReferenceOutputs(metadata.platform, metadata.outputs, p.inputs);
    if (!expected.ok()) return expected.status();
    p.expected_outputs = std::move(*expected);
  }
  return payloads;
}

absl::StatusOr<ClientFactory> MakeClientFactory(const BenchOptions& o, const std::vector<PayloadData>& payloads,
                                                int max_connections) {
  if (o.protocol == "grpc") {
#ifdef INFERA_BENCH_HAS_GRPC
    auto target = TargetOfGrpc(o);
    if (!target.ok()) return target.status();
    GrpcClientOptions grpc{*std::move(target), o.model, o.model_version, max_connections,
                           o.request_timeout_ms * kNsPerMs, o.check};
    return ClientFactory([grpc, payloads, streaming = o.streaming](boost::asio::io_context& io, const Clock& clock)
                             -> absl::StatusOr<std::unique_ptr<InferClient>> {
      if (streaming) {
        auto made = GrpcStreamInferClient::Create(io, clock, grpc, payloads);
        if (!made.ok()) return made.status();
        return std::unique_ptr<InferClient>(std::move(*made));
      }
      auto made = GrpcInferClient::Create(io, clock, grpc, payloads);
      if (!made.ok()) return made.status();
      return std::unique_ptr<InferClient>(std::move(*made));
    });
#else
    return absl::UnimplementedError("-i grpc: this build has no gRPC stubs (proto/grpc_service.proto)");
#endif
  }
  KServeHttpTarget target{Target(o), o.model, o.model_version, o.binary_inputs,
                          o.binary_outputs};
  std::vector<HttpPayload> encoded;
  for (const PayloadData& p : payloads) {
    encoded.push_back({EncodeInferHttpRequest(target, p.inputs, p.shm ? &*p.shm : nullptr),
                       o.check ? p.expected_outputs : std::vector<Tensor>{}});
  }
  HttpClientOptions client;
  client.host = o.host;
  client.port = o.port;
  client.max_connections = max_connections;
  client.request_timeout_ns = o.request_timeout_ms * kNsPerMs;
  client.check = o.check;
  return ClientFactory([client, encoded = std::move(encoded)](boost::asio::io_context& io, const Clock& clock)
                           -> absl::StatusOr<std::unique_ptr<InferClient>> {
    auto made = HttpInferClient::Create(io, clock, client, encoded);
    if (!made.ok()) return made.status();
    return std::unique_ptr<InferClient>(std::move(*made));
  });
}

// OpenAI streaming: synthetic prompts, no model metadata needed.
ClientFactory MakeOpenAiClientFactory(const BenchOptions& o, int max_connections) {
  OpenAiRequestOptions request{Target(o), o.model, o.endpoint_type == "chat", o.input_tokens, o.output_tokens,
                               o.input.int_low, o.input.int_high};
  std::vector<HttpPayload> encoded;
  for (std::string& r : MakeOpenAiHttpRequests(request, o.input.num_random_payloads, o.input.seed)) {
    encoded.push_back({std::move(r), {}});
  }
  HttpClientOptions client;
  client.api = HttpApi::kOpenAiStream;
  client.host = o.host;
  client.port = o.port;
  client.max_connections = max_connections;
  client.request_timeout_ns = o.request_timeout_ms * kNsPerMs;
  return [client, encoded = std::move(encoded)](boost::asio::io_context& io, const Clock& clock)
             -> absl::StatusOr<std::unique_ptr<InferClient>> {
    auto made = HttpInferClient::Create(io, clock, client, encoded);
    if (!made.ok()) return made.status();
    return std::unique_ptr<InferClient>(std::move(*made));
  };
}

// Connections each shard may need: its share of the largest concurrency, or of
// --max-connections in open loop.
int ConnectionsPerShard(const BenchOptions& o) {
  const int shards = o.client_threads;
  if (o.request_rate_range) return std::max(1, (o.max_connections + shards - 1) / shards);
  const auto levels = o.concurrency_range.value_or(RangeSpec{}).Levels();
  const int max_c = static_cast<int>(levels.empty() ? 1 : levels.back());
  return std::max(1, (max_c + shards - 1) / shards);
}

RunReport ReportHeader(const BenchOptions& o, const ModelMetadata& metadata, size_t num_payloads,
                       const std::vector<std::string>& args) {
  RunReport r;
  r.command_line = "infera bench " + StrJoin(args, " ");
  r.started_at = NowIso8601();
  r.url = Target(o);
  r.protocol = o.protocol;
  r.streaming = o.streaming;
  r.service_kind = o.service_kind == "triton" ? "kserve" : o.service_kind;
  r.model = o.model;
  r.model_version = o.model_version;
  r.platform = metadata.platform;
  r.batch_size = o.batch_size;
  r.input_data = o.service_kind == "openai"
                     ? StrCat(o.input_tokens, " prompt tokens, ", o.output_tokens, " output tokens")
                     : o.input_data_text;
  const bool grpc = o.protocol == "grpc";  // raw_input/output_contents: binary
  r.input_format = o.shared_memory == "system" ? "system_shm" : o.binary_inputs || grpc ? "binary" : "json";
  r.output_format = o.shared_memory == "system" ? "system_shm" : o.binary_outputs || grpc ? "binary" : "json";
  r.num_payloads = num_payloads;
  r.client_threads = o.client_threads;
  r.check = o.check;
  r.mode = o.request_rate_range ? "request_rate" : "concurrency";
  r.request_intervals_file = o.request_intervals_file;
  r.latency_metric = o.percentile ? StrCat("p", *o.percentile) : "avg";
  return r;
}

absl::Status WriteOutputs(const BenchOptions& o, const RunReport& report) {
  if (!o.csv_file.empty()) {
    if (absl::Status s = WriteTextFile(o.csv_file, FormatCsv(report)); !s.ok()) return s;
  }
  if (!o.json_file.empty()) {
    if (absl::Status s = WriteTextFile(o.json_file, FormatJson(report)); !s.ok()) return s;
  }
  if (!o.plot_file.empty()) {
    const std::string title = StrCat(report.model, " at ", report.url, " (", report.protocol, ", ",
                                     report.input_format, ", batch ", report.batch_size, ")");
    if (absl::Status s = WriteTextFile(o.plot_file, FormatSvgPlot(LatencySeries(report), title)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

int Fail(const std::string& message, int code) {
  std::cerr << "infera bench: " << message << "\n";
  return code;
}

}  // namespace

absl::StatusOr<RunReport> RunKServeSweep(const BenchOptions& o, const std::atomic<bool>& stop,
                                         const std::function<void(const LevelResult&)>& on_level) {
  if (o.service_kind == "openai" || o.shared_memory != "none") {
    return absl::InvalidArgumentError("RunKServeSweep: KServe tensors without shared memory only");
  }
  auto metadata = FetchMetadata(o);
  if (!metadata.ok()) return metadata.status();
  std::string described;
  auto payloads = MakePayloads(o, *metadata, &described);
  if (!payloads.ok()) return payloads.status();
  auto factory = MakeClientFactory(o, *payloads, ConnectionsPerShard(o));
  if (!factory.ok()) return factory.status();
  RunReport report = ReportHeader(o, *metadata, payloads->size(), {"(in-process)"});
  report.input_data += described;
  report.server_stats_available = FetchStats(o).has_value();
  std::vector<std::unique_ptr<LoadShard>> shards;
  for (int i = 0; i < o.client_threads; ++i) {
    auto shard = LoadShard::Create(*factory);
    if (!shard.ok()) return shard.status();
    shards.push_back(std::move(*shard));
  }
  ProgressLine progress(stdout, 0);
  RunnerHooks hooks;
  if (report.server_stats_available) hooks.fetch_stats = [&o] { return FetchStats(o); };
  hooks.on_level = on_level;
  RunSweep(o, shards, hooks, stop, progress, &report);
  return report;
}

int RunBenchCommand(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "plot") return RunPlotCommand({args.begin() + 1, args.end()});
  auto options = ParseBenchOptions(args);
  if (!options.ok()) return Fail(StrCat(options.status().message(), "\nsee 'infera bench --help'"), 2);
  if (options->help) {
    std::cout << BenchHelpText();
    return 0;
  }
  const BenchOptions& o = *options;
  for (const std::string& note : o.notes) std::cerr << "infera bench: " << note << "\n";
  RaiseFileLimit();
  RunReport report;
  ClientFactory factory;
  std::unique_ptr<BenchSharedMemory> shared_memory;  // outlives the run (regions in use)
  if (o.service_kind == "openai") {
    ModelMetadata none;
    none.platform = "openai " + o.endpoint_type;
    report = ReportHeader(o, none, static_cast<size_t>(o.input.num_random_payloads), args);
    factory = MakeOpenAiClientFactory(o, ConnectionsPerShard(o));
  } else {
    auto metadata = FetchMetadata(o);
    if (!metadata.ok()) return Fail(StrCat(metadata.status().message()), 2);
    std::string described;
    auto payloads = MakePayloads(o, *metadata, &described);
    if (!payloads.ok()) return Fail(StrCat(payloads.status().message()), 2);
    if (o.shared_memory == "system") {
      auto shm = SetUpSharedMemory(o, *metadata, *payloads);
      if (!shm.ok()) return Fail(StrCat(shm.status().message()), 2);
      shared_memory = std::move(*shm);
    }
    auto made = MakeClientFactory(o, *payloads, ConnectionsPerShard(o));
    if (!made.ok()) return Fail(StrCat(made.status().message()), 2);
    factory = std::move(*made);
    report = ReportHeader(o, *metadata, payloads->size(), args);
    report.input_data += described;
    report.server_stats_available = FetchStats(o).has_value();
  }
  std::vector<std::unique_ptr<LoadShard>> shards;
  for (int i = 0; i < o.client_threads; ++i) {
    auto shard = LoadShard::Create(factory);
    if (!shard.ok()) return Fail(StrCat(shard.status().message()), 2);
    shards.push_back(std::move(*shard));
  }

  ProgressLine progress(stdout, o.progress);
  RunnerHooks hooks;
  if (report.server_stats_available) hooks.fetch_stats = [&o] { return FetchStats(o); };
  // The table once: its title and header now, each level's row as it finishes (a long
  // sweep shows progress), the summary at the end.
  std::cout << FormatTableTitle(report) << FormatLevelHeader(report) << "\n" << std::flush;
  hooks.on_level = [&](const LevelResult& level) {
    std::cout << FormatLevelLine(report, level) << "\n" << std::flush;
  };
  g_stop.store(false);
  auto previous = std::signal(SIGINT, OnSigint);
  RunSweep(o, shards, hooks, g_stop, progress, &report);
  std::signal(SIGINT, previous);
  shards.clear();

  std::cout << FormatTableSummary(report) << std::flush;
  if (absl::Status s = WriteOutputs(o, report); !s.ok()) return Fail(StrCat(s.message()), 1);
  bool check_failed = false;
  for (const LevelResult& l : report.levels) check_failed |= l.error_counts.count("check") > 0;
  if (report.total_ok == 0) return Fail("no request succeeded", 1);
  if (check_failed) return Fail("some responses failed --check", 1);
  return 0;
}

}  // namespace infera::bench
