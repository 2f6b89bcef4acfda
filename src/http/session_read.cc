// Session, reading side: the phases kReadingHeader, kContinuing and kReadingBody, the
// hand-over to the handler (kServing) and the disconnect watch while it is served. The
// state machine is drawn in session.h; the writing side is session.cc.
#include <sys/socket.h>

#include <cerrno>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

#include "common/logging.h"
#include "common/str_cat.h"
#include "http/content_coding.h"
#include "http/session.h"

namespace infera::http_internal {
namespace net = boost::asio;
namespace http = boost::beast::http;
using error_code = boost::system::error_code;

// A session that would read while the server drains closes instead: a request not
// handed to the handler yet is not in flight, and none is started during a drain.
bool Session::StopReadingIfDraining() {
  if (!state_->draining.load(std::memory_order_relaxed)) return false;
  Close();
  return true;
}

void Session::OnHandshake(error_code ec) {
  read_deadline_.Clear();
  if (ec) {
    // Quietly: a flood of bad handshakes must not flood the log.
    if (!state_->draining.load(std::memory_order_relaxed)) {
      state_->tls_handshake_failures.fetch_add(1, std::memory_order_relaxed);
    }
    INFERA_LOG(VERBOSE) << "TLS handshake failed: " << (read_deadline_.expired() ? "timed out" : ec.message());
    return Close();
  }
  ReadHeader();
}

void Session::ReadHeader() {
  if (StopReadingIfDraining()) return;
  EnterPhase(Phase::kReadingHeader);
  parser_.emplace(&request_, &header_pool_);
  head_request_ = false;
  parser_->header_limit(static_cast<uint32_t>(state_->options.max_header_bytes));
  parser_->body_limit(state_->options.max_body_bytes);
  read_deadline_.Set(std::chrono::steady_clock::now() + state_->options.read_timeout);
  http::async_read_header(connection_, buffer_, *parser_,
                          [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
}

void Session::OnHeader(error_code ec) {
  if (ec) return OnReadError(ec);
  if (StopReadingIfDraining()) return;  // the drain came while this completion was queued
  if (parser_->header_problem()) {
    read_deadline_.Clear();
    return Fail(400, *parser_->header_problem());
  }
  if (parser_->expects_continue()) {
    // curl sends this for large bodies and waits for the go-ahead before sending.
    EnterPhase(Phase::kContinuing);
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    net::async_write(connection_, net::buffer(kContinue), [self = shared_from_this()](error_code write_ec, size_t) {
      if (write_ec) return self->Close();
      self->ReadBody();
    });
    return;
  }
  // Small requests usually arrive whole with their header: parse the body already in
  // the buffer here instead of starting another read.
  while (!parser_->is_done() && buffer_.size() > 0) {
    error_code parse_ec;
    const size_t used = parser_->put(buffer_.data(), parse_ec);
    buffer_.consume(used);
    if (parse_ec == http::error::need_more) break;
    if (parse_ec) return OnReadError(parse_ec);
    if (used == 0) break;
  }
  if (parser_->is_done()) return Dispatch();
  ReadBody();
}

void Session::ReadBody() {
  if (StopReadingIfDraining()) return;
  EnterPhase(Phase::kReadingBody);
  // The body gets its own full timeout.
  read_deadline_.Set(std::chrono::steady_clock::now() + state_->options.read_timeout);
  http::async_read(connection_, buffer_, *parser_, [self = shared_from_this()](error_code ec, size_t) {
    if (ec) return self->OnReadError(ec);
    if (self->StopReadingIfDraining()) return;
    self->Dispatch();
  });
}

void Session::OnReadError(error_code ec) {
  read_deadline_.Clear();
  const bool got_some = parser_->got_some() || buffer_.size() > 0;
  if (read_deadline_.expired()) {
    if (!got_some) return Close();  // idle keep-alive connection
    return Fail(408, StrCat("request not fully received within ", state_->options.read_timeout.count(), " ms"));
  }
  if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
      ec == net::error::operation_aborted) {
    return Close();
  }
  // A broken TLS stream (a bad record, a truncation): no answer can reach the client.
  if (ec.category() == net::error::get_ssl_category() || ec.category() == net::ssl::error::get_stream_category()) {
    INFERA_LOG(VERBOSE) << "TLS read failed: " << ec.message();
    return Close();
  }
  if (ec == http::error::body_limit) {
    // Triton's words (its qa tests match "exceeds the maximum allowed input size").
    return Fail(413, StrCat("request body exceeds the maximum allowed input size of ", state_->options.max_body_bytes,
                            " bytes. Use --http-max-input-size to increase the limit."));
  }
  if (ec == http::error::header_limit) {
    return Fail(431, StrCat("request header exceeds the limit of ", state_->options.max_header_bytes, " bytes"));
  }
  if (ec == http::error::partial_message) {
    return Fail(400, "request truncated: the connection ended before the declared body");
  }
  Fail(400, StrCat("malformed HTTP request: ", ec.message()));
}

// The read deadline passed: the pending read ends with operation_aborted, and
// OnReadError sees read_deadline_.expired().
void Session::OnReadDeadline() {
  error_code ignored;
  connection_.tcp().cancel(ignored);
}

void Session::Dispatch() {
  read_deadline_.Clear();
  // Obsolete line folding in a trailer field (the header's was refused in OnHeader).
  if (parser_->header_problem()) return Fail(400, *parser_->header_problem());
  // The parser wrote method (HEAD as GET), target, headers and body into request_.
  head_request_ = parser_->is_head();
  client_keep_alive_ = parser_->keep_alive();
  request_.received_time = std::chrono::steady_clock::now();
  // The connection's peer, once: request_ is reused, so this copies only after a handler
  // moved the request out (no per-request allocation on the hot path).
  if (request_.peer != peer_) request_.peer = peer_;
  // The previous request's token is reused when nothing else holds it any more (its
  // request and watch are gone) and it was never cancelled: no allocation.
  if (!current_token_ || current_token_.use_count() != 1 || current_token_->IsCancelled()) {
    current_token_ = std::make_shared<CancellationToken>();
  }
  std::shared_ptr<CancellationToken> token = current_token_;
  const uint64_t request_number = ++requests_dispatched_;
  // From here until its answer is written the request is in flight: a drain waits for it.
  EnterPhase(Phase::kServing);
  // A gzip / deflate body is inflated here, for every route, bounded by the same limit
  // as a plain body; a body that cannot be is answered here and the connection stays
  // open (the whole request was read). Requests without Content-Encoding skip this.
  if (parser_->has_content_encoding()) {
    if (std::optional<HttpResponse> refused = DecodeRequestBody(&request_, state_->options.max_body_bytes)) {
      INFERA_LOG(VERBOSE) << "HTTP " << refused->status << ": " << refused->body;
      return HttpResponder(shared_from_this(), std::move(token)).Send(std::move(*refused));
    }
  }
  state_->handler(std::move(request_), HttpResponder(shared_from_this(), token));
  // Watch for a disconnect only if the handler has not finished answering (the
  // request waits in a queue, or it started a streamed response that goes on):
  // requests answered inline skip the two syscalls a watch costs.
  if (StillAnswering(request_number)) WatchForDisconnect(std::move(token), request_number);
}

// Whether request `request_number` still has its response (or its stream) to finish.
bool Session::StillAnswering(uint64_t request_number) const {
  return requests_dispatched_ == request_number && (phase_ == Phase::kServing || phase_ == Phase::kStreaming);
}

// Waits (without consuming anything) for the socket to become readable while the
// request is served. Readable with data means a pipelined request is waiting: it is read
// after the response, and the watch ends (its token then only matters to this request).
// Only an orderly close (a peek reads end-of-stream) or a broken connection cancels.
// Readable with nothing to read is not a close: epoll can report bytes that a
// speculative read has already consumed (a request that arrived with its connection),
// and FIONREAD's 0 cannot tell that from end-of-stream; such a stale wake-up re-arms
// the watch while the request is still being answered.
void Session::WatchForDisconnect(std::shared_ptr<CancellationToken> token, uint64_t request_number) {
  connection_.tcp().async_wait(Socket::wait_read, [self = shared_from_this(), token = std::move(token),
                                         request_number](error_code ec) mutable {
    if (ec) return;
    char byte;
    const ssize_t peeked = ::recv(self->connection_.tcp().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (peeked > 0) return;  // a pipelined request: read after this response
    if (peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (self->StillAnswering(request_number)) self->WatchForDisconnect(std::move(token), request_number);
      return;
    }
    token->Cancel();  // end-of-stream or a connection error: the client is gone
  });
}

}  // namespace infera::http_internal
