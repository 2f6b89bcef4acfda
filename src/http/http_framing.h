// HttpFraming: decides whether a request's body length is unambiguous (RFC 9112 section 6).
//
// A request whose framing two HTTP parsers could read differently lets a client smuggle a
// second request past a proxy: e.g. Beast treats a Transfer-Encoding whose final coding
// is not "chunked" as "no body", so the body would be parsed as the next request. infera
// accepts only: no Transfer-Encoding and at most one Content-Length holding one number,
// or a single Transfer-Encoding that is exactly "chunked" (any case, optional spaces) and
// no Content-Length. Anything else gets 400 and the connection is closed (HttpServer).
//
// Not thread-safe; one per request header, on its connection's thread.
//
// Usage:
//   HttpFraming framing;
//   for (field : header) {
//     if (name is Content-Length) framing.AddContentLength(value);
//     if (name is Transfer-Encoding) framing.AddTransferEncoding(value);
//   }
//   if (std::optional<std::string> problem = framing.Problem()) -> 400 naming *problem
#ifndef INFERA_HTTP_HTTP_FRAMING_H_
#define INFERA_HTTP_HTTP_FRAMING_H_

#include <optional>
#include <string>
#include <string_view>

namespace infera {

class HttpFraming {
 public:
  void AddContentLength(std::string_view value);
  void AddTransferEncoding(std::string_view value);

  // Why the framing is ambiguous, or nullopt when it is not.
  std::optional<std::string> Problem() const;

 private:
  int content_length_fields_ = 0;
  bool content_length_list_ = false;
  int transfer_encoding_fields_ = 0;
  std::string_view transfer_encoding_;  // the last one (only used when there is one)
};

}  // namespace infera

#endif  // INFERA_HTTP_HTTP_FRAMING_H_
