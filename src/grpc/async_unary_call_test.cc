// AsyncUnaryMethod over a real loopback gRPC server with one completion queue polled by
// the test: inline answers, errors, answers from another thread, a dropped reply, calls
// re-requested per queue, and a shutdown that leaves no call behind. Uses Health/Check
// as the unary method (its messages are small and it is part of the build anyway).
#include "grpc/async_unary_call.h"

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grpc/cq_tag.h"
#include "grpc/health_service.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "health.grpc.pb.h"

namespace infera {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// A server whose only unary method is Health/Check with `handler`, served on one queue
// polled by one thread of the fixture, as InferCqThreads does.
class AsyncUnaryCallTest : public ::testing::Test {
 protected:
  void Start(AsyncUnaryMethod<HealthCheckRequest, HealthCheckResponse>::Handler handler) {
    method_ = MakeAsyncUnaryMethod(&service_, &AsyncHealthService::RequestCheck, std::move(handler), &live_);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    cq_ = builder.AddCompletionQueue();
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    method_->Request(cq_.get());
    poller_ = std::thread([this] {
      void* tag = nullptr;
      bool ok = false;
      while (cq_->Next(&tag, &ok)) static_cast<CqTag*>(tag)->Proceed(ok);
    });
    stub_ = Health::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  }

  // The server's shutdown order (grpc_server.cc): stop, wait for live calls, stop the queue.
  void Stop() {
    if (server_ == nullptr) return;
    server_->Shutdown();
    server_->Wait();
    live_.AwaitNone();
    cq_->Shutdown();
    poller_.join();
    server_.reset();
  }

  void TearDown() override { Stop(); }

  grpc::Status Call(const std::string& service, HealthCheckResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    HealthCheckRequest request;
    request.set_service(service);
    return stub_->Check(&context, request, response);
  }

  AsyncHealthService service_;
  LiveCalls live_;
  std::unique_ptr<AsyncMethod> method_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::unique_ptr<grpc::Server> server_;
  std::thread poller_;
  std::unique_ptr<Health::Stub> stub_;
};

TEST_F(AsyncUnaryCallTest, AnswersInlineAndReRequestsEveryCall) {
  Start([](grpc::ServerContext&, const HealthCheckRequest& request, HealthCheckResponse* response,
           UnaryReply reply) {
    if (request.service() == "bad") return std::move(reply)(absl::NotFoundError("no service 'bad'"));
    response->set_status(HealthCheckResponse::SERVING);
    std::move(reply)(absl::OkStatus());
  });
  // One call is requested at a time; each matched call requests the next.
  for (int i = 0; i < 20; ++i) {
    HealthCheckResponse response;
    ASSERT_TRUE(Call("", &response).ok());
    EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  }
  HealthCheckResponse response;
  grpc::Status status = Call("bad", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "no service 'bad'");
  Stop();
  EXPECT_EQ(live_.count(), 0);
}

TEST_F(AsyncUnaryCallTest, AnswersFromAnotherThread) {
  absl::Mutex mu;
  std::vector<std::thread> repliers;
  Start([&](grpc::ServerContext&, const HealthCheckRequest&, HealthCheckResponse* response, UnaryReply reply) {
    absl::MutexLock lock(&mu);
    repliers.emplace_back([response, reply = std::move(reply)]() mutable {
      response->set_status(HealthCheckResponse::NOT_SERVING);
      std::move(reply)(absl::OkStatus());
    });
  });
  for (int i = 0; i < 10; ++i) {
    HealthCheckResponse response;
    ASSERT_TRUE(Call("", &response).ok());
    EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
  }
  Stop();
  for (std::thread& thread : repliers) thread.join();
  EXPECT_EQ(live_.count(), 0);
}

TEST_F(AsyncUnaryCallTest, DroppedReplyAnswersInternal) {
  Start([](grpc::ServerContext&, const HealthCheckRequest&, HealthCheckResponse*, UnaryReply) {});
  HealthCheckResponse response;
  grpc::Status status = Call("", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(status.error_message(), "the server dropped this call unanswered");
}

TEST_F(AsyncUnaryCallTest, ShutdownWaitsForACallAnsweredLater) {
  // The call is answered only after shutdown has begun; the server's order still ends
  // with no call left and the queue drained.
  absl::Mutex mu;
  std::optional<UnaryReply> held;  // under mu
  Start([&](grpc::ServerContext&, const HealthCheckRequest&, HealthCheckResponse* response, UnaryReply reply) {
    response->set_status(HealthCheckResponse::SERVING);
    absl::MutexLock lock(&mu);
    held.emplace(std::move(reply));
  });
  grpc::Status status;
  std::thread client([&] {
    HealthCheckResponse response;
    status = Call("", &response);
  });
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(+[](std::optional<UnaryReply>* h) { return h->has_value(); }, &held));
  }
  std::thread stopper([&] { Stop(); });
  {
    absl::MutexLock lock(&mu);
    std::move(*held)(absl::OkStatus());
    held.reset();
  }
  stopper.join();
  client.join();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(live_.count(), 0);
}

}  // namespace
}  // namespace infera
