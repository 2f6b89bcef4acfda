// grpc_floor_server: gRPC 1.51's own per-call cost, measured with infera's server
// structure and none of infera's code (docs/grpc.md, "Performance, second step").
//
// It serves inference.GRPCInferenceService (infera's proto) on the async completion-queue
// API exactly as src/grpc does: `--threads N` threads (default: the CPUs this process may
// use), each polling its **own** ServerCompletionQueue and running what it matches; a few
// calls of each served method requested per queue, a fresh call object requested as soon
// as one is matched, AsyncNotifyWhenDone armed on every call, the same builder settings
// (64 MiB message limits, insecure port), the same process settings as infera's main()
// (absl's mutex deadlock detection off: gRPC's locks are absl::Mutex) and the same
// malloc (bench/micro/CMakeLists.txt links infera's INFERA_ALLOCATOR). Two methods are
// served:
//
//   ServerLive  answers `live: true`: an empty call, the protocol's floor;
//   ModelInfer  answers an add_sub request (`simple`: two INT32 [1,16] raw inputs) with
//               OUTPUT0 = a + b and OUTPUT1 = a - b as raw contents, so `infera bench
//               --check` and infera_grpc_load accept the answers. Anything else is
//               INVALID_ARGUMENT. No model, manager, scheduler, statistics or tracing.
//
// So that `infera bench -i grpc -m simple` can drive it, ModelMetadata and ModelConfig
// describe `simple` (INT32 [-1,16] x2 in and out, max_batch_size 8) and ModelStatistics
// answers UNIMPLEMENTED (the load generator then leaves its server-side columns empty).
// Every other method is never requested (a client calling one waits until its deadline:
// this is a benchmark target, not a server).
//
//   grpc_floor_server [--port N] [--threads N] [--queues N] [--calls-per-queue N]
//                     [--channel-arg NAME=INT]... [--no-notify-when-done]
//
// Prints "PORT <n>" on stdout once it serves, then runs until SIGINT or SIGTERM. Tuning
// experiments: `--channel-arg` adds a server builder channel argument (e.g.
// grpc.max_concurrent_streams=1000, grpc.http2.bdp_probe=0), `--no-notify-when-done`
// measures what infera's per-call done tag costs, `--queues N` (< threads) lets threads
// share queues (round-robin) instead of one queue each.
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grpc_service.grpc.pb.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_context.h"

namespace {

constexpr int kWidth = 16;
using Service = inference::GRPCInferenceService::AsyncService;

struct Flags {
  int port = 0;
  int threads = 0;  // 0: the CPUs this process may use
  int queues = 0;   // 0: one per thread; else threads share them round-robin
  int calls_per_queue = 4;
  bool notify_when_done = true;
  std::vector<std::pair<std::string, int>> channel_args;
};

// A completion-queue tag: the polling thread calls Proceed(ok).
class Tag {
 public:
  virtual void Proceed(bool ok) = 0;

 protected:
  ~Tag() = default;
};

// One call of one unary method: requested → matched (answer, Finish) → finished →
// deleted once the done tag (when armed) is back too. Every tag returns on the queue it
// was requested on; with --queues < --threads two threads may poll that queue, so the
// finish and done tags may run at once on two threads: the count is atomic.
template <typename Request, typename Response>
class Call {
 public:
  using RequestFn = void (Service::*)(grpc::ServerContext*, Request*,
                                      grpc::ServerAsyncResponseWriter<Response>*,
                                      grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*);
  using Handler = grpc::Status (*)(const Request&, Response*);

  static void Start(Service* service, grpc::ServerCompletionQueue* cq, RequestFn request,
                    Handler handler, bool notify_when_done) {
    auto* call = new Call(service, cq, request, handler, notify_when_done);
    if (notify_when_done) call->context_.AsyncNotifyWhenDone(&call->done_);
    (service->*request)(&call->context_, &call->request_, &call->responder_, cq, cq,
                        &call->matched_);
  }

 private:
  class Step final : public Tag {
   public:
    Step(Call* call, void (Call::*fn)(bool)) : call_(call), fn_(fn) {}
    void Proceed(bool ok) override { (call_->*fn_)(ok); }

   private:
    Call* const call_;
    void (Call::*const fn_)(bool);
  };

  Call(Service* service, grpc::ServerCompletionQueue* cq, RequestFn request, Handler handler,
       bool notify_when_done)
      : service_(service),
        cq_(cq),
        request_fn_(request),
        handler_(handler),
        notify_(notify_when_done),
        pending_(notify_when_done ? 2 : 1) {}

  void OnMatched(bool ok) {
    if (!ok) {  // shutting down: no call, no done tag
      delete this;
      return;
    }
    Start(service_, cq_, request_fn_, handler_, notify_);
    const grpc::Status status = handler_(request_, &response_);
    if (status.ok()) {
      responder_.Finish(response_, grpc::Status::OK, &finished_);
    } else {
      responder_.FinishWithError(status, &finished_);
    }
  }
  void OnEnded(bool) {
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  Service* const service_;
  grpc::ServerCompletionQueue* const cq_;
  const RequestFn request_fn_;
  const Handler handler_;
  const bool notify_;
  std::atomic<int> pending_;  // finish tag, and the done tag when armed
  grpc::ServerContext context_;
  Request request_;
  Response response_;
  grpc::ServerAsyncResponseWriter<Response> responder_{&context_};
  Step matched_{this, &Call::OnMatched};
  Step finished_{this, &Call::OnEnded};
  Step done_{this, &Call::OnEnded};
};

grpc::Status ServerLive(const inference::ServerLiveRequest&, inference::ServerLiveResponse* response) {
  response->set_live(true);
  return grpc::Status::OK;
}

grpc::Status AddSub(const inference::ModelInferRequest& request,
                    inference::ModelInferResponse* response) {
  constexpr size_t kBytes = kWidth * sizeof(int32_t);
  if (request.raw_input_contents_size() != 2 || request.raw_input_contents(0).size() != kBytes ||
      request.raw_input_contents(1).size() != kBytes) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "grpc_floor_server answers only two INT32 [1,16] raw inputs");
  }
  int32_t a[kWidth], b[kWidth], sum[kWidth], difference[kWidth];
  std::memcpy(a, request.raw_input_contents(0).data(), kBytes);
  std::memcpy(b, request.raw_input_contents(1).data(), kBytes);
  for (int i = 0; i < kWidth; ++i) {
    // Wrapping, as add_sub does (unsigned arithmetic: no signed overflow).
    sum[i] = static_cast<int32_t>(static_cast<uint32_t>(a[i]) + static_cast<uint32_t>(b[i]));
    difference[i] = static_cast<int32_t>(static_cast<uint32_t>(a[i]) - static_cast<uint32_t>(b[i]));
  }
  response->set_model_name(request.model_name());
  response->set_model_version("1");
  response->set_id(request.id());
  for (const char* name : {"OUTPUT0", "OUTPUT1"}) {
    auto* output = response->add_outputs();
    output->set_name(name);
    output->set_datatype("INT32");
    output->add_shape(1);
    output->add_shape(kWidth);
  }
  response->add_raw_output_contents(reinterpret_cast<const char*>(sum), kBytes);
  response->add_raw_output_contents(reinterpret_cast<const char*>(difference), kBytes);
  return grpc::Status::OK;
}

grpc::Status Metadata(const inference::ModelMetadataRequest& request,
                      inference::ModelMetadataResponse* response) {
  if (request.name() != "simple") return grpc::Status(grpc::StatusCode::NOT_FOUND, "only 'simple'");
  response->set_name("simple");
  response->add_versions("1");
  response->set_platform("add_sub");
  for (const char* name : {"INPUT0", "INPUT1", "OUTPUT0", "OUTPUT1"}) {
    auto* tensor = name[0] == 'I' ? response->add_inputs() : response->add_outputs();
    tensor->set_name(name);
    tensor->set_datatype("INT32");
    tensor->add_shape(-1);
    tensor->add_shape(kWidth);
  }
  return grpc::Status::OK;
}

grpc::Status Config(const inference::ModelConfigRequest& request,
                    inference::ModelConfigResponse* response) {
  if (request.name() != "simple") return grpc::Status(grpc::StatusCode::NOT_FOUND, "only 'simple'");
  response->mutable_config()->set_name("simple");
  response->mutable_config()->set_max_batch_size(8);
  return grpc::Status::OK;
}

grpc::Status Statistics(const inference::ModelStatisticsRequest&, inference::ModelStatisticsResponse*) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "grpc_floor_server keeps no statistics");
}

int AvailableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

bool ParseInt(const std::string& text, int min, int* out) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < min || value > 1 << 30) return false;
  *out = static_cast<int>(value);
  return true;
}

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--port") {
      if (!ParseInt(value(), 0, &flags.port) || flags.port > 65535) {
        std::fprintf(stderr, "--port needs an integer in [0, 65535]\n");
        return false;
      }
    } else if (arg == "--threads") {
      if (!ParseInt(value(), 1, &flags.threads)) {
        std::fprintf(stderr, "--threads needs an integer >= 1\n");
        return false;
      }
    } else if (arg == "--queues") {
      if (!ParseInt(value(), 1, &flags.queues)) {
        std::fprintf(stderr, "--queues needs an integer >= 1\n");
        return false;
      }
    } else if (arg == "--calls-per-queue") {
      if (!ParseInt(value(), 1, &flags.calls_per_queue)) {
        std::fprintf(stderr, "--calls-per-queue needs an integer >= 1\n");
        return false;
      }
    } else if (arg == "--channel-arg") {
      const std::string text = value();
      const size_t eq = text.find('=');
      int number = 0;
      if (eq == std::string::npos || eq == 0 ||
          !ParseInt(text.substr(eq + 1), -(1 << 30), &number)) {
        std::fprintf(stderr, "--channel-arg needs NAME=INTEGER, got '%s'\n", text.c_str());
        return false;
      }
      flags.channel_args.emplace_back(text.substr(0, eq), number);
    } else if (arg == "--no-notify-when-done") {
      flags.notify_when_done = false;
    } else {
      std::fprintf(stderr,
                   "unknown argument '%s'\nusage: grpc_floor_server [--port N] [--threads N] [--queues N]"
                   " [--calls-per-queue N] [--channel-arg NAME=INT]... [--no-notify-when-done]\n",
                   arg.c_str());
      return false;
    }
  }
  return true;
}

void Poll(grpc::ServerCompletionQueue* cq) {
  void* tag = nullptr;
  bool ok = false;
  while (cq->Next(&tag, &ok)) static_cast<Tag*>(tag)->Proceed(ok);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);  // as infera's main()
  if (flags.threads == 0) flags.threads = AvailableCpus();
  if (flags.queues == 0 || flags.queues > flags.threads) flags.queues = flags.threads;

  // Block the stop signals before any thread exists, so only sigwait below sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  Service service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(flags.port),
                           grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(64 << 20);  // infera's default --grpc-max-message-bytes
  builder.SetMaxSendMessageSize(64 << 20);
  for (const auto& [name, number] : flags.channel_args) builder.AddChannelArgument(name, number);
  builder.RegisterService(&service);
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues;
  for (int i = 0; i < flags.queues; ++i) queues.push_back(builder.AddCompletionQueue());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "cannot serve on 127.0.0.1:%d\n", flags.port);
    return 1;
  }

  std::vector<std::thread> threads;
  for (int i = 0; i < flags.queues; ++i) {
    grpc::ServerCompletionQueue* cq = queues[i].get();
    for (int n = 0; n < flags.calls_per_queue; ++n) {
      Call<inference::ServerLiveRequest, inference::ServerLiveResponse>::Start(
          &service, cq, &Service::RequestServerLive, &ServerLive, flags.notify_when_done);
      Call<inference::ModelInferRequest, inference::ModelInferResponse>::Start(
          &service, cq, &Service::RequestModelInfer, &AddSub, flags.notify_when_done);
    }
    Call<inference::ModelMetadataRequest, inference::ModelMetadataResponse>::Start(
        &service, cq, &Service::RequestModelMetadata, &Metadata, flags.notify_when_done);
    Call<inference::ModelConfigRequest, inference::ModelConfigResponse>::Start(
        &service, cq, &Service::RequestModelConfig, &Config, flags.notify_when_done);
    Call<inference::ModelStatisticsRequest, inference::ModelStatisticsResponse>::Start(
        &service, cq, &Service::RequestModelStatistics, &Statistics, flags.notify_when_done);
  }
  for (int i = 0; i < flags.threads; ++i) {
    threads.emplace_back(Poll, queues[i % flags.queues].get());
    pthread_setname_np(threads.back().native_handle(), ("floor-cq-" + std::to_string(i)).c_str());
  }
  std::printf("PORT %d\n", port);
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop, &signal);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server->Wait();
  for (auto& cq : queues) cq->Shutdown();
  for (std::thread& thread : threads) thread.join();
  return 0;
}
