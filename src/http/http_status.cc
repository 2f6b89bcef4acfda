#include "http/http_status.h"

#include "common/utf8.h"
#include "common/retry_after.h"

#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {

int HttpStatusCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition: return 400;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    case absl::StatusCode::kCancelled: return 499;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kUnauthenticated: return 401;
    default: return 500;
  }
}

std::string ErrorJson(std::string_view message) {
  // Messages echo client bytes (URL paths, names); JSON text must be UTF-8.
  const std::string text = ReplaceInvalidUtf8(message);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("error");
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

HttpResponse ErrorResponse(int http_status, std::string_view message) {
  HttpResponse response{http_status, "application/json", ErrorJson(message), {}};
  if (http_status == 429 || http_status == 503) response.headers.emplace_back("Retry-After", "1");
  return response;
}

HttpResponse ErrorResponse(const absl::Status& status) {
  HttpResponse response = ErrorResponse(
      HttpStatusCode(status.code()), std::string_view(status.message().data(), status.message().size()));
  if (std::optional<int> seconds = RetryAfterSeconds(status)) {
    for (auto& [name, value] : response.headers) {
      if (name == "Retry-After") value = std::to_string(*seconds);
    }
  }
  return response;
}

}  // namespace infera
