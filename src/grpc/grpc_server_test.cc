// GrpcServer over a real loopback socket, driven by the generated C++ client: the call
// machinery (reactors, streams, cancellation, limits) that unit tests of the codec
// cannot reach. The protocol as a whole is tested black-box from Python
// (tests/integration/test_grpc.py, with independently generated stubs).
#include "grpc/grpc_server.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "backend/builtin/builtin_backends.h"
#include "common/logging.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "grpc_service.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "health.grpc.pb.h"

namespace infera {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using inference::GRPCInferenceService;
using inference::ModelInferRequest;
using inference::ModelInferResponse;
using inference::ModelStreamInferResponse;

// Identity over one INT32, whose executions wait until the test opens the gate.
class GateBackend : public Backend {
 public:
  std::string_view name() const override { return "gate"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
    return std::unique_ptr<LoadedModel>(new Model(this));
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  // Runs `probe` at the start of every execution, on the worker (nullptr: none).
  void SetOnExecute(std::function<void()> probe) {
    absl::MutexLock lock(&mu_);
    on_execute_ = std::move(probe);
  }
  int executions() {
    absl::MutexLock lock(&mu_);
    return executions_;
  }
  void WaitForExecutions(int n) {
    std::pair<GateBackend*, int> arg(this, n);
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](std::pair<GateBackend*, int>* a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(a->first->mu_) {
          return a->first->executions_ >= a->second;
        },
        &arg));
  }

 private:
  class Instance : public ModelInstance {
   public:
    explicit Instance(GateBackend* gate) : gate_(gate) {}
    absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
      std::function<void()> probe;
      {
        absl::MutexLock lock(&gate_->mu_);
        probe = gate_->on_execute_;
      }
      if (probe) probe();
      absl::MutexLock lock(&gate_->mu_);
      ++gate_->executions_;
      gate_->mu_.Await(absl::Condition(&gate_->open_));
      inputs[0].name = "OUT";
      return inputs;
    }
   private:
    GateBackend* gate_;
  };
  class Model : public LoadedModel {
   public:
    explicit Model(GateBackend* gate) : gate_(gate) {}
    absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
      return std::unique_ptr<ModelInstance>(new Instance(gate_));
    }
   private:
    GateBackend* gate_;
  };

  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  int executions_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void()> on_execute_ ABSL_GUARDED_BY(mu_);
};

// Polls `condition` until it holds or `timeout` passes; false on timeout.
bool WaitUntil(const std::function<bool()>& condition, absl::Duration timeout = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

// Redirects fd 2 (where infera's log goes) into a pipe for its lifetime, so that a test
// can wait for a log line the server writes when something happens that it exposes no
// other way. What was captured is written to the real stderr at the end.
class StderrWatcher {
 public:
  StderrWatcher() {
    EXPECT_EQ(::pipe(fds_), 0);
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(fds_[1], STDERR_FILENO);
  }
  ~StderrWatcher() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    ::close(fds_[1]);
    Drain(0);
    ::close(fds_[0]);
    ssize_t ignored = ::write(STDERR_FILENO, seen_.data(), seen_.size());
    (void)ignored;
  }
  // Whether `text` was logged within `timeout`.
  bool WaitFor(std::string_view text, absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (seen_.find(text) == std::string::npos) {
      const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (left_ms <= 0) return false;
      Drain(static_cast<int>(left_ms));
    }
    return true;
  }

 private:
  void Drain(int timeout_ms) {
    pollfd p{fds_[0], POLLIN, 0};
    while (::poll(&p, 1, timeout_ms) > 0) {
      char buf[4096];
      const ssize_t n = ::read(fds_[0], buf, sizeof(buf));
      if (n <= 0) return;
      seen_.append(buf, static_cast<size_t>(n));
      timeout_ms = 0;  // take what is there, then return
    }
  }
  int fds_[2] = {-1, -1};
  int saved_ = -1;
  std::string seen_;
};

constexpr char kSimple[] = R"pb(
  name: "simple" backend: "add_sub" max_batch_size: 8
  input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
  output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
)pb";

constexpr char kGate[] = R"pb(
  name: "gate" backend: "gate" max_batch_size: 0
  input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
  output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
  instance_group [ { count: 1 } ]
)pb";

std::string Int32Bytes(std::vector<int32_t> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4);
}

ModelInferRequest SimpleRequest(const std::string& id, int32_t base, int64_t width = 4) {
  ModelInferRequest m;
  m.set_model_name("simple");
  m.set_id(id);
  for (const char* name : {"INPUT0", "INPUT1"}) {
    auto* input = m.add_inputs();
    input->set_name(name);
    input->set_datatype("INT32");
    input->add_shape(1);
    input->add_shape(width);
  }
  m.add_raw_input_contents(Int32Bytes(std::vector<int32_t>(static_cast<size_t>(width), base)));
  m.add_raw_input_contents(Int32Bytes(std::vector<int32_t>(static_cast<size_t>(width), 1)));
  return m;
}

ModelInferRequest GateRequest(const std::string& id) {
  ModelInferRequest m;
  m.set_model_name("gate");
  m.set_id(id);
  auto* input = m.add_inputs();
  input->set_name("IN");
  input->set_datatype("INT32");
  input->add_shape(1);
  m.add_raw_input_contents(Int32Bytes({7}));
  return m;
}

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / StrCat("infera_grpc_server_test_", ::getpid());
    fs::remove_all(root_);
    AddModel("simple", kSimple);
    AddModel("gate", kGate);
    registry_.Register(CreateAddSubBackend());
    auto gate = std::make_unique<GateBackend>();
    gate_ = gate.get();
    registry_.Register(std::move(gate));
    ModelManager::Options options;
    options.repository = root_;
    options.backends = &registry_;
    auto manager = ModelManager::Create(std::move(options));
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
    manager_->LoadAll();
  }
  void TearDown() override {
    if (gate_) gate_->Open();
    server_.reset();
    manager_.reset();
    fs::remove_all(root_);
  }
  void AddModel(const std::string& name, const std::string& config) {
    fs::create_directories(root_ / name / "1");
    std::ofstream(root_ / name / "config.pbtxt") << config;
  }
  void StartServer(GrpcServer::Options options = {}) {
    options.address = "127.0.0.1";
    options.port = 0;
    options.server_version = "test";
    options.server_ready = [] { return true; };
    auto server = GrpcServer::Start(options, *manager_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    channel_ = grpc::CreateChannel(StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = GRPCInferenceService::NewStub(channel_);
  }

  fs::path root_;
  BackendRegistry registry_;
  GateBackend* gate_ = nullptr;
  std::unique_ptr<ModelManager> manager_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<GRPCInferenceService::Stub> stub_;
};

TEST_F(GrpcServerTest, UnaryInferHealthAndErrorsOverARealSocket) {
  StartServer();
  EXPECT_GT(server_->port(), 0);
  grpc::ClientContext context;
  ModelInferResponse response;
  grpc::Status status = stub_->ModelInfer(&context, SimpleRequest("a", 5), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.id(), "a");
  EXPECT_EQ(response.model_version(), "1");
  ASSERT_EQ(response.raw_output_contents_size(), 2);
  EXPECT_EQ(response.raw_output_contents(0), Int32Bytes({6, 6, 6, 6}));
  EXPECT_EQ(response.raw_output_contents(1), Int32Bytes({4, 4, 4, 4}));

  ModelInferRequest unknown = SimpleRequest("b", 1);
  unknown.set_model_name("nope");
  grpc::ClientContext context2;
  status = stub_->ModelInfer(&context2, unknown, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("Request for unknown model: 'nope' is not found"));

  grpc::ClientContext context3;
  status = stub_->ModelInfer(&context3, SimpleRequest("c", 1, 3), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::health::v1::HealthCheckRequest check;
  grpc::health::v1::HealthCheckResponse verdict;
  grpc::ClientContext context4;
  ASSERT_TRUE(health->Check(&context4, check, &verdict).ok());
  EXPECT_EQ(verdict.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  check.set_service("other");
  grpc::ClientContext context5;
  EXPECT_EQ(health->Check(&context5, check, &verdict).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, StreamAnswersEveryRequestWithErrorsInBand) {
  StartServer();
  grpc::ClientContext context;
  auto stream = stub_->ModelStreamInfer(&context);
  constexpr int kRequests = 30;
  for (int i = 0; i < kRequests; ++i) {
    ModelInferRequest request = SimpleRequest(StrCat("r", i), i);
    if (i % 3 == 1) request.set_model_name("nope");
    if (i % 3 == 2) request.mutable_inputs(0)->set_datatype("FP32");
    ASSERT_TRUE(stream->Write(request));
  }
  stream->WritesDone();
  std::map<std::string, ModelStreamInferResponse> answers;
  ModelStreamInferResponse answer;
  while (stream->Read(&answer)) answers[answer.infer_response().id()] = answer;
  ASSERT_TRUE(stream->Finish().ok());
  ASSERT_EQ(answers.size(), static_cast<size_t>(kRequests));
  for (int i = 0; i < kRequests; ++i) {
    const ModelStreamInferResponse& a = answers[StrCat("r", i)];
    if (i % 3 == 0) {
      EXPECT_EQ(a.error_message(), "");
      EXPECT_EQ(a.infer_response().raw_output_contents(0), Int32Bytes({i + 1, i + 1, i + 1, i + 1}));
    } else if (i % 3 == 1) {
      EXPECT_THAT(a.error_message(), HasSubstr("Request for unknown model: 'nope' is not found"));
      EXPECT_EQ(a.infer_response().model_name(), "nope");
    } else {
      EXPECT_THAT(a.error_message(), HasSubstr("FP32"));
    }
  }
}

TEST_F(GrpcServerTest, StreamStopsReadingWhileTooManyAnswersArePending) {
  GrpcServer::Options options;
  options.max_pending_per_stream = 2;
  StartServer(options);
  auto model = manager_->GetModelVersion("gate", std::nullopt);
  ASSERT_TRUE(model.ok());
  grpc::ClientContext context;
  // Read and unanswered never exceeds 2: at the start of each execution (one running)
  // at most one more waits in the queue.
  std::atomic<size_t> max_queued{0};
  gate_->SetOnExecute([&max_queued, version = *model] {
    const size_t depth = version->QueueDepth();
    size_t seen = max_queued.load();
    while (depth > seen && !max_queued.compare_exchange_weak(seen, depth)) {
    }
  });
  auto stream = stub_->ModelStreamInfer(&context);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(stream->Write(GateRequest(StrCat("g", i))));
  gate_->WaitForExecutions(1);
  // Two read: one executing, one queued; the other four wait in the transport.
  ASSERT_TRUE(WaitUntil([&] { return (*model)->QueueDepth() >= 1; }));
  EXPECT_EQ((*model)->QueueDepth(), 1u);
  EXPECT_EQ(gate_->executions(), 1);
  gate_->Open();
  stream->WritesDone();
  int answers = 0;
  ModelStreamInferResponse answer;
  while (stream->Read(&answer)) {
    EXPECT_EQ(answer.error_message(), "");
    ++answers;
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(answers, 6);
  gate_->SetOnExecute(nullptr);
  EXPECT_LE(max_queued.load(), 1u);
}

TEST_F(GrpcServerTest, CancellingACallCancelsItsQueuedRequest) {
  StartServer();
  auto model = manager_->GetModelVersion("gate", std::nullopt);
  ASSERT_TRUE(model.ok());
  grpc::ClientContext first_context, second_context;
  ModelInferResponse first_response, second_response;
  grpc::Status first_status, second_status;
  std::thread first([&] { first_status = stub_->ModelInfer(&first_context, GateRequest("1"), &first_response); });
  gate_->WaitForExecutions(1);  // the only instance is now busy
  std::thread second([&] { second_status = stub_->ModelInfer(&second_context, GateRequest("2"), &second_response); });
  ASSERT_TRUE(WaitUntil([&] { return (*model)->QueueDepth() > 0; }));
  const LogLevel level = GetLogLevel();
  SetLogLevel(LogLevel::kVerbose);
  {
    StderrWatcher log;
    second_context.TryCancel();
    second.join();
    EXPECT_EQ(second_status.error_code(), grpc::StatusCode::CANCELLED);
    // The client knows at once; the server learns it when the RST_STREAM arrives, and
    // logs it after cancelling the request's token: wait for that before the queued
    // request can reach an instance.
    EXPECT_TRUE(log.WaitFor("gRPC ModelInfer cancelled by the client"));
  }
  SetLogLevel(level);
  gate_->Open();
  first.join();
  EXPECT_TRUE(first_status.ok()) << first_status.error_message();
  // The cancelled request was dropped from the queue, never executed.
  grpc::ClientContext after;
  ModelInferResponse after_response;
  ASSERT_TRUE(stub_->ModelInfer(&after, GateRequest("3"), &after_response).ok());
  EXPECT_EQ(gate_->executions(), 2);
}

TEST_F(GrpcServerTest, CancellingAStreamEndsItAndTheServerGoesOn) {
  StartServer();
  auto stream_context = std::make_unique<grpc::ClientContext>();
  auto stream = stub_->ModelStreamInfer(stream_context.get());
  ASSERT_TRUE(stream->Write(GateRequest("s1")));
  ASSERT_TRUE(stream->Write(GateRequest("s2")));
  gate_->WaitForExecutions(1);
  stream_context->TryCancel();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  gate_->Open();
  grpc::ClientContext context;
  ModelInferResponse response;
  EXPECT_TRUE(stub_->ModelInfer(&context, SimpleRequest("after", 1), &response).ok());
}

TEST_F(GrpcServerTest, MessagesOverTheLimitAreResourceExhausted) {
  GrpcServer::Options options;
  options.max_message_bytes = 1024;
  StartServer(options);
  grpc::ClientContext context;
  ModelInferResponse response;
  grpc::Status status = stub_->ModelInfer(&context, SimpleRequest("big", 1, 300), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("1024"));
}

TEST_F(GrpcServerTest, ShutdownFinishesInFlightCallsAndRefusesNewOnes) {
  StartServer();
  grpc::ClientContext context;
  ModelInferResponse response;
  grpc::Status status;
  std::thread call([&] { status = stub_->ModelInfer(&context, GateRequest("inflight"), &response); });
  gate_->WaitForExecutions(1);
  // Opens the gate once shutdown has begun (new calls are refused), not after a sleep.
  std::thread opener([this] {
    EXPECT_TRUE(WaitUntil([this] {
      grpc::ClientContext probe;
      probe.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
      inference::ServerLiveResponse live;
      return !stub_->ServerLive(&probe, inference::ServerLiveRequest(), &live).ok();
    }));
    gate_->Open();
  });
  server_->Shutdown(std::chrono::seconds(10));  // waits for the in-flight call
  call.join();
  opener.join();
  EXPECT_TRUE(status.ok()) << status.error_message();
  grpc::ClientContext late;
  EXPECT_FALSE(stub_->ModelInfer(&late, SimpleRequest("late", 1), &response).ok());
}

TEST_F(GrpcServerTest, ShutdownEndsIdleStreamsAtOnceAndBusyOnesAfterTheirAnswers) {
  StartServer();
  grpc::ClientContext idle_context, busy_context;
  auto idle = stub_->ModelStreamInfer(&idle_context);
  ModelStreamInferResponse answer;
  ASSERT_TRUE(idle->Write(SimpleRequest("i1", 1)));
  ASSERT_TRUE(idle->Read(&answer));  // answered: the stream is idle, still open
  auto busy = stub_->ModelStreamInfer(&busy_context);
  ASSERT_TRUE(busy->Write(GateRequest("b1")));
  gate_->WaitForExecutions(1);
  // The idle stream must end while the busy one is still executing: the gate opens
  // only once it has (an event, not a sleep).
  bool idle_ended = false;
  std::thread opener([&] {
    ModelStreamInferResponse none;
    idle_ended = !idle->Read(&none);
    gate_->Open();
  });
  const auto start = std::chrono::steady_clock::now();
  server_->Shutdown(std::chrono::seconds(20));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  opener.join();
  EXPECT_TRUE(idle_ended);
  grpc::Status idle_status = idle->Finish();
  EXPECT_EQ(idle_status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(idle_status.error_message(), HasSubstr("shutting down"));
  ASSERT_TRUE(busy->Read(&answer));  // the request in flight was still answered
  EXPECT_EQ(answer.infer_response().id(), "b1");
  EXPECT_EQ(answer.error_message(), "");
  EXPECT_EQ(busy->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(GrpcServerTest, ADeadlineThatPassesInTheQueueDropsTheRequest) {
  StartServer();
  auto model = manager_->GetModelVersion("gate", std::nullopt);
  ASSERT_TRUE(model.ok());
  grpc::ClientContext first_context;
  ModelInferResponse first_response;
  grpc::Status first_status;
  std::thread first([&] { first_status = stub_->ModelInfer(&first_context, GateRequest("1"), &first_response); });
  gate_->WaitForExecutions(1);  // the only instance is now busy
  const LogLevel level = GetLogLevel();
  SetLogLevel(LogLevel::kVerbose);
  {
    StderrWatcher log;
    grpc::ClientContext late_context;
    late_context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    ModelInferResponse late_response;
    grpc::Status late = stub_->ModelInfer(&late_context, GateRequest("late"), &late_response);
    EXPECT_EQ(late.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    // The server's deadline fires the call's cancellation token (the done tag).
    EXPECT_TRUE(log.WaitFor("gRPC ModelInfer cancelled by the client"));
  }
  SetLogLevel(level);
  gate_->Open();
  first.join();
  EXPECT_TRUE(first_status.ok()) << first_status.error_message();
  grpc::ClientContext after;
  ModelInferResponse after_response;
  ASSERT_TRUE(stub_->ModelInfer(&after, GateRequest("3"), &after_response).ok());
  EXPECT_EQ(gate_->executions(), 2);  // the expired request never ran
}

TEST_F(GrpcServerTest, ManyInferThreadsServeConcurrentCallsAndStreams) {
  GrpcServer::Options options;
  options.infer_threads = 3;
  StartServer(options);
  constexpr int kClients = 6;
  constexpr int kCalls = 40;
  std::atomic<int> wrong{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      // Each client its own channel (its own connection), half of them on a stream.
      auto stub = GRPCInferenceService::NewStub(grpc::CreateCustomChannel(
          StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials(),
          [c] {
            grpc::ChannelArguments args;
            args.SetInt("infera.client", c);  // distinct arguments: no shared subchannel
            return args;
          }()));
      if (c % 2 == 0) {
        for (int i = 0; i < kCalls; ++i) {
          grpc::ClientContext context;
          ModelInferResponse response;
          const int base = c * 1000 + i;
          grpc::Status status = stub->ModelInfer(&context, SimpleRequest(StrCat(c, "-", i), base), &response);
          if (!status.ok() || response.id() != StrCat(c, "-", i) ||
              response.raw_output_contents(0) != Int32Bytes({base + 1, base + 1, base + 1, base + 1})) {
            ++wrong;
          }
        }
        return;
      }
      grpc::ClientContext context;
      auto stream = stub->ModelStreamInfer(&context);
      for (int i = 0; i < kCalls; ++i) {
        if (!stream->Write(SimpleRequest(StrCat(c, "-", i), c * 1000 + i))) ++wrong;
      }
      stream->WritesDone();
      std::set<std::string> ids;
      ModelStreamInferResponse answer;
      while (stream->Read(&answer)) {
        const std::string& id = answer.infer_response().id();
        const int base = c * 1000 + std::stoi(id.substr(id.find('-') + 1));
        if (!answer.error_message().empty() ||
            answer.infer_response().raw_output_contents(1) != Int32Bytes({base - 1, base - 1, base - 1, base - 1})) {
          ++wrong;
        }
        ids.insert(id);
      }
      if (!stream->Finish().ok() || ids.size() != static_cast<size_t>(kCalls)) ++wrong;
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(GrpcServerTest, AnswersRecordDecodeAndEncodeButNoWrite) {
  StartServer();
  auto model = manager_->GetModelVersion("simple", std::nullopt);
  ASSERT_TRUE(model.ok());
  grpc::ClientContext context;
  ModelInferResponse response;
  ASSERT_TRUE(stub_->ModelInfer(&context, SimpleRequest("w", 1), &response).ok());
  grpc::ClientContext stream_context;
  auto stream = stub_->ModelStreamInfer(&stream_context);
  ASSERT_TRUE(stream->Write(SimpleRequest("ws", 2)));
  ModelStreamInferResponse answer;
  ASSERT_TRUE(stream->Read(&answer));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  // Both are recorded before the answer is handed to gRPC, so before the client has it.
  const StatisticsSnapshot snapshot = (*model)->statistics().Snapshot();
  EXPECT_EQ(snapshot.decode.count, 2u);
  EXPECT_EQ(snapshot.encode.count, 2u);
  // gRPC flow-controls the bytes inside the library: no write time (docs/diagnosis.md).
  EXPECT_EQ(snapshot.write.count, 0u);
}

}  // namespace
}  // namespace infera
