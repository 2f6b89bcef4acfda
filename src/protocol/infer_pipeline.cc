#include "protocol/infer_pipeline.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <variant>

#include "common/clock.h"
#include "common/str_cat.h"
#include "manager/model_version.h"
#include "manager/single_response.h"
#include "protocol/model_answers.h"

namespace infera {
namespace {

using SteadyClock = std::chrono::steady_clock;


// Triton's binary tensor data extension names two parameters whose values must be
// booleans on either transport (over gRPC they change nothing, but a request that is
// wrong over HTTP is wrong over gRPC too). The HTTP codec finds them while it parses; this
// is the check for every decoder.
absl::Status CheckBinaryDataParameters(const InferRequest& request) {
  if (auto it = request.parameters.find("binary_data_output");
      it != request.parameters.end() && !std::holds_alternative<bool>(it->second)) {
    return absl::InvalidArgumentError("request parameter 'binary_data_output' must be a bool");
  }
  for (const RequestedOutput& output : request.outputs) {
    if (auto it = output.parameters.find("binary_data");
        it != output.parameters.end() && !std::holds_alternative<bool>(it->second)) {
      return absl::InvalidArgumentError(
          StrCat("parameter 'binary_data' of output '", output.name, "' must be a bool"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool VersionResolver::needs_routing_key() const { return !tried_ && choice_->needs_routing_key(); }

absl::StatusOr<const ModelVersion*> VersionResolver::Resolve(std::string_view routing_key) {
  if (*resolved_) return resolved_->get();
  if (tried_) return absl::InternalError("the request's version was already chosen");
  tried_ = true;
  absl::StatusOr<ModelHandle> handle = std::move(*choice_).Resolve(routing_key);
  if (!handle.ok()) return handle.status();
  *resolved_ = *std::move(handle);
  return resolved_->get();
}

void InferPipeline::Run(const InferTarget& target, InferDecoder decode,
                        std::unique_ptr<InferResponder> responder) const {
  InferResponder& answer = *responder;
  InferResponder::PipelineState& state = answer.pipeline_;
  state.protocol = options_.transport.protocol;
  state.status_attribute = options_.transport.status_attribute;
  state.status_value = options_.transport.status_value;
  state.trace = InferTrace::Start(options_.trace, target.model_name, target.traceparent, target.received);
  if (state.trace) state.traceparent = state.trace->traceparent();

  // 1. What the transport read before the body: the model's name and version.
  if (!target.model_version.ok()) return SendFinal(answer, target.model_version.status(), nullptr);
  if (target.model_name.empty()) {
    return SendFinal(answer, absl::InvalidArgumentError("model_name is empty"), nullptr);
  }
  // 2. One lookup: an unknown model is NotFound whatever the body holds. Any other lookup
  //    error (unknown or unready version) is reported after decoding, so a malformed body
  //    still gets its InvalidArgument (VersionChoice).
  absl::StatusOr<VersionChoice> choice = manager_->ChooseVersion(target.model_name, *target.model_version);
  if (!choice.ok()) return SendFinal(answer, choice.status(), nullptr);

  // 3. The transport's codec.
  ModelHandle model;
  VersionResolver resolver(&*choice, &model, target.routing_header);
  const SteadyTime decode_start = SteadyClock::now();
  absl::StatusOr<InferRequest> request = decode(resolver);
  const SteadyTime decode_end = SteadyClock::now();
  if (!request.ok()) return SendFinal(answer, request.status(), nullptr);
  if (absl::Status checked = CheckBinaryDataParameters(*request); !checked.ok()) {
    return SendFinal(answer, checked, nullptr);
  }
  if (state.trace) state.trace->Parsed(decode_end);
  state.request_id = request->id;

  // 4. Inputs and outputs naming shared-memory regions.
  absl::StatusOr<SharedMemoryOutputs> shared_memory = BindSharedMemory(options_.shared_memory, *request);
  if (!shared_memory.ok()) return SendFinal(answer, shared_memory.status(), nullptr);
  state.shared_memory = *std::move(shared_memory);
  if (state.trace && state.trace->wants_tensors()) {
    for (const Tensor& input : request->inputs) state.trace->Input(input);
  }

  // 5. The version: chosen already by a decoder that needed its config, else now, a canary
  //    split routed by the request's routing_key parameter or the transport's header (a key
  //    is built only for a pending split).
  if (!model) {
    const std::string key = resolver.needs_routing_key()
                                ? RoutingKey(request->parameters, target.routing_header)
                                : std::string();
    absl::StatusOr<const ModelVersion*> chosen = resolver.Resolve(key);
    if (!chosen.ok()) return SendFinal(answer, chosen.status(), nullptr);
  }
  ModelVersion& version = *model;
  version.statistics().RecordDecode(NanosBetween(decode_start, decode_end));
  state.stages = version.statistics().frontend_stages();
  request->model_name.assign(target.model_name.data(), target.model_name.size());
  request->model_version = *target.model_version;
  request->arrival_time = target.received;
  request->token_meter = target.token_meter;
  const bool single_response = version.decoupled() && !answer.streams();
  // A decoupled model on a unary call gets a token of its own (a child of the client's),
  // which SingleResponse cancels when a second response shows the answer will be refused.
  std::shared_ptr<CancellationToken> stop;
  if (single_response) {
    stop = std::make_shared<CancellationToken>(target.cancellation);
    request->cancellation = stop;
  } else {
    request->cancellation = target.cancellation;
  }
  answer.Prepare(*request);

  // 6. The model. The callback holds only the responder (inline in the AnyInvocable); the
  //    handle is let go when Infer returns (the request is in the version's scheduler, whose
  //    drain keeps the version serving it; a decoupled request's sink holds its own).
  InferCallback done = [responder = std::move(responder)](absl::StatusOr<InferResponse> result,
                                                          ResponseDelivery delivery) mutable {
    Deliver(*responder, std::move(result), delivery);
  };
  if (single_response) done = SingleResponse(version.name(), std::move(done), std::move(stop));
  version.Infer(*std::move(request), std::move(done));
}

void InferPipeline::Deliver(InferResponder& answer, absl::StatusOr<InferResponse> result,
                            ResponseDelivery delivery) {
  InferResponder::PipelineState& state = answer.pipeline_;
  if (state.finished) return;  // a response after the request failed: nobody takes it
  absl::Status status = result.status();
  if (result.ok()) {
    InferResponse& response = *result;
    if (state.trace) {
      if (delivery.final) state.trace->Ran(response.timings);
      state.trace->Answered(response.model_version);
      for (const Tensor& output : response.outputs) state.trace->Output(output);
    }
    // 7. Outputs bound to regions are written there (an empty final response has none).
    if (!response.outputs.empty()) status = state.shared_memory.WriteInto(response);
    // 8. The transport's encoder.
    if (status.ok()) {
      const SteadyTime encode_start = SteadyClock::now();
      status = answer.Encode(response, delivery.final);
      const SteadyTime encode_end = SteadyClock::now();
      if (state.stages) state.stages->RecordEncode(NanosBetween(encode_start, encode_end));
      if (state.trace) state.trace->Serialized(encode_start, encode_end);
    }
  }
  if (delivery.final || !status.ok()) return SendFinal(answer, status, delivery.batch);
  InferSend send;
  send.final = false;
  send.batch = delivery.batch;
  send.stages = &state.stages;
  send.traceparent = state.traceparent;
  send.request_id = state.request_id;
  answer.Send(status, send);
}

void InferPipeline::SendFinal(InferResponder& answer, const absl::Status& status, CompletionBatch* batch) {
  InferResponder::PipelineState& state = answer.pipeline_;
  state.finished = true;
  // The request's shared-memory regions are let go before the answer leaves: a client
  // that unregistered them while the request ran sees them gone once it has the answer.
  state.shared_memory = SharedMemoryOutputs();
  // 9. The trace ends with the answer's status, before the answer leaves (its traceparent
  //    goes with it).
  std::string trace_id;
  if (state.trace) {
    trace_id = state.trace->trace_id();
    std::optional<std::string> error;
    if (!status.ok()) error = std::string(status.message());
    std::move(*state.trace)
        .Finish(state.protocol, state.request_id, state.status_attribute,
                state.status_value != nullptr ? state.status_value(status)
                                              : std::to_string(static_cast<int>(status.code())),
                std::move(error), SteadyClock::now());
    state.trace.reset();
  }
  InferSend send;
  send.final = true;
  send.batch = batch;
  send.stages = &state.stages;
  send.traceparent = state.traceparent;
  send.trace_id = trace_id;
  send.request_id = state.request_id;
  answer.Send(status, send);
}

}  // namespace infera
