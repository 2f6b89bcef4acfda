// RequestTrace: the spans of one traced request — a SERVER root span with a child per
// stage (parse, queue, compute, serialize) — built as the request goes and handed to
// the Tracer at the end.
//
// Not thread-safe: owned by the request's path (moved into its completion callback).
#ifndef INFERA_TRACING_REQUEST_TRACE_H_
#define INFERA_TRACING_REQUEST_TRACE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "tracing/trace_context.h"

namespace infera {

class RequestTrace {
 public:
  // Joins `context`'s trace; the caller's span (if any) becomes the root's parent.
  explicit RequestTrace(const TraceContext& context);

  const TraceId& trace_id() const { return trace_id_; }
  const SpanId& root_span_id() const { return root_span_id_; }
  // The traceparent naming our root span, for the response.
  std::string traceparent() const { return FormatTraceparent(trace_id_, root_span_id_, true); }

  void AddStage(std::string name, SteadyTime start, SteadyTime end,
                std::vector<std::pair<std::string, int64_t>> attributes = {});

  // Closes the root span and returns every span.
  std::vector<SpanRecord> Finish(std::string name, SteadyTime start, SteadyTime end,
                                 std::vector<std::pair<std::string, std::string>> attributes,
                                 std::optional<std::string> error);

 private:
  TraceId trace_id_;
  SpanId root_span_id_;
  std::optional<SpanId> parent_;
  std::vector<SpanRecord> spans_;
};

// steady_clock time to nanoseconds since the Unix epoch (offset measured once).
uint64_t SteadyToUnixNanos(SteadyTime time);

}  // namespace infera

#endif  // INFERA_TRACING_REQUEST_TRACE_H_
