// infera_grpc_load: a closed-loop KServe v2 gRPC load generator for add_sub models such
// as `simple` (two INT32 [1,16] inputs) or, with --identity-elements, an FP32 identity
// model, for the gRPC-vs-HTTP figures in docs/benchmarks.md.
//
//   infera_grpc_load --target 127.0.0.1:8001 --model simple --concurrency 8
//                    --duration-s 10 --warmup-s 2
//
// `concurrency` virtual clients each keep exactly one ModelInfer in flight (send, wait
// for the answer, send the next), each on its own channel and TCP connection (like wrk's
// connections), or sharing `--connections` channels (HTTP/2 multiplexes their calls, the
// way Triton's clients share one channel per server). Every answer is checked: the gRPC status, the output names, shapes and
// datatypes, and the values (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, with
// inputs that change per request). Calls use the gRPC async (completion-queue) client
// API, driven by `--threads` threads (default 2, like the wrk runs): no thread per call,
// and no hand-off between gRPC's threads and ours, which keeps the client's own cost low
// (it shares the machine with the server).
//
// TLS: --ssl-grpc-root-certifications-file F (the CAs the server's certificate must chain
// to), plus --ssl-grpc-private-key-file F --ssl-grpc-certificate-chain-file F for mutual
// TLS (perf_analyzer's names, as infera bench's).
//
// Prints one line, `RESULT {...}` (JSON: requests, errors, throughput_rps, latency
// percentiles in ms over the measured window), and exits 1 if any answer was wrong.
//
// Each Client is used by the one driver thread that owns its completion queue.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grpc_service.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWidth = 16;

struct Flags {
  std::string target = "127.0.0.1:8001";
  std::string model = "simple";
  int concurrency = 1;
  double duration_s = 10;
  double warmup_s = 2;
  int threads = 2;            // completion-queue driver threads
  // Channels (TCP connections) the clients share round-robin; 0 = one per client.
  int connections = 0;
  // > 0: an identity FP32 model (e.g. the demo `identity_fp32`) with one input of this
  // many elements instead of add_sub's two INT32 [1,16].
  int64_t identity_elements = 0;
  bool server_live = false;  // --rpc server_live: ServerLive instead of ModelInfer (floor)
  // TLS when a root file is given (PEM paths).
  std::string tls_root_file;
  std::string tls_key_file;
  std::string tls_chain_file;
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    if (const size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    }
    if (arg == "--target") {
      flags.target = value;
    } else if (arg == "--model") {
      flags.model = value;
    } else if (arg == "--concurrency") {
      flags.concurrency = std::stoi(value);
    } else if (arg == "--duration-s") {
      flags.duration_s = std::stod(value);
    } else if (arg == "--identity-elements") {
      flags.identity_elements = std::stoll(value);
    } else if (arg == "--connections") {
      flags.connections = std::stoi(value);
    } else if (arg == "--threads") {
      flags.threads = std::stoi(value);
    } else if (arg == "--warmup-s") {
      flags.warmup_s = std::stod(value);
    } else if (arg == "--ssl-grpc-root-certifications-file") {
      flags.tls_root_file = value;
    } else if (arg == "--ssl-grpc-private-key-file") {
      flags.tls_key_file = value;
    } else if (arg == "--ssl-grpc-certificate-chain-file") {
      flags.tls_chain_file = value;
    } else if (arg == "--rpc" && (value == "model_infer" || value == "server_live")) {
      flags.server_live = value == "server_live";
    } else {
      std::fprintf(stderr,
                   "usage: infera_grpc_load [--target HOST:PORT] [--model NAME] [--concurrency N]"
                     " [--duration-s S] [--warmup-s S] [--threads N] [--connections N]"
                   " [--rpc model_infer|server_live]"
                   " [--identity-elements N] [--ssl-grpc-root-certifications-file F"
                   " [--ssl-grpc-private-key-file F --ssl-grpc-certificate-chain-file F]]\n");
      return false;
    }
  }
  return flags.concurrency > 0 && flags.threads > 0 && flags.connections >= 0 &&
         flags.duration_s > 0 && flags.warmup_s >= 0 &&
         flags.tls_key_file.empty() == flags.tls_chain_file.empty() &&
         (flags.tls_key_file.empty() || !flags.tls_root_file.empty());
}

// The whole file at `path`; false (and a message) when it cannot be read or is empty.
bool ReadPem(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (in.is_open()) text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (text.empty()) std::fprintf(stderr, "cannot read %s (or it is empty)\n", path.c_str());
  return !text.empty();
}

// Plaintext, or TLS (with a client certificate) from the --ssl-grpc-* files.
std::shared_ptr<grpc::ChannelCredentials> MakeCredentials(const Flags& flags) {
  if (flags.tls_root_file.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  if (!ReadPem(flags.tls_root_file, ssl.pem_root_certs)) return nullptr;
  if (!flags.tls_key_file.empty() &&
      (!ReadPem(flags.tls_key_file, ssl.pem_private_key) || !ReadPem(flags.tls_chain_file, ssl.pem_cert_chain))) {
    return nullptr;
  }
  return grpc::SslCredentials(ssl);
}

// Both inputs of request `seq` from client `client`.
void FillInputs(int client, uint64_t seq, int32_t* a, int32_t* b) {
  for (int i = 0; i < kWidth; ++i) {
    a[i] = static_cast<int32_t>((seq * 31 + static_cast<uint64_t>(i)) % 100000);
    b[i] = client + i;
  }
}

// The identity workload's input: image-like FP32 values, the same as identity_fp32_infer.lua's.
std::string IdentityInput(int64_t n) {
  std::string bytes(static_cast<size_t>(n) * sizeof(float), '\0');
  for (int64_t i = 0; i < n; ++i) {
    const float value = static_cast<float>(static_cast<double>(i % 1000) / 100 - 5);
    std::memcpy(bytes.data() + i * sizeof(float), &value, sizeof(float));
  }
  return bytes;
}

std::string CheckIdentity(const inference::ModelInferResponse& response, const std::string& input,
                          int64_t n) {
  if (response.outputs_size() != 1 || response.raw_output_contents_size() != 1) {
    return "expected 1 output with raw contents";
  }
  const auto& out = response.outputs(0);
  if (out.name() != "OUTPUT0" || out.datatype() != "FP32" || out.shape_size() != 1 ||
      out.shape(0) != n) {
    return "output has the wrong name, datatype or shape";
  }
  return response.raw_output_contents(0) == input ? "" : "output differs from the input";
}

// Empty when `response` is the right answer to request `seq` of `client`.
std::string Check(const inference::ModelInferResponse& response, int client, uint64_t seq) {
  if (response.outputs_size() != 2 || response.raw_output_contents_size() != 2) {
    return "expected 2 outputs with raw contents";
  }
  int32_t a[kWidth], b[kWidth];
  FillInputs(client, seq, a, b);
  for (int o = 0; o < 2; ++o) {
    const auto& out = response.outputs(o);
    if (out.name() != (o == 0 ? "OUTPUT0" : "OUTPUT1") || out.datatype() != "INT32" ||
        out.shape_size() != 2 || out.shape(0) != 1 || out.shape(1) != kWidth) {
      return "output " + std::to_string(o) + " has the wrong name, datatype or shape";
    }
    const std::string& raw = response.raw_output_contents(o);
    if (raw.size() != kWidth * sizeof(int32_t)) return "output has the wrong byte size";
    int32_t got[kWidth];
    std::memcpy(got, raw.data(), sizeof(got));
    for (int i = 0; i < kWidth; ++i) {
      if (got[i] != (o == 0 ? a[i] + b[i] : a[i] - b[i])) return "wrong output value";
    }
  }
  return "";
}

// One virtual client: one call in flight at a time; the next is sent when the driver
// thread that owns the client's completion queue sees the previous one complete.
class Client {
 public:
  Client(int id, std::shared_ptr<grpc::Channel> channel, grpc::CompletionQueue* cq,
         const Flags& flags, Clock::time_point measure_from, Clock::time_point stop_at)
      : id_(id),
        stub_(inference::GRPCInferenceService::NewStub(std::move(channel))),
        cq_(cq),
        server_live_(flags.server_live),
        identity_elements_(flags.identity_elements),
        measure_from_(measure_from),
        stop_at_(stop_at) {
    request_.set_model_name(flags.model);
    if (identity_elements_ > 0) {
      auto* input = request_.add_inputs();
      input->set_name("INPUT0");
      input->set_datatype("FP32");
      input->add_shape(identity_elements_);
      request_.add_raw_input_contents(IdentityInput(identity_elements_));
    }
    for (const char* name : {"INPUT0", "INPUT1"}) {
      if (identity_elements_ > 0) break;
      auto* input = request_.add_inputs();
      input->set_name(name);
      input->set_datatype("INT32");
      input->add_shape(1);
      input->add_shape(kWidth);
      request_.add_raw_input_contents(std::string(kWidth * sizeof(int32_t), '\0'));
    }
    latencies_us_.reserve(1 << 16);
  }

  void Send() {
    if (identity_elements_ == 0) {
      int32_t a[kWidth], b[kWidth];
      FillInputs(id_, seq_, a, b);
      std::memcpy(request_.mutable_raw_input_contents(0)->data(), a, sizeof(a));
      std::memcpy(request_.mutable_raw_input_contents(1)->data(), b, sizeof(b));
    }
    context_ = std::make_unique<grpc::ClientContext>();
    response_.Clear();
    sent_at_ = Clock::now();
    if (server_live_) {
      live_reader_ = stub_->AsyncServerLive(context_.get(), live_request_, cq_);
      live_reader_->Finish(&live_response_, &status_, this);
    } else {
      reader_ = stub_->AsyncModelInfer(context_.get(), request_, cq_);
      reader_->Finish(&response_, &status_, this);
    }
  }

  // Checks the finished call; sends the next one unless time is up. False when done.
  bool OnDone() {
    const Clock::time_point now = Clock::now();
    std::string error;
    if (!status_.ok()) {
      error = "grpc-status " + std::to_string(status_.error_code()) + ": " +
              status_.error_message();
    } else if (server_live_) {
      if (!live_response_.live()) error = "ServerLive answered live=false";
    } else if (identity_elements_ > 0) {
      error = CheckIdentity(response_, request_.raw_input_contents(0), identity_elements_);
    } else {
      error = Check(response_, id_, seq_);
    }
    if (!error.empty()) {
      if (errors_++ == 0) first_error_ = error;
    } else if (sent_at_ >= measure_from_) {
      latencies_us_.push_back(static_cast<uint32_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(now - sent_at_).count()));
    }
    ++seq_;
    if (now >= stop_at_) return false;
    Send();
    return true;
  }

  const std::vector<uint32_t>& latencies_us() const { return latencies_us_; }
  uint64_t errors() const { return errors_; }
  const std::string& first_error() const { return first_error_; }

 private:
  const int id_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
  grpc::CompletionQueue* const cq_;
  const bool server_live_;
  const int64_t identity_elements_;
  const Clock::time_point measure_from_, stop_at_;
  inference::ModelInferRequest request_;
  inference::ModelInferResponse response_;
  inference::ServerLiveRequest live_request_;
  inference::ServerLiveResponse live_response_;
  std::unique_ptr<grpc::ClientAsyncResponseReader<inference::ModelInferResponse>> reader_;
  std::unique_ptr<grpc::ClientAsyncResponseReader<inference::ServerLiveResponse>> live_reader_;
  std::unique_ptr<grpc::ClientContext> context_;
  grpc::Status status_;
  Clock::time_point sent_at_;
  uint64_t seq_ = 0;
  std::vector<uint32_t> latencies_us_;
  uint64_t errors_ = 0;
  std::string first_error_;
};

// Drives the clients of one completion queue until each has finished its last call.
void Drive(grpc::CompletionQueue* cq, int num_clients) {
  int active = num_clients;
  void* tag = nullptr;
  bool ok = false;
  while (active > 0 && cq->Next(&tag, &ok)) {
    if (!static_cast<Client*>(tag)->OnDone()) --active;
  }
}

double Percentile(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t index = std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()));
  return sorted[index] / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;
  const std::shared_ptr<grpc::ChannelCredentials> credentials = MakeCredentials(flags);
  if (credentials == nullptr) return 2;
  const Clock::time_point start = Clock::now();
  const auto measure_from = start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(flags.warmup_s));
  const auto stop_at = measure_from + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(flags.duration_s));
  const int num_threads = std::min(flags.threads, flags.concurrency);
  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues;
  for (int t = 0; t < num_threads; ++t) queues.push_back(std::make_unique<grpc::CompletionQueue>());
  const int num_channels =
      flags.connections > 0 ? std::min(flags.connections, flags.concurrency) : flags.concurrency;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < num_channels; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // its own TCP connection
    channels.push_back(
        grpc::CreateCustomChannel(flags.target, credentials, args));
  }
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<int> clients_per_queue(static_cast<size_t>(num_threads), 0);
  for (int c = 0; c < flags.concurrency; ++c) {
    clients.push_back(std::make_unique<Client>(c, channels[c % num_channels],
                                               queues[c % num_threads].get(), flags, measure_from,
                                               stop_at));
    ++clients_per_queue[static_cast<size_t>(c % num_threads)];
  }
  for (auto& client : clients) client->Send();
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back(Drive, queues[t].get(), clients_per_queue[static_cast<size_t>(t)]);
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<uint32_t> all;
  uint64_t errors = 0;
  std::string first_error;
  for (const auto& client : clients) {
    all.insert(all.end(), client->latencies_us().begin(), client->latencies_us().end());
    if (client->errors() > 0 && first_error.empty()) first_error = client->first_error();
    errors += client->errors();
  }
  std::sort(all.begin(), all.end());
  double mean_ms = 0;
  for (uint32_t us : all) mean_ms += us / 1000.0;
  mean_ms = all.empty() ? 0 : mean_ms / static_cast<double>(all.size());
  std::printf(
      "RESULT {\"protocol\": \"grpc\", \"concurrency\": %d, \"connections\": %d, "
      "\"requests\": %zu, \"errors\": %llu, "
      "\"throughput_rps\": %.1f, \"mean_ms\": %.3f, \"p50_ms\": %.3f, \"p90_ms\": %.3f, "
      "\"p99_ms\": %.3f}\n",
      flags.concurrency, num_channels, all.size(), static_cast<unsigned long long>(errors),
      static_cast<double>(all.size()) / flags.duration_s, mean_ms, Percentile(all, 0.5),
      Percentile(all, 0.9), Percentile(all, 0.99));
  if (errors > 0) std::fprintf(stderr, "first error: %s\n", first_error.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  // Exit without tearing down channels and queues: nothing left to check.
  std::_Exit(errors > 0 ? 1 : 0);
}
