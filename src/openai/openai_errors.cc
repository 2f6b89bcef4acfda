#include "openai/openai_errors.h"

#include "common/json_writer.h"
#include "http/http_status.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "text/unicode.h"

namespace infera::openai {

std::string OpenAiErrorJson(int http_status, std::string_view message) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  w.StartObject();
  w.Key("error");
  w.StartObject();
  w.Key("message");
  WriteString(w, text::SanitizeUtf8(message));
  w.Key("type");
  w.String(http_status == 404   ? "NotFoundError"
           : http_status == 429 ? "RateLimitError"
           : http_status == 503 ? "ServiceUnavailableError"
           : http_status >= 500 ? "InternalServerError"
                                : "BadRequestError");
  w.Key("param");
  w.Null();
  w.Key("code");
  w.Int(http_status);
  w.EndObject();
  w.EndObject();
  return std::string(b.GetString(), b.GetSize());
}

HttpResponse OpenAiErrorResponse(int http_status, std::string_view message) {
  HttpResponse r{http_status, "application/json", OpenAiErrorJson(http_status, message), {}};
  if (http_status == 429 || http_status == 503) r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpResponse OpenAiErrorResponse(const absl::Status& status) {
  return OpenAiErrorResponse(HttpStatusCode(status.code()),
                             std::string_view(status.message().data(), status.message().size()));
}

}  // namespace infera::openai
