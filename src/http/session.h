// Session: one HTTP/1.1 connection of HttpServer, as an explicit state machine.
//
// A session reads a request (RequestParser), hands it to the server's handler, writes the
// answer (ResponseWriter, or StreamWriter for a streamed one) and, on a keep-alive
// connection, reads the next. Its phase says where it is; every transition is made by
// EnterPhase, on the connection's I/O thread:
//
//   ┌─> kReadingHeader ─> (kContinuing) ─> (kReadingBody) ─> kServing ─> kWritingResponse ─┐
//   │         │                                  │              └──────> kStreaming ───────┤
//   │         └───────── refused ─> kWritingError <┘                                       │
//   │                                     │                                                │
//   └──────────── keep-alive, not draining ─────────── answered ───────────────────────────┤
//                                         v                                                │
//                                    kLingering <──── Connection: close, or draining ──────┘
//                                         │
//                                         v
//                                      kClosed   (also: peer gone, I/O error, timeout, drain)
//
//   phase             event                                                  next
//   kReadingHeader    (TLS: the handshake comes first, under the read timeout;
//                       failed, timed out or drained)                        kClosed
//                     header with Expect: 100-continue                       kContinuing
//                     header read, body still to come                        kReadingBody
//                     whole request read                                     kServing
//                     refused: ambiguous framing, obs-fold, malformed (400),
//                       not complete in time (408), body or header too large
//                       (413, 431)                                           kWritingError
//                     nothing came before the timeout; peer gone; drain      kClosed
//   kContinuing       "100 Continue" written                                 kReadingBody
//                     write error; drain                                     kClosed
//   kReadingBody      whole request read                                     kServing
//                     refused: 400, 408, 413                                 kWritingError
//                     peer gone; drain                                       kClosed
//   kServing          (a Content-Encoding body is inflated first; refused:
//                       its 400/413/415 is Sent, the connection stays open)
//   kServing          Send                                                   kWritingResponse
//                     StartStream                                            kStreaming
//   kWritingResponse, written, keep-alive and not draining                   kReadingHeader
//   kStreaming        written, the connection closes after it (a HEAD
//                       stream too)                                          kLingering
//                     write error, write timeout, stream cut off             kClosed
//   kWritingError     written                                                kLingering
//   kLingering        the client's input ends, or 2 s / 256 MiB (TLS: after the
//                       close_notify exchange, within the same 2 s)          kClosed
//
// In flight (counted in its I/O thread's in-flight counter, waited for by a drain):
// kServing, kWritingResponse and kStreaming — a request handed to the handler until its
// answer is written. A request still being read is not: when the server drains, sessions
// reading a header or a body are closed at once (Drain), and no session starts reading
// another request.
//
// Thread-safety: a session lives on one I/O thread; every member is touched only there,
// except what Send / StartStream / StreamChunk / FinishStream hop onto it from any thread
// (and the StreamWriter's atomic chunk accounting).
#ifndef INFERA_HTTP_SESSION_H_
#define INFERA_HTTP_SESSION_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "api/cancellation.h"
#include "http/deadline_timer.h"
#include "http/http_message.h"
#include "http/http_server.h"
#include "http/request_parser.h"
#include "http/response_budget.h"
#include "http/response_writer.h"
#include "http/session_stream.h"
#include "http/stream_writer.h"
#include "security/tls_server_context.h"

namespace infera {
class CompletionBatch;
}

namespace infera::http_internal {

class Session;

// Requests in flight counted per I/O thread: only that thread writes its counter (a load
// and a store, no locked read-modify-write), readers sum all of them.
struct alignas(64) InFlightCounter {
  std::atomic<int64_t> value{0};
  void Add(int64_t delta) { value.store(value.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed); }
};

// Responses written per status code (0-599), counted per I/O thread like InFlightCounter.
struct alignas(64) ResponseCounter {
  std::array<std::atomic<uint64_t>, 600> by_status{};
  void Count(int status) {
    if (status < 0 || status >= static_cast<int>(by_status.size())) return;
    auto& counter = by_status[static_cast<size_t>(status)];
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

// The open sessions of one I/O thread (an intrusive list), so that a drain can reach
// them. Touched only on that thread.
class SessionList {
 public:
  void Add(Session* session);
  void Remove(Session* session);
  // Calls `f` on every session; `f` may not remove any.
  void ForEach(const std::function<void(Session&)>& f) const;

 private:
  Session* head_ = nullptr;
};

// What one I/O thread's sessions share.
struct IoThread {
  InFlightCounter in_flight;
  ResponseCounter responses;
  SessionList sessions;
};

// State the server and all its sessions share.
struct ServerState {
  HttpHandler handler;
  HttpServer::Options options;
  // One per I/O thread (index: the thread's io_context); fixed after start.
  std::vector<std::unique_ptr<IoThread>> threads;
  // Set once, when the server starts draining (HttpServer::Shutdown).
  std::atomic<bool> draining{false};
  // Unread response bytes (--http-max-buffered-response-bytes) and write-side counters.
  std::unique_ptr<ResponseBudget> budget;
  // TLS (options.tls enabled): the context for new connections; null for plaintext.
  std::unique_ptr<TlsServerContext> tls;
  // Handshakes that failed (bad or no client certificate, not TLS, timed out); not those
  // cut short by a drain.
  std::atomic<uint64_t> tls_handshake_failures{0};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  enum class Phase : uint8_t {
    kReadingHeader,    // waiting for a request's header (an idle keep-alive connection too)
    kContinuing,       // writing "100 Continue"; the body is read next
    kReadingBody,      // the header is accepted, the body is arriving
    kServing,          // handed to the handler, its answer not started yet  (in flight)
    kWritingResponse,  // a whole response is being written               (in flight)
    kStreaming,        // a streamed response is being written            (in flight)
    kWritingError,     // a refused request's 4xx, then close              (not in flight)
    kLingering,        // answered and closing: reading and discarding what still comes
    kClosed,
  };

  // `tls_context` null: plaintext; otherwise the connection starts with a TLS handshake.
  Session(Socket socket, std::shared_ptr<boost::asio::ssl::context> tls_context,
          std::shared_ptr<ServerState> state, IoThread* thread);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // On the session's thread: registers it and reads the first request (or closes at once
  // when the server is draining). Over TLS the handshake comes first, in kReadingHeader,
  // under the read timeout; a failed one closes the connection without an answer.
  void Start();
  // On the session's thread, when the server drains: a session reading a request is
  // closed now; one serving a request finishes it, then closes.
  void Drain();

  // Any thread. Runs inline when already on this session's thread. From another thread
  // with a CompletionBatch (a batch's responses on its worker: ResponseDelivery::batch)
  // the write is deferred to the batch's end and posted with the batch's other responses
  // for the same I/O thread: one handler per I/O thread per batch. Otherwise posted on
  // its own.
  void Send(HttpResponse response, HttpResponder::WriteCallback on_written = nullptr,
            CompletionBatch* batch = nullptr);
  // The last response's body buffer, emptied, with its capacity (on the session's thread,
  // while no write is in progress; otherwise an empty string).
  std::string TakeBodyBuffer();
  // Streaming: any thread; each hops onto the session's thread.
  void StartStream(HttpResponse head);
  void StreamChunk(std::string chunk);
  void FinishStream();

 private:
  friend class SessionList;
  static bool InFlight(Phase phase) {
    return phase == Phase::kServing || phase == Phase::kWritingResponse || phase == Phase::kStreaming;
  }
  void EnterPhase(Phase next);

  // Reading (session_read.cc).
  void OnHandshake(boost::system::error_code ec);
  void ReadHeader();
  void OnHeader(boost::system::error_code ec);
  void ReadBody();
  void OnReadError(boost::system::error_code ec);
  bool StopReadingIfDraining();
  void Dispatch();
  bool StillAnswering(uint64_t request_number) const;
  void WatchForDisconnect(std::shared_ptr<CancellationToken> token, uint64_t request_number);
  void OnReadDeadline();

  // Writing (session.cc).
  void Write(HttpResponse response, HttpResponder::WriteCallback on_written, Phase phase);
  void WriteSome();
  void OnWriteSome(boost::system::error_code ec, size_t n);
  void OnAnswered(boost::system::error_code ec);
  void WriteStreamHead(HttpResponse head);
  void OnStreamHeadWritten(boost::system::error_code ec);
  void PumpStream();
  void StreamFailed();
  void AbandonStream();
  void WriteStarted(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  void WriteProgressed() { write_deadline_.Clear(); }
  void OnWriteDeadline();
  void Fail(int status, std::string message);
  void LingeringClose();
  void StopSendingAndDiscard();
  void DiscardInput();
  void Close();

  struct DeferredSend;
  struct DeferredSends;
  static DeferredSends& ThreadDeferredSends();
  static void Defer(CompletionBatch* batch, DeferredSend send);
  static void FlushDeferred();

  SessionStream connection_;  // the TCP socket, or TLS over it
  std::shared_ptr<ServerState> state_;
  IoThread* const thread_;  // this I/O thread's counters and session list
  Phase phase_ = Phase::kReadingHeader;
  // The read timeout (header, body; the lingering close's bound) and the write-progress
  // timeout (nginx's send_timeout).
  DeadlineTimer<Session, &Session::OnReadDeadline> read_deadline_;
  DeadlineTimer<Session, &Session::OnWriteDeadline> write_deadline_;
  boost::beast::flat_buffer buffer_;
  // The request being read or served, and header strings kept for the next ones: both
  // keep their capacity across requests (RequestParser).
  HttpRequest request_;
  std::string peer_;  // the client's "ip:port", given to every request (the audit log)
  HeaderPool header_pool_;
  std::optional<RequestParser> parser_;
  // The request being answered: the client's keep-alive wish, whether it is a HEAD (sent
  // to routes as a GET), whether the connection stays open after its answer, its token.
  bool client_keep_alive_ = true;
  bool head_request_ = false;
  bool keep_open_after_answer_ = true;
  std::shared_ptr<CancellationToken> current_token_;
  uint64_t requests_dispatched_ = 0;  // requests handed to the handler
  ResponseWriter writer_;
  StreamWriter stream_;
  static constexpr std::chrono::milliseconds kLingerTimeout{2000};
  static constexpr size_t kLingerMaxBytes = 256 << 20;
  size_t linger_budget_ = 0;
  std::array<char, 16384> discard_buffer_;
  // SessionList links (this I/O thread's list).
  Session* list_prev_ = nullptr;
  Session* list_next_ = nullptr;
  bool listed_ = false;
};

}  // namespace infera::http_internal

#endif  // INFERA_HTTP_SESSION_H_
