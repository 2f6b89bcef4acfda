#include "http/response_writer.h"

#include <charconv>
#include <string_view>
#include <utility>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/status.hpp>

#include "common/logging.h"
#include "common/str_cat.h"
#include "http/http_status.h"

namespace infera::http_internal {
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// ASCII case-insensitive equality of header names.
bool NameEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && beast::iequals(beast::string_view(a.data(), a.size()),
                                                beast::string_view(b.data(), b.size()));
}

}  // namespace

void AppendResponseHead(const HttpResponse& response, bool keep_alive, size_t content_length, std::string& out) {
  char number[24];
  const unsigned status = static_cast<unsigned>(response.status);
  const beast::string_view reason = http::obsolete_reason(static_cast<http::status>(status));
  out.append("HTTP/1.1 ");
  auto [status_end, status_ec] = std::to_chars(number, number + sizeof(number), status);
  out.append(number, static_cast<size_t>(status_end - number));
  out.push_back(' ');
  out.append(reason.data(), reason.size());
  out.append("\r\n");
  const auto& extra = response.headers;
  auto replaced_later = [&extra](size_t i, std::string_view name) {
    for (size_t j = i; j < extra.size(); ++j) {
      if (NameEquals(extra[j].first, name)) return true;
    }
    return false;
  };
  auto append_field = [&out](std::string_view name, std::string_view value) {
    out.append(name);
    out.append(": ");
    out.append(value);
    out.append("\r\n");
  };
  if (!replaced_later(0, "Content-Type")) append_field("Content-Type", response.content_type);
  for (size_t i = 0; i < extra.size(); ++i) {
    const std::string_view name = extra[i].first;
    // The server owns the framing fields; no route sets them.
    if (NameEquals(name, "Content-Length") || NameEquals(name, "Connection")) continue;
    if (replaced_later(i + 1, name)) continue;
    append_field(name, extra[i].second);
  }
  if (!keep_alive) out.append("Connection: close\r\n");
  out.append("Content-Length: ");
  auto [length_end, length_ec] = std::to_chars(number, number + sizeof(number), content_length);
  out.append(number, static_cast<size_t>(length_end - number));
  out.append("\r\n\r\n");
}

ResponseWriter::Started ResponseWriter::Start(HttpResponse response, bool keep_alive, bool head_only,
                                              HttpResponder::WriteCallback on_written,
                                              std::chrono::steady_clock::time_point now) {
  // A HEAD answer's body is dropped below, before the write: it holds no budget.
  const auto bytes = head_only ? int64_t{0} : static_cast<int64_t>(response.body.size());
  if (!budget_->TryReserve(bytes)) {
    // Slow readers already hold the server's budget for unread responses: drop this
    // body now (freeing it) and answer 503 instead; the client may retry.
    budget_->CountRejected();
    INFERA_LOG(VERBOSE) << "HTTP 503: response of " << bytes << " bytes over the buffer limit";
    response = ErrorResponse(503, StrCat("the server holds more than ", budget_->max_bytes(),
                                         " bytes of responses that clients have not read "
                                         "(--http-max-buffered-response-bytes); retry later"));
    keep_alive = false;
    on_written = nullptr;
    const auto error_bytes = head_only ? int64_t{0} : static_cast<int64_t>(response.body.size());
    budget_->Add(error_bytes);
    accounted_ = error_bytes;
  } else {
    accounted_ = bytes;
  }
  // Content-Length is the body's length; a HEAD answer keeps it and sends no body.
  head_.clear();
  AppendResponseHead(response, keep_alive, response.body.size(), head_);
  body_ = std::move(response.body);
  if (head_only) ReleaseBody();
  written_ = 0;
  active_ = true;
  on_written_ = std::move(on_written);
  start_ = now;
  return Started{response.status, keep_alive};
}

std::array<boost::asio::const_buffer, 2> ResponseWriter::Pending() const {
  std::array<boost::asio::const_buffer, 2> buffers;
  if (written_ < head_.size()) {
    buffers[0] = boost::asio::buffer(head_.data() + written_, head_.size() - written_);
    buffers[1] = boost::asio::buffer(body_);
  } else {
    const size_t body_written = written_ - head_.size();
    buffers[0] = boost::asio::buffer(body_.data() + body_written, body_.size() - body_written);
  }
  return buffers;
}

void ResponseWriter::Finish(std::chrono::steady_clock::time_point now, bool completed) {
  active_ = false;
  budget_->Release(accounted_);
  accounted_ = 0;
  ReleaseBody();
  if (on_written_) {
    auto on_written = std::move(on_written_);
    on_written_ = nullptr;
    on_written(now - start_, completed);
  }
}

void ResponseWriter::ReleaseBody() {
  if (body_.capacity() > kKeptBodyCapacity) {
    std::string().swap(body_);
  } else {
    body_.clear();
  }
}

}  // namespace infera::http_internal
