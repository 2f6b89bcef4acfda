#include "http/request_parser.h"

#include <algorithm>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

#include "common/str_cat.h"

namespace infera::http_internal {
namespace http = boost::beast::http;

namespace {

// Whether the field line that starts at `name` continues on the next line (obs-fold).
// Beast reports a field only once its last line's CRLF and the byte after it are in the
// parser's input, and a field's value holds no control character but HTAB, so the first
// CR after the name ends the field's first line and the byte after its LF exists.
bool IsFolded(boost::beast::string_view name) {
  const char* p = name.data() + name.size();
  while (*p != '\r') ++p;
  return p[2] == ' ' || p[2] == '\t';
}

}  // namespace

RequestParser::RequestParser(HttpRequest* request, HeaderPool* pool) : request_(request), pool_(pool) {
  request_->method.clear();
  request_->target.clear();
  request_->body.clear();
  for (auto& header : request_->headers) pool_->push_back(std::move(header));
  request_->headers.clear();
}

void RequestParser::on_request_impl(http::verb method, string_view method_str, string_view target,
                                    int /*version*/, error_code& /*ec*/) {
  head_ = method == http::verb::head;
  // RFC 9110 section 9.3.2: HEAD is GET without content. Routes answer it as a GET;
  // the session sends that answer's headers (its Content-Length included), no body.
  if (head_) {
    request_->method.assign("GET");
  } else {
    request_->method.assign(method_str.data(), method_str.size());
  }
  request_->target.assign(target.data(), target.size());
}

void RequestParser::on_field_impl(http::field name, string_view name_string, string_view value,
                                  error_code& /*ec*/) {
  if (!header_problem_ && IsFolded(name_string)) {
    header_problem_ = StrCat("header field '", std::string_view(name_string.data(), name_string.size()),
                             "' is folded onto a line that starts with a space or tab (obs-fold, "
                             "RFC 9112 section 5.2): send each field on one line");
  }
  const std::string_view value_view(value.data(), value.size());
  if (name == http::field::content_length) framing_.AddContentLength(value_view);
  if (name == http::field::transfer_encoding) framing_.AddTransferEncoding(value_view);
  if (name == http::field::expect && boost::beast::iequals(value, "100-continue")) expects_continue_ = true;
  if (name == http::field::content_encoding) content_encoding_ = true;
  std::pair<std::string, std::string> header;
  if (!pool_->empty()) {
    header = std::move(pool_->back());
    pool_->pop_back();
  }
  header.first.resize(name_string.size());
  // ASCII lower case (header names are tokens), without the C locale's tolower call.
  std::transform(name_string.begin(), name_string.end(), header.first.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; });
  header.second.assign(value.data(), value.size());
  request_->headers.push_back(std::move(header));
}

void RequestParser::on_header_impl(error_code& /*ec*/) {
  // The framing's views point into the read buffer, which is intact only now.
  if (!header_problem_) header_problem_ = framing_.Problem();
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length, error_code& ec) {
  if (content_length) {
    if (*content_length > request_->body.max_size()) {
      ec = http::error::buffer_overflow;
      return;
    }
    // Bounded by the parser's body limit, checked before this call.
    request_->body.reserve(static_cast<size_t>(*content_length));
  }
}

size_t RequestParser::Append(string_view data, error_code& ec) {
  if (data.size() > request_->body.max_size() - request_->body.size()) {
    ec = http::error::buffer_overflow;
    return 0;
  }
  request_->body.append(data.data(), data.size());
  return data.size();
}

}  // namespace infera::http_internal
