// The only translation unit that includes Boost.Beast / Asio.
#include "http/http_server.h"

#include <algorithm>
#include <array>
#include <deque>
#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/logging.h"
#include "common/str_cat.h"
#include "http/http_framing.h"
#include "http/http_status.h"
#include "http/response_budget.h"

namespace infera {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace http_internal {

// The framing fields of `header` (RFC 9112 section 6), checked by HttpFraming.
std::optional<std::string> FramingProblem(const http::request_header<>& header) {
  HttpFraming framing;
  for (const auto& field : header) {
    const std::string_view value(field.value().data(), field.value().size());
    if (field.name() == http::field::content_length) framing.AddContentLength(value);
    if (field.name() == http::field::transfer_encoding) framing.AddTransferEncoding(value);
  }
  return framing.Problem();
}

// State the server and all its sessions share.
struct ServerState {
  HttpHandler handler;
  HttpServer::Options options;
  std::atomic<int> in_flight{0};
  std::atomic<bool> draining{false};
  // Unread response bytes (--http-max-buffered-response-bytes) and write-side counters.
  std::unique_ptr<ResponseBudget> budget;
};

// One connection. Lives on one I/O thread; every member is touched only there (Send()
// hops onto it), so none needs a lock.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<ServerState> state)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        write_timer_(socket_.get_executor()),
        state_(std::move(state)) {}

  ~Session() {
    // Whatever is still accounted (a write cut short by an error) goes back.
    state_->budget->Release(response_buffered_ + stream_queued_);
  }

  void Start() {
    beast::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    ReadHeader();
  }

  // Any thread. Runs inline when already on this session's thread.
  void Send(HttpResponse response, HttpResponder::WriteCallback on_written = nullptr) {
    net::dispatch(socket_.get_executor(), [self = shared_from_this(), response = std::move(response),
                                           on_written = std::move(on_written)]() mutable {
      self->Write(std::move(response), std::move(on_written));
    });
  }

  // Streaming: any thread; each hops onto the session's thread.
  void StartStream(HttpResponse head) {
    net::dispatch(socket_.get_executor(),
                  [self = shared_from_this(), head = std::move(head)]() mutable {
                    self->WriteStreamHead(std::move(head));
                  });
  }
  // Chunks are accounted on the producer's thread, before they are posted, so the bound
  // covers chunks still waiting in the io_context's queue too.
  void StreamChunk(std::string chunk) {
    if (chunk.empty()) return;  // an empty chunk would end the body
    const auto bytes = static_cast<int64_t>(chunk.size());
    const auto limit = static_cast<int64_t>(state_->options.max_stream_buffered_bytes);
    if (stream_pending_.fetch_add(bytes, std::memory_order_relaxed) + bytes > limit) {
      stream_pending_.fetch_sub(bytes, std::memory_order_relaxed);
      // The client reads slower than the producer writes: stop both.
      net::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->AbandonStream(); });
      return;
    }
    state_->budget->Add(bytes);
    net::dispatch(socket_.get_executor(),
                  [self = shared_from_this(), chunk = std::move(chunk), bytes]() mutable {
                    if (!self->stream_serializer_ || self->stream_done_) {  // stream over
                      self->ReleaseStreamBytes(bytes);
                      return;
                    }
                    self->stream_queued_ += bytes;
                    self->stream_queue_.push_back(std::move(chunk));
                    self->PumpStream();
                  });
  }
  void FinishStream() {
    net::dispatch(socket_.get_executor(), [self = shared_from_this()] {
      self->stream_finish_requested_ = true;
      self->PumpStream();
    });
  }

 private:
  // Cancels the socket's pending read when `timeout` passes; stale timers (from an
  // earlier phase) are recognised by their generation and ignored.
  void ArmTimer(std::chrono::milliseconds timeout) {
    const uint64_t generation = ++timer_generation_;
    timer_.expires_after(timeout);
    timer_.async_wait([self = shared_from_this(), generation](beast::error_code ec) {
      if (ec || generation != self->timer_generation_) return;
      self->timed_out_ = true;
      beast::error_code ignored;
      self->socket_.cancel(ignored);
    });
  }
  void DisarmTimer() {
    ++timer_generation_;
    timer_.cancel();
  }

  // Write timeout: a pending write that makes no progress for `write_timeout` closes the
  // connection (nginx's send_timeout). One timer per session, armed when a write starts
  // and re-armed for the remainder when it fires while writes are progressing, so a long
  // response costs no timer operation per socket write.
  void WriteStarted() {
    write_pending_ = true;
    last_write_progress_ = std::chrono::steady_clock::now();
    if (write_watch_armed_) return;
    write_watch_armed_ = true;
    ArmWriteTimer(state_->options.write_timeout);
  }
  void WriteProgressed() {
    write_pending_ = false;
    last_write_progress_ = std::chrono::steady_clock::now();
  }
  void ArmWriteTimer(std::chrono::steady_clock::duration after) {
    write_timer_.expires_after(after);
    write_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec) {
        self->write_watch_armed_ = false;
        return;
      }
      if (!self->write_pending_) {  // idle (e.g. a stream waiting for its producer)
        self->write_watch_armed_ = false;
        return;
      }
      const auto idle = std::chrono::steady_clock::now() - self->last_write_progress_;
      if (idle < self->state_->options.write_timeout) {
        return self->ArmWriteTimer(self->state_->options.write_timeout - idle);
      }
      self->write_watch_armed_ = false;
      self->write_timed_out_ = true;
      self->state_->budget->CountWriteTimeout();
      INFERA_LOG(VERBOSE) << "HTTP write timed out: the client read nothing for "
                          << self->state_->options.write_timeout.count() << " ms";
      if (self->current_token_) self->current_token_->Cancel();
      beast::error_code ignored;
      self->socket_.shutdown(tcp::socket::shutdown_both, ignored);
      self->socket_.cancel(ignored);
    });
  }

  void ReadHeader() {
    parser_.emplace();
    head_request_ = false;
    parser_->header_limit(static_cast<uint32_t>(state_->options.max_header_bytes));
    parser_->body_limit(state_->options.max_body_bytes);
    timed_out_ = false;
    ArmTimer(state_->options.read_timeout);
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              self->OnHeader(ec);
                            });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    if (std::optional<std::string> problem = FramingProblem(parser_->get())) {
      DisarmTimer();
      return Fail(400, *std::move(problem));
    }
    // From here until its response is written the request is in flight: a drain waits
    // for it even while its body is still arriving.
    state_->in_flight.fetch_add(1, std::memory_order_relaxed);
    counted_ = true;
    auto expect = parser_->get().find(http::field::expect);
    if (expect != parser_->get().end() && beast::iequals(expect->value(), "100-continue")) {
      // curl sends this for large bodies and waits for the go-ahead before sending.
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      net::async_write(socket_, net::buffer(kContinue),
                       [self = shared_from_this()](beast::error_code write_ec, size_t) {
                         if (write_ec) return self->Close();
                         self->ReadBody();
                       });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    ArmTimer(state_->options.read_timeout);  // the body gets its own full timeout
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->Dispatch();
                     });
  }

  void OnReadError(beast::error_code ec) {
    DisarmTimer();
    const bool got_some = parser_->got_some() || buffer_.size() > 0;
    if (timed_out_) {
      if (!got_some) return Close();  // idle keep-alive connection
      return Fail(408, StrCat("request not fully received within ",
                              state_->options.read_timeout.count(), " ms"));
    }
    if (ec == http::error::end_of_stream || ec == net::error::eof ||
        ec == net::error::connection_reset || ec == net::error::operation_aborted) {
      return Close();
    }
    if (ec == http::error::body_limit) {
      return Fail(413, StrCat("request body exceeds the limit of ", state_->options.max_body_bytes,
                              " bytes (--http-max-input-size)"));
    }
    if (ec == http::error::header_limit) {
      return Fail(431, StrCat("request header exceeds the limit of ",
                              state_->options.max_header_bytes, " bytes"));
    }
    if (ec == http::error::partial_message) {
      return Fail(400, "request truncated: the connection ended before the declared body");
    }
    Fail(400, StrCat("malformed HTTP request: ", ec.message()));
  }

  void Dispatch() {
    DisarmTimer();
    http::request<http::string_body> message = parser_->release();
    HttpRequest request;
    request.method = std::string(message.method_string());
    // RFC 9110 section 9.3.2: HEAD is GET without content. Routes answer it as a GET;
    // Write() sends that answer's headers (its Content-Length included) and no body.
    if (message.method() == http::verb::head) {
      request.method = "GET";
      head_request_ = true;
    }
    request.target = std::string(message.target());
    request.headers.reserve(8);
    for (const auto& field : message) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      request.headers.emplace_back(std::move(name), std::string(field.value()));
    }
    request.body = std::move(message.body());
    request.received_time = std::chrono::steady_clock::now();
    keep_alive_ = message.keep_alive();
    auto token = std::make_shared<CancellationToken>();
    const uint64_t request_number = ++requests_dispatched_;
    current_token_ = token;
    state_->handler(std::move(request), HttpResponder(shared_from_this(), token));
    // Watch for a disconnect only if the handler has not finished answering (the
    // request waits in a queue, or it started a streamed response that goes on):
    // requests answered inline skip the two syscalls a watch costs.
    if (responses_started_ < request_number || stream_serializer_) WatchForDisconnect(std::move(token));
  }

  // Waits (without consuming anything) for the socket to become readable while the
  // request is served. Readable with nothing to read means the client closed: cancel.
  // Readable with data means a pipelined request is waiting: it is read after the
  // response, and the watch ends (its token then only matters to this request).
  void WatchForDisconnect(std::shared_ptr<CancellationToken> token) {
    socket_.async_wait(tcp::socket::wait_read,
                       [self = shared_from_this(), token = std::move(token)](beast::error_code ec) {
                         if (ec) return;
                         beast::error_code available_ec;
                         const size_t available = self->socket_.available(available_ec);
                         if (available_ec || available == 0) token->Cancel();
                       });
  }

  void Write(HttpResponse response, HttpResponder::WriteCallback on_written) {
    ++responses_started_;
    // A HEAD answer's body is dropped below, before the write: it holds no budget.
    const auto bytes = head_request_ ? int64_t{0} : static_cast<int64_t>(response.body.size());
    if (!state_->budget->TryReserve(bytes)) {
      // Slow readers already hold the server's budget for unread responses: drop this
      // body now (freeing it) and answer 503 instead; the client may retry.
      state_->budget->CountRejected();
      INFERA_LOG(VERBOSE) << "HTTP 503: response of " << bytes << " bytes over the buffer limit";
      response = ErrorResponse(503, StrCat("the server holds more than ",
                                           state_->options.max_buffered_response_bytes,
                                           " bytes of responses that clients have not read "
                                           "(--http-max-buffered-response-bytes); retry later"));
      keep_alive_ = false;
      on_written = nullptr;
      const auto error_bytes = head_request_ ? int64_t{0} : static_cast<int64_t>(response.body.size());
      state_->budget->Add(error_bytes);
      response_buffered_ = error_bytes;
    } else {
      response_buffered_ = bytes;
    }
    if (state_->options.on_response) state_->options.on_response(response.status);
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(response.status));
    response_.set(http::field::content_type, response.content_type);
    for (auto& [name, value] : response.headers) response_.set(name, value);
    response_.body() = std::move(response.body);
    response_.keep_alive(keep_alive_ && !state_->draining.load(std::memory_order_relaxed));
    response_.prepare_payload();  // Content-Length of the body: a HEAD answer keeps it
    if (head_request_) {
      response_.body().clear();
      response_.body().shrink_to_fit();
    }
    response_serializer_.emplace(response_);
    // Split: the serializer stops after the header, which is all a HEAD answer is.
    if (head_request_) response_serializer_->split(true);
    on_written_ = std::move(on_written);
    write_start_ = std::chrono::steady_clock::now();
    WriteSome();
  }

  // Beast writes header and body buffers in one gather write; each completion is progress
  // for the write timeout.
  void WriteSome() {
    WriteStarted();
    http::async_write_some(socket_, *response_serializer_,
                           [self = shared_from_this()](beast::error_code ec, size_t) {
                             self->WriteProgressed();
                             const bool done = self->head_request_ ? self->response_serializer_->is_header_done()
                                                                   : self->response_serializer_->is_done();
                             if (!ec && !done) return self->WriteSome();
                             self->response_serializer_.reset();
                             self->state_->budget->Release(self->response_buffered_);
                             self->response_buffered_ = 0;
                             self->response_.body().clear();
                             self->response_.body().shrink_to_fit();
                             if (self->on_written_) {
                               const bool completed =
                                   !ec && !(self->current_token_ && self->current_token_->IsCancelled());
                               auto on_written = std::move(self->on_written_);
                               self->on_written_ = nullptr;
                               on_written(std::chrono::steady_clock::now() - self->write_start_, completed);
                             }
                             self->OnWrite(ec);
                           });
  }

  void Uncount() {
    if (counted_) {
      counted_ = false;
      state_->in_flight.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  void OnWrite(beast::error_code ec) {
    Uncount();
    if (ec) return Close();
    if (!response_.keep_alive()) return LingeringClose();
    stream_done_ = false;
    ReadHeader();
  }

  void WriteStreamHead(HttpResponse head) {
    ++responses_started_;
    if (state_->options.on_response) state_->options.on_response(head.status);
    stream_head_ = {};
    stream_head_.version(11);
    stream_head_.result(static_cast<unsigned>(head.status));
    stream_head_.set(http::field::content_type, head.content_type);
    for (auto& [name, value] : head.headers) stream_head_.set(name, value);
    // A HEAD on a stream gets its headers and a closed connection: a stream has no
    // length, and its producer's late chunks must not reach a next request's answer.
    stream_head_.keep_alive(keep_alive_ && !head_request_ && !state_->draining.load(std::memory_order_relaxed));
    stream_head_.chunked(true);
    response_.keep_alive(stream_head_.keep_alive());  // read by OnWrite at the end
    if (!head.body.empty() && !head_request_) {
      const auto bytes = static_cast<int64_t>(head.body.size());
      stream_pending_.fetch_add(bytes, std::memory_order_relaxed);
      stream_queued_ += bytes;
      state_->budget->Add(bytes);
      stream_queue_.push_front(std::move(head.body));
    }
    stream_serializer_.emplace(stream_head_);
    stream_writing_ = true;
    WriteStarted();
    http::async_write_header(socket_, *stream_serializer_,
                             [self = shared_from_this()](beast::error_code ec, size_t) {
                               self->WriteProgressed();
                               self->stream_writing_ = false;
                               if (ec) return self->StreamFailed();
                               if (self->head_request_) {  // headers only: stop the producer
                                 if (self->current_token_) self->current_token_->Cancel();
                                 self->stream_done_ = true;
                                 self->ResetStream();
                                 return self->OnWrite(ec);
                               }
                               self->PumpStream();
                             });
  }

  // Writes the next queued chunk, or the last chunk once Finish() was asked for and
  // the queue is empty. One write at a time.
  void PumpStream() {
    if (stream_writing_ || !stream_serializer_ || stream_done_) return;
    if (!stream_queue_.empty()) {
      stream_current_ = std::move(stream_queue_.front());
      stream_queue_.pop_front();
      stream_current_accounted_ = static_cast<int64_t>(stream_current_.size());
      stream_writing_ = true;
      WriteStarted();
      net::async_write(socket_, http::make_chunk(net::buffer(stream_current_)),
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         self->WriteProgressed();
                         self->stream_writing_ = false;
                         self->stream_queued_ -= self->stream_current_accounted_;
                         self->ReleaseStreamBytes(self->stream_current_accounted_);
                         self->stream_current_accounted_ = 0;
                         if (ec) return self->StreamFailed();
                         self->PumpStream();
                       });
      return;
    }
    if (!stream_finish_requested_) return;
    stream_done_ = true;
    stream_writing_ = true;
    WriteStarted();
    net::async_write(socket_, http::make_chunk_last(),
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->WriteProgressed();
                       self->stream_writing_ = false;
                       self->ResetStream();
                       self->OnWrite(ec);
                     });
  }

  // A chunk could not be written: the client is gone, so the producer (e.g. an LLM
  // generation) is cancelled instead of running to its end for nobody.
  void StreamFailed() {
    if (current_token_) current_token_->Cancel();
    stream_done_ = true;
    ResetStream();
    Close();
  }
  // Ends a stream whose client stopped reading. A chunk write may be in flight (its buffer
  // must stay intact): closing the socket makes it complete with an error, whose handler
  // runs StreamFailed.
  void AbandonStream() {
    if (!stream_serializer_ || stream_done_) return;  // already ended
    state_->budget->CountRejected();
    INFERA_LOG(VERBOSE) << "HTTP stream closed: the client left more than "
                        << state_->options.max_stream_buffered_bytes << " bytes unread";
    if (current_token_) current_token_->Cancel();
    if (!stream_writing_) return StreamFailed();
    stream_done_ = true;
    Close();
  }
  void ReleaseStreamBytes(int64_t bytes) {
    stream_pending_.fetch_sub(bytes, std::memory_order_relaxed);
    state_->budget->Release(bytes);
  }
  void ResetStream() {
    stream_serializer_.reset();
    stream_queue_.clear();
    stream_current_.clear();
    ReleaseStreamBytes(stream_queued_);
    stream_queued_ = 0;
    stream_current_accounted_ = 0;
    stream_finish_requested_ = false;
  }

  // Closing a socket with unread input makes the kernel send RST, which can destroy the
  // response we just wrote before the client reads it (e.g. a 413 while the client is
  // still sending its body). So: stop sending, then read and discard what the client
  // still sends, for a bounded time and amount, then close (nginx's "lingering close").
  void LingeringClose() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    linger_budget_ = kLingerMaxBytes;
    ArmTimer(kLingerTimeout);
    DiscardInput();
  }
  void DiscardInput() {
    socket_.async_read_some(net::buffer(discard_buffer_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec || n >= self->linger_budget_) return self->Close();
                              self->linger_budget_ -= n;
                              self->DiscardInput();
                            });
  }

  // Answers a protocol error and closes the connection.
  void Fail(int status, std::string message) {
    INFERA_LOG(VERBOSE) << "HTTP " << status << ": " << message;
    keep_alive_ = false;
    Write(ErrorResponse(status, message), nullptr);
  }

  void Close() {
    Uncount();
    DisarmTimer();
    write_timer_.cancel();
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    socket_.close(ignored);
  }

  tcp::socket socket_;
  net::steady_timer timer_;
  net::steady_timer write_timer_;
  uint64_t timer_generation_ = 0;
  bool timed_out_ = false;
  std::shared_ptr<ServerState> state_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  std::optional<http::response_serializer<http::string_body>> response_serializer_;
  int64_t response_buffered_ = 0;  // bytes of response_ counted in buffered_bytes
  // The response being written: its write-completion hook and first write's time.
  HttpResponder::WriteCallback on_written_;
  std::chrono::steady_clock::time_point write_start_{};
  bool write_pending_ = false;
  bool write_watch_armed_ = false;
  bool write_timed_out_ = false;
  std::chrono::steady_clock::time_point last_write_progress_;
  bool keep_alive_ = true;
  bool head_request_ = false;  // the request being answered is a HEAD (sent as GET to routes)
  bool counted_ = false;  // this request is counted in state_->in_flight
  std::shared_ptr<CancellationToken> current_token_;  // the latest request's
  uint64_t requests_dispatched_ = 0;  // requests handed to the handler
  uint64_t responses_started_ = 0;    // responses whose writing has begun
  static constexpr std::chrono::milliseconds kLingerTimeout{2000};
  static constexpr size_t kLingerMaxBytes = 256 << 20;
  size_t linger_budget_ = 0;
  std::array<char, 16384> discard_buffer_;
  // Streamed response state (chunked body).
  http::response<http::empty_body> stream_head_;
  std::optional<http::response_serializer<http::empty_body>> stream_serializer_;
  std::deque<std::string> stream_queue_;
  std::string stream_current_;  // the chunk being written
  // Chunk bytes accounted (in ServerState::buffered_bytes too): stream_pending_ from
  // Write() (any thread) until written or dropped; stream_queued_ (this thread) the part
  // already in stream_queue_ or being written, stream_current_accounted_ the latter.
  std::atomic<int64_t> stream_pending_{0};
  int64_t stream_queued_ = 0;
  int64_t stream_current_accounted_ = 0;
  bool stream_writing_ = false;
  bool stream_finish_requested_ = false;
  bool stream_done_ = false;
};

}  // namespace http_internal

HttpResponder::HttpResponder(std::shared_ptr<http_internal::Session> session,
                             std::shared_ptr<const CancellationToken> cancellation)
    : session_(std::move(session)), cancellation_(std::move(cancellation)) {}
HttpResponder::HttpResponder(HttpResponder&&) noexcept = default;
HttpResponder& HttpResponder::operator=(HttpResponder&&) noexcept = default;
HttpResponder::~HttpResponder() {
  if (session_) {
    session_->Send(ErrorResponse(500, "internal error: request dropped without a response"));
  }
}

void HttpResponder::Send(HttpResponse response) && {
  std::shared_ptr<http_internal::Session> session = std::move(session_);
  if (session) session->Send(std::move(response));
}

void HttpResponder::Send(HttpResponse response, WriteCallback on_written) && {
  std::shared_ptr<http_internal::Session> session = std::move(session_);
  if (session) session->Send(std::move(response), std::move(on_written));
}

HttpStream HttpResponder::StartStream(HttpResponse head) && {
  std::shared_ptr<http_internal::Session> session = std::move(session_);
  if (session) session->StartStream(std::move(head));
  return HttpStream(std::move(session), cancellation_);
}

HttpStream::HttpStream(std::shared_ptr<http_internal::Session> session,
                       std::shared_ptr<const CancellationToken> cancellation)
    : session_(std::move(session)), cancellation_(std::move(cancellation)) {}
HttpStream::HttpStream(HttpStream&&) noexcept = default;
HttpStream& HttpStream::operator=(HttpStream&&) noexcept = default;
HttpStream::~HttpStream() {
  if (session_) session_->FinishStream();
}

void HttpStream::Write(std::string chunk) {
  if (session_) session_->StreamChunk(std::move(chunk));
}

void HttpStream::Finish() && {
  std::shared_ptr<http_internal::Session> session = std::move(session_);
  if (session) session->FinishStream();
}

class HttpServer::Impl {
 public:
  Impl(Options options, HttpHandler handler)
      : state_(std::make_shared<http_internal::ServerState>()) {
    state_->options = std::move(options);
    state_->handler = std::move(handler);
    state_->budget = std::make_unique<ResponseBudget>(state_->options.max_buffered_response_bytes);
    const int n = std::max(1, state_->options.num_threads);
    for (int i = 0; i < n; ++i) {
      contexts_.push_back(std::make_unique<net::io_context>(1));
      guards_.emplace_back(net::make_work_guard(*contexts_.back()));
    }
  }

  ~Impl() { Shutdown(std::chrono::milliseconds(0)); }

  absl::Status Listen() {
    beast::error_code ec;
    const net::ip::address address = net::ip::make_address(state_->options.address, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          StrCat("--http-address '", state_->options.address, "' is not an IP address"));
    }
    const tcp::endpoint endpoint(address, state_->options.port);
    acceptor_ = std::make_unique<tcp::acceptor>(*contexts_[0]);
    acceptor_->open(endpoint.protocol(), ec);
    if (!ec) acceptor_->set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_->bind(endpoint, ec);
    if (!ec) acceptor_->listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::UnavailableError(StrCat("cannot listen on ", state_->options.address, ":",
                                           state_->options.port, ": ", ec.message()));
    }
    port_ = acceptor_->local_endpoint().port();
    return absl::OkStatus();
  }

  void Run() {
    Accept();
    for (auto& context : contexts_) {
      threads_.emplace_back([ctx = context.get()] { ctx->run(); });
    }
  }

  void Shutdown(std::chrono::milliseconds grace) {
    if (stopped_.exchange(true)) return;
    state_->draining.store(true);
    if (acceptor_) {
      net::post(*contexts_[0], [this] {
        beast::error_code ignored;
        acceptor_->close(ignored);
      });
    }
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (state_->in_flight.load() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (auto& guard : guards_) guard.reset();
    for (auto& context : contexts_) context->stop();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  uint16_t port() const { return port_; }
  int InFlight() const { return state_->in_flight.load(); }
  Stats GetStats() const {
    return Stats{state_->budget->buffered(), state_->budget->write_timeouts(), state_->budget->rejected()};
  }

 private:
  void Accept() {
    net::io_context& target = *contexts_[next_context_++ % contexts_.size()];
    acceptor_->async_accept(target, [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
      if (ec) {
        // Usually EMFILE: back off briefly instead of spinning on the error.
        INFERA_LOG(WARNING) << "accept failed: " << ec.message();
        auto timer = std::make_shared<net::steady_timer>(*contexts_[0], std::chrono::milliseconds(50));
        timer->async_wait([this, timer](beast::error_code) { Accept(); });
        return;
      }
      std::make_shared<http_internal::Session>(std::move(socket), state_)->Start();
      Accept();
    });
  }

  std::shared_ptr<http_internal::ServerState> state_;
  std::vector<std::unique_ptr<net::io_context>> contexts_;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> guards_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::vector<std::thread> threads_;
  size_t next_context_ = 0;  // touched only on contexts_[0]'s thread
  uint16_t port_ = 0;
  std::atomic<bool> stopped_{false};
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(Options options,
                                                              HttpHandler handler) {
  auto impl = std::make_unique<Impl>(std::move(options), std::move(handler));
  absl::Status listening = impl->Listen();
  if (!listening.ok()) return listening;
  impl->Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const { return impl_->port(); }
int HttpServer::InFlight() const { return impl_->InFlight(); }
HttpServer::Stats HttpServer::GetStats() const { return impl_->GetStats(); }
void HttpServer::Shutdown(std::chrono::milliseconds grace) { impl_->Shutdown(grace); }

}  // namespace infera
