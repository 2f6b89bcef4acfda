#include "tracing/request_trace.h"

#include <algorithm>
#include <chrono>

namespace infera {

uint64_t SteadyToUnixNanos(SteadyTime time) {
  static const int64_t offset_ns = [] {
    const auto system = std::chrono::system_clock::now().time_since_epoch();
    const auto steady = std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(system - steady).count();
  }();
  return static_cast<uint64_t>(
      std::max<int64_t>(0, time.time_since_epoch().count() + offset_ns));
}

RequestTrace::RequestTrace(const TraceContext& context)
    : trace_id_(context.trace_id), root_span_id_(NewSpanId()) {
  if (std::any_of(context.span_id.begin(), context.span_id.end(), [](uint8_t b) { return b != 0; })) {
    parent_ = context.span_id;
  }
}

void RequestTrace::AddStage(std::string name, SteadyTime start, SteadyTime end,
                            std::vector<std::pair<std::string, int64_t>> attributes) {
  SpanRecord span;
  span.trace_id = trace_id_;
  span.span_id = NewSpanId();
  span.parent_span_id = root_span_id_;
  span.name = std::move(name);
  span.start_unix_ns = SteadyToUnixNanos(start);
  span.end_unix_ns = SteadyToUnixNanos(std::max(start, end));
  span.int_attributes = std::move(attributes);
  spans_.push_back(std::move(span));
}

std::vector<SpanRecord> RequestTrace::Finish(std::string name, SteadyTime start, SteadyTime end,
                                             std::vector<std::pair<std::string, std::string>> attributes,
                                             std::optional<std::string> error) {
  SpanRecord root;
  root.trace_id = trace_id_;
  root.span_id = root_span_id_;
  root.parent_span_id = parent_;
  root.name = std::move(name);
  root.server_kind = true;
  root.start_unix_ns = SteadyToUnixNanos(start);
  root.end_unix_ns = SteadyToUnixNanos(std::max(start, end));
  root.string_attributes = std::move(attributes);
  root.error = std::move(error);
  spans_.insert(spans_.begin(), std::move(root));
  return std::move(spans_);
}

}  // namespace infera
