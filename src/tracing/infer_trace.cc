#include "tracing/infer_trace.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/str_cat.h"

namespace infera {

std::optional<InferTrace> InferTrace::Start(const Sink& sink, std::string_view model,
                                            std::optional<std::string_view> traceparent,
                                            SteadyTime received) {
  if (sink.settings == nullptr || sink.tracer == nullptr) return std::nullopt;
  std::optional<TraceContext> context = sink.settings->Sample(model, traceparent);
  if (!context) return std::nullopt;
  return InferTrace(sink.tracer, *context, model, received);
}

void InferTrace::Ran(const RequestTimings& timings) {
  trace_.AddStage("queue", timings.enqueue, timings.execution_start);
  trace_.AddStage("compute", timings.execution_start, timings.execution_end,
                  {{"infera.batch_rows", timings.batch_rows},
                   {"infera.batch_requests", timings.batch_requests}});
}

void InferTrace::Generated(const GenerationTimings& t, int64_t choice) {
  const SteadyTime unset{};
  if (t.finished == unset) return;  // ModelVersion::Generate sets it on every final output
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

void InferTrace::Finish(std::string_view protocol, std::string_view request_id,
                        std::string_view status_key, std::string status_value,
                        std::optional<std::string> error, SteadyTime end) && {
  tracer_->Submit(trace_.Finish(StrCat("infer ", model_), received_, end,
                                {{"infera.model", model_},
                                 {"infera.request_id", std::string(request_id)},
                                 {"infera.protocol", std::string(protocol)},
                                 {std::string(status_key), std::move(status_value)}},
                                std::move(error)));
}

}  // namespace infera
