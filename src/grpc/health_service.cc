#include "grpc/health_service.h"

#include <utility>

#include "common/str_cat.h"
#include "grpc/cq_tag.h"
#include "grpcpp/support/async_stream.h"
#include "grpcpp/support/byte_buffer.h"

namespace infera {
namespace {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// Health/Watch: each call is answered UNIMPLEMENTED (no message) as soon as it is matched
// and deleted when the status is sent; the next call is requested on the same queue.
class WatchMethod final : public AsyncMethod {
 public:
  WatchMethod(AsyncHealthService* service, LiveCalls* live_calls) : service_(service), live_calls_(live_calls) {}

  void Request(grpc::ServerCompletionQueue* cq) const override {
    auto* call = new Call(this, cq);
    service_->RequestWatch(&call->context_, &call->request_, &call->writer_, cq, cq, &call->matched_tag_);
  }

 private:
  class Call {
   public:
    Call(const WatchMethod* method, grpc::ServerCompletionQueue* cq) : method_(method), cq_(cq) {}

   private:
    friend class WatchMethod;

    void OnMatched(bool ok) {
      if (!ok) {  // the server is shutting down: no call
        delete this;
        return;
      }
      method_->live_calls_->Add();
      method_->Request(cq_);
      writer_.Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""), &finish_tag_);
    }
    void OnFinished(bool) {
      LiveCalls* live = method_->live_calls_;
      delete this;
      live->Remove();
    }

    const WatchMethod* const method_;
    grpc::ServerCompletionQueue* const cq_;
    grpc::ServerContext context_;
    grpc::ByteBuffer request_;
    grpc::ServerAsyncWriter<grpc::ByteBuffer> writer_{&context_};
    MemberTag<Call> matched_tag_{this, &Call::OnMatched};
    MemberTag<Call> finish_tag_{this, &Call::OnFinished};
  };

  AsyncHealthService* const service_;
  LiveCalls* const live_calls_;
};

}  // namespace

HealthService::HealthService(std::function<bool()> server_ready) : server_ready_(std::move(server_ready)) {}

std::vector<std::unique_ptr<AsyncMethod>> HealthService::Methods(LiveCalls* live_calls) {
  std::vector<std::unique_ptr<AsyncMethod>> methods;
  methods.push_back(MakeAsyncUnaryMethod(
      &service_, &AsyncHealthService::RequestCheck,
      [this](grpc::ServerContext&, const HealthCheckRequest& request, HealthCheckResponse* response,
             UnaryReply reply) { std::move(reply)(Check(request, response)); },
      live_calls));
  methods.push_back(std::make_unique<WatchMethod>(&service_, live_calls));
  return methods;
}

absl::Status HealthService::Check(const HealthCheckRequest& request, HealthCheckResponse* response) const {
  const std::string& service = request.service();
  if (!service.empty() && service != "inference.GRPCInferenceService") {
    return absl::NotFoundError(
        StrCat("unknown service '", service, "' (known: \"\", \"inference.GRPCInferenceService\")"));
  }
  const bool ready = server_ready_ && server_ready_();
  response->set_status(ready ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING);
  return absl::OkStatus();
}

}  // namespace infera
