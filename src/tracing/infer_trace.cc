#include "tracing/infer_trace.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/str_cat.h"

namespace infera {

std::optional<InferTrace> InferTrace::Start(const Sink& sink, std::string_view model,
                                            std::optional<std::string_view> traceparent,
                                            SteadyTime received) {
  if (sink.settings == nullptr) return std::nullopt;
  const bool triton = sink.settings->mode() == TraceSettings::Mode::kTriton;
  if (triton ? sink.file == nullptr : sink.tracer == nullptr) return std::nullopt;
  std::optional<TraceSettings::Sampled> sampled = sink.settings->SampleTrace(model, traceparent);
  if (!sampled) return std::nullopt;
  InferTrace trace(sink.tracer, sampled->context, model, received);
  if (triton) {
    trace.file_ = sink.file;
    trace.timestamps_ = sampled->timestamps;
    trace.tensors_ = sampled->tensors;
    TritonTraceRecord& record = trace.triton_.emplace();
    record.id = sink.file->NextId();
    record.model_name = std::string(model);
    record.log_frequency = sampled->log_frequency;
  }
  return trace;
}

void InferTrace::Serialized(SteadyTime start, SteadyTime end) {
  trace_.AddStage("serialize", start, end);
  if (serialize_start_ == SteadyTime{}) serialize_start_ = start;
  serialize_end_ = end;
}

void InferTrace::Ran(const RequestTimings& timings) {
  if (!ran_) ran_ = timings;
  trace_.AddStage("queue", timings.enqueue, timings.execution_start);
  trace_.AddStage("compute", timings.execution_start, timings.execution_end,
                  {{"infera.batch_rows", timings.batch_rows},
                   {"infera.batch_requests", timings.batch_requests}});
}

void InferTrace::Generated(const GenerationTimings& t, int64_t choice) {
  const SteadyTime unset{};
  if (t.finished == unset) return;  // ModelVersion::Generate sets it on every final output
  if (!ran_ && t.scheduled != unset) {  // Triton's points: the first scheduled generation's
    RequestTimings timings;
    timings.enqueue = t.queued != unset ? t.queued : t.arrival;
    timings.execution_start = t.scheduled;
    timings.execution_end = t.finished;
    ran_ = timings;
  }
  const std::vector<std::pair<std::string, int64_t>> attributes = {{"infera.choice", choice}};
  if (t.queued != unset) trace_.AddStage("tokenize", std::max(parsed_, t.arrival), t.queued, attributes);
  const SteadyTime queue_start = t.queued != unset ? t.queued : t.arrival;
  trace_.AddStage("queue", queue_start, t.scheduled != unset ? t.scheduled : t.finished, attributes);
  if (t.scheduled != unset) {
    trace_.AddStage("prefill", t.scheduled, t.first_token != unset ? t.first_token : t.finished, attributes);
  }
  if (t.first_token != unset) trace_.AddStage("decode", t.first_token, t.finished, attributes);
  if (t.detokenize > std::chrono::nanoseconds::zero()) {
    trace_.AddStage("detokenize", t.finished - t.detokenize, t.finished, attributes);
  }
}

void InferTrace::AddTritonTimestamps(std::string_view protocol, SteadyTime end) {
  const bool grpc = protocol == "grpc";
  auto& out = triton_->timestamps;
  auto add = [&out](const char* name, SteadyTime at) {
    out.emplace_back(name, std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count());
  };
  add(grpc ? "GRPC_WAITREAD_START" : "HTTP_RECV_START", received_);
  add(grpc ? "GRPC_WAITREAD_END" : "HTTP_RECV_END", received_);
  add("REQUEST_START", parsed_);
  const SteadyTime unset{};
  if (ran_ && ran_->enqueue != unset && ran_->execution_start != unset && ran_->execution_end != unset) {
    add("QUEUE_START", std::max(parsed_, ran_->enqueue));
    add("COMPUTE_START", ran_->execution_start);
    add("COMPUTE_INPUT_END", ran_->execution_start);
    add("COMPUTE_OUTPUT_START", ran_->execution_end);
    add("COMPUTE_END", ran_->execution_end);
  }
  const SteadyTime request_end = serialize_start_ != unset ? serialize_start_ : end;
  add("REQUEST_END", request_end);
  add(grpc ? "GRPC_SEND_START" : "HTTP_SEND_START", serialize_end_ != unset ? serialize_end_ : end);
  add(grpc ? "GRPC_SEND_END" : "HTTP_SEND_END", end);
}

void InferTrace::Finish(std::string_view protocol, std::string_view request_id,
                        std::string_view status_key, std::string status_value,
                        std::optional<std::string> error, SteadyTime end) && {
  if (triton_) {
    if (timestamps_) AddTritonTimestamps(protocol, end);
    file_->Submit(*std::move(triton_));
    return;
  }
  tracer_->Submit(trace_.Finish(StrCat("infer ", model_), received_, end,
                                {{"infera.model", model_},
                                 {"infera.request_id", std::string(request_id)},
                                 {"infera.protocol", std::string(protocol)},
                                 {std::string(status_key), std::move(status_value)}},
                                std::move(error)));
}

}  // namespace infera
