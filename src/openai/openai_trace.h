// How an OpenAI answer closes its request's trace (tracing/infer_trace.h, protocol
// "openai"): the response names the root span in its `traceparent` header, and the root
// span gets the response's status (http.status_code) and, for a failure, its message.
// Every helper does nothing for an untraced request (an empty optional).
//
// Not thread-safe (as InferTrace): the caller owns the trace and serialises the calls.
#ifndef INFERA_OPENAI_OPENAI_TRACE_H_
#define INFERA_OPENAI_OPENAI_TRACE_H_

#include <optional>
#include <string>
#include <string_view>

#include "http/http_message.h"
#include "tracing/infer_trace.h"

namespace infera::openai {

// Adds `traceparent` (our root span) to `response`'s headers.
void AddTraceparent(const std::optional<InferTrace>& trace, HttpResponse& response);

// Closes the root span now with `http_status` (and `error`, if set) and hands the spans
// to the tracer; `trace` is empty afterwards.
void FinishTrace(std::optional<InferTrace>& trace, std::string_view request_id, int http_status,
                 std::optional<std::string> error);

// Both, for a whole response: the header, then the root closed with the response's
// status (a 4xx/5xx body is an OpenAI error whose message the span carries).
void FinishTrace(std::optional<InferTrace>& trace, std::string_view request_id, HttpResponse& response,
                 std::optional<std::string> error = std::nullopt);

}  // namespace infera::openai

#endif  // INFERA_OPENAI_OPENAI_TRACE_H_
