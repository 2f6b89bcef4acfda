// HttpServer: HTTP/1.1 over Boost.Beast/Asio, a fixed pool of I/O threads, no thread per
// connection.
//
// Threading: `num_threads` I/O threads, each running its own io_context; a connection
// lives on one of them for its whole life (so its state needs no lock). The handler
// runs on that I/O thread and must not block: model execution happens on scheduler
// threads, and the response comes back through HttpResponder::Send() from any thread,
// which posts the write to the connection's thread.
//
// HEAD (RFC 9110 section 9.3.2), for every route: the handler gets the request as a GET;
// the server writes that answer's status and headers, Content-Length being the length of
// the body a GET would get, and no body, and the connection stays open (keep-alive). A
// HEAD on a streamed answer gets the stream's headers, its producer is cancelled and the
// connection closed.
//
// Per connection: keep-alive, requests served in order (pipelined requests wait their
// turn), TCP_NODELAY, each response written with one gather write (headers + body), an
// `Expect: 100-continue` answered, and limits that turn abuse into a 4xx and a closed
// connection: header size (431), body size (413), a request not fully received within
// `read_timeout` (408; an idle keep-alive connection is just closed), malformed HTTP (400),
// ambiguous framing (400 and close, RFC 9112 section 6: a Transfer-Encoding other than a
// single "chunked", Content-Length with Transfer-Encoding, more than one Content-Length),
// obsolete line folding in a header or trailer field (400 and close, RFC 9112 section 5.2).
// A body with Content-Encoding gzip or deflate is inflated before the handler gets it,
// bounded by `max_body_bytes` too (content_coding.h: 413, 400, 415 for other codings,
// answered on the open connection); handlers always see an identity body.
//
// Slow readers: the next pipelined request is read only after the previous response is
// written, so a connection buffers at most one response (or, streaming, at most
// `max_stream_buffered_bytes` of chunks); all connections together at most
// `max_buffered_response_bytes` (beyond it a finished response is replaced by a 503), and
// a write that makes no progress for `write_timeout` closes the connection.
// While a request is being served the connection is watched: if the client closes it,
// the request's CancellationToken is cancelled so queued work can be dropped. Responses
// can also be streamed (chunked), for Server-Sent Events.
//
// Each connection is a Session (session.h: its states and transitions); the parser,
// response writer and stream writer are request_parser.h, response_writer.h and
// stream_writer.h.
//
// TLS (Options::tls): a connection's stream is the socket or TLS over it
// (session_stream.h); everything above works the same over both. docs/tls.md.
//
// Thread-safe.
//
// Usage:
//   ASSIGN_OR_RETURN(auto server, HttpServer::Start(options, [](HttpRequest req, HttpResponder r) {
//     std::move(r).Send(HttpResponse{200, "text/plain", "ok"});
//   }));
//   LOG << server->port();
//   server->Shutdown(std::chrono::seconds(30));
#ifndef INFERA_HTTP_HTTP_SERVER_H_
#define INFERA_HTTP_HTTP_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/cancellation.h"
#include "http/http_message.h"
#include "security/tls_config.h"

namespace infera {

class CompletionBatch;

namespace http_internal {
class Session;
}

class HttpStream;

// Sends the response to one request. Move-only; Send() or StartStream() at most once,
// from any thread. Dropping a responder without answering sends 500 (a bug, never a
// hang).
class HttpResponder {
 public:
  HttpResponder(std::shared_ptr<http_internal::Session> session,
                std::shared_ptr<const CancellationToken> cancellation);
  HttpResponder(HttpResponder&&) noexcept;
  HttpResponder& operator=(HttpResponder&&) noexcept;
  ~HttpResponder();

  void Send(HttpResponse response) &&;
  // The same, and once the response is written `on_written` runs on the connection's I/O
  // thread with the time from its first socket write to the last byte taken, and
  // whether the client was still there (false: the write failed or the client had
  // closed the connection). Must be cheap. Not called when the response is replaced by
  // a 503 over the buffer bound.
  using WriteCallback = std::function<void(std::chrono::nanoseconds write_time, bool completed)>;
  void Send(HttpResponse response, WriteCallback on_written) &&;
  // The same, sent from the delivery of a batch's results (ResponseDelivery::batch): the
  // post to the connection's I/O thread is deferred to the batch's end and made once per
  // I/O thread for all of the batch's responses (common/completion_batch.h). `batch` may
  // be null (then as above); `on_written` may be empty.
  void Send(HttpResponse response, WriteCallback on_written, CompletionBatch* batch) &&;

  // Starts a streamed response: `head`'s status, content type and headers now, the
  // body as a sequence of chunks (chunked transfer encoding; Server-Sent Events use
  // this). `head.body`, if any, is the first chunk.
  HttpStream StartStream(HttpResponse head) &&;

  // An empty string, with the capacity of this connection's previous response body when
  // that was small: build the response body in it to save an allocation per request.
  // Call on the handler's thread, before Send (elsewhere it returns a plain empty string).
  std::string TakeBodyBuffer();

  // Cancelled when the client closes its connection before the response is written.
  const std::shared_ptr<const CancellationToken>& cancellation() const { return cancellation_; }

 private:
  std::shared_ptr<http_internal::Session> session_;
  std::shared_ptr<const CancellationToken> cancellation_;
};

// The body of a streamed response. Move-only; Write() from any thread (chunks go out in
// call order, each as soon as the socket takes it); Finish() ends the body. Destroying
// an unfinished stream finishes it.
class HttpStream {
 public:
  HttpStream(std::shared_ptr<http_internal::Session> session,
             std::shared_ptr<const CancellationToken> cancellation);
  HttpStream(HttpStream&&) noexcept;
  HttpStream& operator=(HttpStream&&) noexcept;
  ~HttpStream();

  void Write(std::string chunk);
  void Finish() &&;
  // True once the client has gone away: stop producing.
  bool client_gone() const { return cancellation_ && cancellation_->IsCancelled(); }
  const std::shared_ptr<const CancellationToken>& cancellation() const { return cancellation_; }

 private:
  std::shared_ptr<http_internal::Session> session_;
  std::shared_ptr<const CancellationToken> cancellation_;
};

// The request is the connection's own storage, reused for its next request (its strings
// keep their capacity): read it in place, or move it (or parts) out to keep it. It must not
// be used after the response is sent.
using HttpHandler = std::function<void(HttpRequest&& request, HttpResponder responder)>;

class HttpServer {
 public:
  struct Options {
    std::string address = "0.0.0.0";
    uint16_t port = 8000;  // 0: pick a free port (see port())
    int num_threads = 2;
    size_t max_body_bytes = 64 << 20;  // Triton's --http-max-input-size default
    size_t max_header_bytes = 16 << 10;
    std::chrono::milliseconds read_timeout{30000};
    // A response write that makes no progress (the client reads nothing) for this long
    // closes the connection (--http-write-timeout-secs).
    std::chrono::milliseconds write_timeout{30000};
    // Server-wide bound on bytes of responses produced but not yet taken by the sockets
    // (--http-max-buffered-response-bytes). A finished response that would exceed it
    // while others are buffered is dropped and answered 503 (connection closed); one
    // response alone, and any response of at most 64 KiB (health checks, errors), is
    // always admitted.
    size_t max_buffered_response_bytes = size_t{512} << 20;
    // Per-connection bound on unwritten chunks of a streamed response: a client that
    // falls this far behind has its stream cancelled and its connection closed.
    size_t max_stream_buffered_bytes = size_t{16} << 20;
    // Called with the status of every response; must be cheap and thread-safe. May be
    // empty. (Metrics read ResponseCounts() instead: no shared counter per response.)
    std::function<void(int status)> on_response = nullptr;
    // TLS (and mutual TLS) when `tls.enabled()`; plaintext otherwise (docs/tls.md). Each
    // connection starts with the handshake, bounded by `read_timeout`; the certificate
    // files are re-read when they change (at most once a second, on accept).
    TlsConfig tls{};
  };

  // Binds, listens and starts the I/O threads. Errors name the address, or the TLS file
  // that cannot be used.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(Options options, HttpHandler handler);
  ~HttpServer();

  uint16_t port() const;

  // Requests handed to the handler whose response has not been written yet.
  int InFlight() const;

  // Counters for metrics (infera_http_* in docs/metrics.md).
  struct Stats {
    int64_t buffered_response_bytes = 0;    // now: produced, not yet taken by a socket
    uint64_t write_timeouts = 0;            // connections closed by the write timeout
    uint64_t rejected_over_buffer_limit = 0;  // 503s and streams cut by the buffer bounds
    uint64_t tls_handshake_failures = 0;    // TLS connections closed in their handshake
  };
  Stats GetStats() const;

  // Responses written so far, per status code (codes 0-599 with a nonzero count, in
  // order). Counted per I/O thread without a shared atomic; summed here (for metrics at
  // scrape time: infera_http_requests_total).
  std::vector<std::pair<int, uint64_t>> ResponseCounts() const;

  // Drains: stops accepting, closes at once every connection that is idle or still
  // sending a request (not in flight), reads no further request, lets the requests in
  // flight finish (up to `grace`; their connections then close), then stops the I/O
  // threads. Idempotent.
  void Shutdown(std::chrono::milliseconds grace);

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace infera

#endif  // INFERA_HTTP_HTTP_SERVER_H_
