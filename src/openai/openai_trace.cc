#include "openai/openai_trace.h"

#include <chrono>
#include <utility>

namespace infera::openai {

void AddTraceparent(const std::optional<InferTrace>& trace, HttpResponse& response) {
  if (trace) response.headers.emplace_back("traceparent", trace->traceparent());
}

void FinishTrace(std::optional<InferTrace>& trace, std::string_view request_id, int http_status,
                 std::optional<std::string> error) {
  if (!trace) return;
  std::move(*trace).Finish("openai", request_id, "http.status_code", std::to_string(http_status), std::move(error),
                           std::chrono::steady_clock::now());
  trace.reset();
}

void FinishTrace(std::optional<InferTrace>& trace, std::string_view request_id, HttpResponse& response,
                 std::optional<std::string> error) {
  if (!trace) return;
  AddTraceparent(trace, response);
  if (response.status >= 400 && !error) error = "HTTP " + std::to_string(response.status);
  FinishTrace(trace, request_id, response.status, std::move(error));
}

}  // namespace infera::openai
