// OpenAI-shaped errors, the one rendering of every /v1 route:
// {"error": {"message", "type", "param", "code"}} with type BadRequestError (4xx),
// NotFoundError (404), RateLimitError (429), ServiceUnavailableError (503, retryable:
// e.g. the model is still loading) or InternalServerError (other 5xx). 429 and 503 carry
// Retry-After: 1. Messages may echo client bytes: invalid UTF-8 is replaced, so the body
// stays JSON. A Status becomes its HTTP code here (http/http_status.h), at the edge.
//
// Thread-safe (pure functions).
#ifndef INFERA_OPENAI_OPENAI_ERRORS_H_
#define INFERA_OPENAI_OPENAI_ERRORS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "http/http_message.h"

namespace infera::openai {

std::string OpenAiErrorJson(int http_status, std::string_view message);

HttpResponse OpenAiErrorResponse(int http_status, std::string_view message);
HttpResponse OpenAiErrorResponse(const absl::Status& status);

}  // namespace infera::openai

#endif  // INFERA_OPENAI_OPENAI_ERRORS_H_
