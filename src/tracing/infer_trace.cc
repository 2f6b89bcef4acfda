#include "tracing/infer_trace.h"

#include <utility>

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
