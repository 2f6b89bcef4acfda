#include "tools/bench/grpc_client.h"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "common/str_cat.h"
#include "grpc_service.grpc.pb.h"
#include "tools/bench/grpc_messages.h"
#include "tools/bench/response_checker.h"

namespace infera::bench {
namespace {

using inference::GRPCInferenceService;

void SetDeadline(grpc::ClientContext& context, int64_t timeout_ns) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::nanoseconds(timeout_ns));
}

// One ModelInfer call in flight; owned by the client until its completion is handled.
struct Call {
  grpc::ClientContext context;
  inference::ModelInferResponse response;
  size_t payload = 0;
  int64_t sent_ns = 0;
  InferClient::Done done;
  bool closed = false;  // Close() has reported it
};

}  // namespace

class GrpcInferClient::Impl {
 public:
  Impl(boost::asio::io_context& io, const Clock& clock, GrpcClientOptions options,
       std::vector<inference::ModelInferRequest> requests, std::vector<std::vector<Tensor>> expected)
      : io_(io), clock_(clock), options_(std::move(options)), requests_(std::move(requests)),
        expected_(std::move(expected)), channel_(MakeBenchChannel(options_.target)),
        stub_(GRPCInferenceService::NewStub(channel_)) {}

  ~Impl() {
    // A call's context and response must outlive gRPC's use of them, and its callback
    // posts to io_: cancel what is in flight and wait for every callback to return.
    // The owner has stopped the io_context (load_shard.h), so the posted completions
    // are destroyed, never run.
    for (auto& [call, owned] : in_flight_) call->context.TryCancel();
    while (outstanding_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  void Send(size_t payload, Done done) {
    auto call = std::make_unique<Call>();
    call->payload = payload;
    call->done = std::move(done);
    call->sent_ns = clock_.NowNs();
    SetDeadline(call->context, options_.request_timeout_ns);
    Call* raw = call.get();
    in_flight_.emplace(raw, std::move(call));
    outstanding_.fetch_add(1);
    stub_->async()->ModelInfer(&raw->context, &requests_[payload], &raw->response,
                               [this, raw](grpc::Status status) {
                                 // A gRPC thread: hand the completion to the driver's thread.
                                 boost::asio::post(io_, [this, raw, status = std::move(status)] {
                                   Complete(raw, status);
                                 });
                                 outstanding_.fetch_sub(1);
                               });
  }

  int max_in_flight() const { return options_.max_in_flight; }
  size_t num_payloads() const { return requests_.size(); }

  void Close() {
    // Outstanding calls fail now, as the InferClient contract says (the driver reads
    // its totals right after Close); their cancelled completions are then dropped.
    std::vector<Call*> failing;
    for (auto& [call, owned] : in_flight_) {
      call->context.TryCancel();
      if (!call->closed) failing.push_back(call);
    }
    for (Call* call : failing) {
      call->closed = true;
      std::move(call->done)(ErrorResult("grpc CANCELLED", "client closed", call->sent_ns));
    }
  }

 private:
  void Complete(Call* raw, const grpc::Status& status) {
    auto it = in_flight_.find(raw);
    if (it == in_flight_.end()) return;
    std::unique_ptr<Call> call = std::move(it->second);
    in_flight_.erase(it);
    if (call->closed) return;  // failed by Close()
    RequestResult result;
    result.sent_ns = call->sent_ns;
    if (!status.ok()) {
      result = ErrorResult(StrCat("grpc ", GrpcCodeName(status.error_code())), status.error_message(), call->sent_ns);
    } else if (options_.check && !expected_[call->payload].empty()) {
      auto outputs = DecodeModelInferOutputs(call->response);
      absl::Status checked = outputs.ok() ? CompareOutputs(expected_[call->payload], *outputs) : outputs.status();
      if (checked.ok()) {
        result.ok = true;
      } else {
        result = ErrorResult(outputs.ok() ? "check" : "invalid response", std::string(checked.message()),
                             call->sent_ns);
      }
    } else {
      result.ok = true;
    }
    std::move(call->done)(std::move(result));
  }

  boost::asio::io_context& io_;
  const Clock& clock_;
  const GrpcClientOptions options_;
  const std::vector<inference::ModelInferRequest> requests_;
  const std::vector<std::vector<Tensor>> expected_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<GRPCInferenceService::Stub> stub_;
  std::atomic<int> outstanding_{0};  // callbacks not yet returned (any thread)
  std::map<Call*, std::unique_ptr<Call>> in_flight_;  // io thread only
};

absl::StatusOr<std::unique_ptr<GrpcInferClient>> GrpcInferClient::Create(boost::asio::io_context& io,
                                                                         const Clock& clock,
                                                                         GrpcClientOptions options,
                                                                         const std::vector<PayloadData>& payloads) {
  if (payloads.empty()) return absl::InvalidArgumentError("no payloads");
  std::vector<inference::ModelInferRequest> requests;
  std::vector<std::vector<Tensor>> expected;
  for (const PayloadData& p : payloads) {
    requests.push_back(BuildModelInferRequest(options.model, options.model_version, p));
    expected.push_back(options.check ? p.expected_outputs : std::vector<Tensor>{});
  }
  return std::unique_ptr<GrpcInferClient>(new GrpcInferClient(
      std::make_unique<Impl>(io, clock, std::move(options), std::move(requests), std::move(expected))));
}

GrpcInferClient::GrpcInferClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcInferClient::~GrpcInferClient() = default;
void GrpcInferClient::Send(size_t payload_index, Done done) { impl_->Send(payload_index, std::move(done)); }
int GrpcInferClient::max_in_flight() const { return impl_->max_in_flight(); }
size_t GrpcInferClient::num_payloads() const { return impl_->num_payloads(); }
void GrpcInferClient::Close() { impl_->Close(); }

absl::StatusOr<ModelMetadata> FetchGrpcModelMetadata(const GrpcTarget& target, const std::string& model,
                                                     const std::string& version, int timeout_ms) {
  auto stub = GRPCInferenceService::NewStub(MakeBenchChannel(target));
  grpc::ClientContext context;
  SetDeadline(context, int64_t{timeout_ms} * kNsPerMs);
  inference::ModelMetadataRequest request;
  request.set_name(model);
  request.set_version(version);
  inference::ModelMetadataResponse response;
  grpc::Status status = stub->ModelMetadata(&context, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(StrCat("gRPC ModelMetadata at ", target.address, ": ", GrpcCodeName(status.error_code()),
                                         ": ", status.error_message()));
  }
  ModelMetadata metadata;
  metadata.name = response.name();
  metadata.platform = response.platform();
  metadata.versions.assign(response.versions().begin(), response.versions().end());
  for (int pass = 0; pass < 2; ++pass) {
    const auto& tensors = pass == 0 ? response.inputs() : response.outputs();
    for (const auto& t : tensors) {
      std::optional<DataType> dtype = ParseDataTypeName(t.datatype());
      if (!dtype) return absl::InvalidArgumentError(StrCat("tensor ", t.name(), ": unknown datatype"));
      (pass == 0 ? metadata.inputs : metadata.outputs)
          .push_back({t.name(), *dtype, Shape(t.shape().begin(), t.shape().end())});
    }
  }
  grpc::ClientContext config_context;
  SetDeadline(config_context, int64_t{timeout_ms} * kNsPerMs);
  inference::ModelConfigRequest config_request;
  config_request.set_name(model);
  config_request.set_version(version);
  inference::ModelConfigResponse config;
  if (stub->ModelConfig(&config_context, config_request, &config).ok()) {
    metadata.max_batch_size = config.config().max_batch_size();
  }
  return metadata;
}

std::optional<std::string> FetchGrpcModelConfigJson(const GrpcTarget& target, const std::string& model,
                                                    int timeout_ms) {
  auto stub = GRPCInferenceService::NewStub(MakeBenchChannel(target));
  grpc::ClientContext context;
  SetDeadline(context, int64_t{timeout_ms} * kNsPerMs);
  inference::ModelConfigRequest request;
  request.set_name(model);
  inference::ModelConfigResponse response;
  if (!stub->ModelConfig(&context, request, &response).ok()) return std::nullopt;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;  // Triton's JSON: max_batch_size, input_map, ...
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(response.config(), &json, options).ok()) return std::nullopt;
  return json;
}

std::optional<ServerStats> FetchGrpcModelStats(const GrpcTarget& target, const std::string& model,
                                               const std::string& version, int timeout_ms) {
  auto stub = GRPCInferenceService::NewStub(MakeBenchChannel(target));
  grpc::ClientContext context;
  SetDeadline(context, int64_t{timeout_ms} * kNsPerMs);
  inference::ModelStatisticsRequest request;
  request.set_name(model);
  request.set_version(version);
  inference::ModelStatisticsResponse response;
  if (!stub->ModelStatistics(&context, request, &response).ok()) return std::nullopt;
  ServerStats stats;
  bool found = false;
  auto add = [](StageTotal& total, const inference::StatisticDuration& d) {
    total.count += static_cast<int64_t>(d.count());
    total.ns += static_cast<int64_t>(d.ns());
  };
  for (const auto& m : response.model_stats()) {
    if (m.name() != model || (!version.empty() && m.version() != version)) continue;
    found = true;
    stats.inference_count += static_cast<int64_t>(m.inference_count());
    stats.execution_count += static_cast<int64_t>(m.execution_count());
    const auto& s = m.inference_stats();
    add(stats.success, s.success());
    add(stats.fail, s.fail());
    add(stats.queue, s.queue());
    add(stats.compute_input, s.compute_input());
    add(stats.compute_infer, s.compute_infer());
    add(stats.compute_output, s.compute_output());
  }
  if (!found) return std::nullopt;
  return stats;
}

absl::Status GrpcSharedMemoryRegister(const GrpcTarget& target, const std::string& name,
                                      const std::string& key, uint64_t byte_size, int timeout_ms) {
  auto stub = GRPCInferenceService::NewStub(MakeBenchChannel(target));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  inference::SystemSharedMemoryRegisterRequest request;
  request.set_name(name);
  request.set_key(key);
  request.set_byte_size(byte_size);
  inference::SystemSharedMemoryRegisterResponse response;
  grpc::Status status = stub->SystemSharedMemoryRegister(&context, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(StrCat("SystemSharedMemoryRegister: ", status.error_message()));
  }
  return absl::OkStatus();
}

absl::Status GrpcSharedMemoryUnregister(const GrpcTarget& target, const std::string& name, int timeout_ms) {
  auto stub = GRPCInferenceService::NewStub(MakeBenchChannel(target));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  inference::SystemSharedMemoryUnregisterRequest request;
  request.set_name(name);
  inference::SystemSharedMemoryUnregisterResponse response;
  grpc::Status status = stub->SystemSharedMemoryUnregister(&context, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(StrCat("SystemSharedMemoryUnregister: ", status.error_message()));
  }
  return absl::OkStatus();
}

}  // namespace infera::bench
