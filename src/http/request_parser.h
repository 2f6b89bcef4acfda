// RequestParser: parses one HTTP/1.1 request straight into a connection-owned HttpRequest.
//
// Beast's basic_parser does the grammar, the header and body limits and chunked decoding
// (exactly as its request_parser did); this subclass only stores what it reports: method
// (HEAD stored as GET, RFC 9110 section 9.3.2), target, headers with lower-cased names,
// body. The strings reuse the capacity they kept from earlier requests (header strings
// through a HeaderPool), so a keep-alive connection stops allocating once it has seen its
// largest request.
//
// It also finds what makes a header unacceptable although Beast parses it, each answered
// 400 with the connection closed (the session checks header_problem()):
//   - ambiguous body framing (RFC 9112 section 6), checked by HttpFraming as the
//     Content-Length / Transfer-Encoding fields arrive;
//   - obsolete line folding (obs-fold, RFC 9112 section 5.2): a field line continued on
//     a line that starts with a space or tab. Beast joins the lines; a server must
//     reject them (or replace the fold with a space), and infera rejects them — in
//     trailer fields too.
//
// Not thread-safe: one per request, on its connection's I/O thread.
//
// Usage:
//   RequestParser parser(&request, &pool);  // clears `request` for the next request
//   parser.header_limit(...); parser.body_limit(...);
//   http::async_read_header(socket, buffer, parser, ...);
//   if (parser.header_problem()) -> 400 naming *parser.header_problem(), close
#ifndef INFERA_HTTP_REQUEST_PARSER_H_
#define INFERA_HTTP_REQUEST_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/beast/http/basic_parser.hpp>

#include "http/http_framing.h"
#include "http/http_message.h"

namespace infera::http_internal {

// Header strings of finished requests, kept with their capacity for the next ones.
using HeaderPool = std::vector<std::pair<std::string, std::string>>;

class RequestParser : public boost::beast::http::basic_parser<true> {
 public:
  // `request` (cleared here, its headers returned to `pool`) and `pool` must outlive
  // the parse.
  RequestParser(HttpRequest* request, HeaderPool* pool);

  // Why the header must be refused (ambiguous framing, set once the header is complete;
  // obs-fold, set as soon as a folded field or trailer field is seen), or nullopt.
  const std::optional<std::string>& header_problem() const { return header_problem_; }
  // The request carries `Expect: 100-continue`.
  bool expects_continue() const { return expects_continue_; }
  // The request is a HEAD (stored as a GET).
  bool is_head() const { return head_; }
  // The request has a Content-Encoding field (its body is decoded before it is served:
  // content_coding.h); false for almost every request, at no cost to them.
  bool has_content_encoding() const { return content_encoding_; }

 private:
  using string_view = boost::beast::string_view;
  using error_code = boost::beast::error_code;

  void on_request_impl(boost::beast::http::verb method, string_view method_str, string_view target,
                       int version, error_code& ec) override;
  void on_response_impl(int, string_view, int, error_code&) override {}
  void on_field_impl(boost::beast::http::field name, string_view name_string, string_view value,
                     error_code& ec) override;
  void on_header_impl(error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length, error_code& ec) override;
  size_t on_body_impl(string_view body, error_code& ec) override { return Append(body, ec); }
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) override { return Append(body, ec); }
  void on_finish_impl(error_code& /*ec*/) override {}

  size_t Append(string_view data, error_code& ec);

  HttpRequest* const request_;
  HeaderPool* const pool_;
  HttpFraming framing_;
  std::optional<std::string> header_problem_;
  bool expects_continue_ = false;
  bool head_ = false;
  bool content_encoding_ = false;
};

}  // namespace infera::http_internal

#endif  // INFERA_HTTP_REQUEST_PARSER_H_
