// HttpRequest / HttpResponse: what the HTTP server hands to routes and takes back.
//
// Plain structs so route code never includes Boost.Beast (which only the connection's
// TUs in src/http do: request_parser, response_writer, stream_writer, session,
// session_read, http_server): routes compile fast and can be unit-tested without sockets.
#ifndef INFERA_HTTP_HTTP_MESSAGE_H_
#define INFERA_HTTP_HTTP_MESSAGE_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace infera {

struct ApiKeyState;  // security/api_key_store.h

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // request-target as sent: path plus optional "?query"
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  // When the last byte of the request was read.
  std::chrono::steady_clock::time_point received_time{};
  // The client's address as "ip:port" ("[v6]:port"), for the audit log; empty when unknown.
  std::string peer;
  // The API key that admitted the request (http/api_key_access.h); null when keys are
  // off. Routes check body-named models against it and charge LLM tokens to it.
  std::shared_ptr<const ApiKeyState> api_key{};

  // The path part of the target (before '?'), still percent-encoded.
  std::string_view path() const {
    std::string_view t = target;
    return t.substr(0, t.find('?'));
  }
  // Value of header `lowercase_name`, if present (first occurrence).
  std::optional<std::string_view> Header(std::string_view lowercase_name) const {
    for (const auto& [name, value] : headers) {
      if (name == lowercase_name) return std::string_view(value);
    }
    return std::nullopt;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

}  // namespace infera

#endif  // INFERA_HTTP_HTTP_MESSAGE_H_
