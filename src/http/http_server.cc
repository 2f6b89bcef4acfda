// The only translation unit that includes Boost.Beast / Asio.
#include "http/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/completion_batch.h"
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

using Executor = net::io_context::executor_type;
// Concrete executor types: no any_io_executor type erasure on the per-request path.
using Socket = net::basic_stream_socket<tcp, Executor>;
using Timer = net::basic_waitable_timer<std::chrono::steady_clock,
                                        net::wait_traits<std::chrono::steady_clock>, Executor>;

// Header strings of finished requests, kept with their capacity for the next ones.
using HeaderPool = std::vector<std::pair<std::string, std::string>>;

// Parses one request straight into a session-owned HttpRequest (method, target, headers
// with lower-cased names, body), reusing the capacity its strings kept from earlier
// requests: a keep-alive connection stops allocating once it has seen its largest
// request. Beast's basic_parser does the HTTP/1.1 grammar, limits and chunked decoding
// exactly as its request_parser did; this class only stores what it reports. The
// framing fields (RFC 9112 section 6) are checked by HttpFraming as they arrive.
class RequestParser : public http::basic_parser<true> {
 public:
  // `request` (cleared here, its headers returned to `pool`) and `pool` must outlive
  // the parse.
  RequestParser(HttpRequest* request, HeaderPool* pool) : request_(request), pool_(pool) {
    request_->method.clear();
    request_->target.clear();
    request_->body.clear();
    for (auto& header : request_->headers) pool_->push_back(std::move(header));
    request_->headers.clear();
  }

  // Why the framing is ambiguous (set once the header is complete), or nullopt.
  const std::optional<std::string>& framing_problem() const { return framing_problem_; }
  // The request carries `Expect: 100-continue`.
  bool expects_continue() const { return expects_continue_; }
  // The request is a HEAD.
  bool is_head() const { return head_; }

 private:
  void on_request_impl(http::verb method, beast::string_view method_str, beast::string_view target,
                       int /*version*/, beast::error_code& /*ec*/) override {
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
  void on_response_impl(int, beast::string_view, int, beast::error_code&) override {}
  void on_field_impl(http::field name, beast::string_view name_string, beast::string_view value,
                     beast::error_code& /*ec*/) override {
    const std::string_view value_view(value.data(), value.size());
    if (name == http::field::content_length) framing_.AddContentLength(value_view);
    if (name == http::field::transfer_encoding) framing_.AddTransferEncoding(value_view);
    if (name == http::field::expect && beast::iequals(value, "100-continue")) expects_continue_ = true;
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
  void on_header_impl(beast::error_code& /*ec*/) override {
    // The framing's views point into the read buffer, which is intact only now.
    framing_problem_ = framing_.Problem();
  }
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         beast::error_code& ec) override {
    if (content_length) {
      if (*content_length > request_->body.max_size()) {
        ec = http::error::buffer_overflow;
        return;
      }
      // Bounded by the parser's body limit, checked before this call.
      request_->body.reserve(static_cast<size_t>(*content_length));
    }
  }
  size_t on_body_impl(beast::string_view body, beast::error_code& ec) override {
    return Append(body, ec);
  }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code& ec) override {
    return Append(body, ec);
  }
  void on_finish_impl(beast::error_code& /*ec*/) override {}

  size_t Append(beast::string_view data, beast::error_code& ec) {
    if (data.size() > request_->body.max_size() - request_->body.size()) {
      ec = http::error::buffer_overflow;
      return 0;
    }
    request_->body.append(data.data(), data.size());
    return data.size();
  }

  HttpRequest* const request_;
  HeaderPool* const pool_;
  HttpFraming framing_;
  std::optional<std::string> framing_problem_;
  bool expects_continue_ = false;
  bool head_ = false;
};

// ASCII case-insensitive equality of header names.
bool NameEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && beast::iequals(beast::string_view(a.data(), a.size()),
                                                beast::string_view(b.data(), b.size()));
}

// Responses of at most this many bytes leave their body buffer's capacity with the
// connection for the next response (HttpResponder::TakeBodyBuffer); larger ones free it.
constexpr size_t kKeptBodyCapacity = 64 << 10;

// Appends the status line and header of a response, byte for byte what Beast's
// serializer wrote for the message the server used to build: Content-Type, the route's
// headers (a later header of the same name replaces an earlier one, as
// fields::set did; one named Content-Type replaces the content type), `Connection:
// close` when the connection closes after it, Content-Length of the body.
void AppendResponseHead(const HttpResponse& response, bool keep_alive, size_t content_length,
                        std::string& out) {
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

// State the server and all its sessions share.
struct ServerState {
  HttpHandler handler;
  HttpServer::Options options;
  // One per I/O thread (index: the thread's io_context); fixed after start.
  std::vector<std::unique_ptr<InFlightCounter>> in_flight;
  std::vector<std::unique_ptr<ResponseCounter>> responses;  // likewise
  std::atomic<bool> draining{false};
  // Unread response bytes (--http-max-buffered-response-bytes) and write-side counters.
  std::unique_ptr<ResponseBudget> budget;
};

// One connection. Lives on one I/O thread; every member is touched only there (Send()
// hops onto it), so none needs a lock.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Socket socket, std::shared_ptr<ServerState> state, InFlightCounter* in_flight,
          ResponseCounter* responses)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        write_timer_(socket_.get_executor()),
        state_(std::move(state)),
        in_flight_(in_flight),
        responses_(responses) {}

  ~Session() {
    // Whatever is still accounted (a write cut short by an error) goes back.
    state_->budget->Release(response_buffered_ + stream_queued_);
  }

  void Start() {
    beast::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    ReadHeader();
  }

  // Any thread. Runs inline when already on this session's thread. From another thread
  // with a CompletionBatch (a batch's responses on its worker) the write is deferred
  // to the batch's end and posted with the batch's other responses for the same I/O
  // thread: one handler per I/O thread per batch. Otherwise posted on its own.
  void Send(HttpResponse response, HttpResponder::WriteCallback on_written = nullptr,
            CompletionBatch* batch = nullptr) {
    if (socket_.get_executor().running_in_this_thread()) {
      return Write(std::move(response), std::move(on_written));
    }
    if (batch != nullptr) {
      return Defer(batch, {shared_from_this(), std::move(response), std::move(on_written)});
    }
    net::post(socket_.get_executor(), [self = shared_from_this(), response = std::move(response),
                                       on_written = std::move(on_written)]() mutable {
      self->Write(std::move(response), std::move(on_written));
    });
  }

 private:
  // A response sent with a CompletionBatch, waiting for the batch's end.
  struct DeferredSend {
    std::shared_ptr<Session> session;
    HttpResponse response;
    HttpResponder::WriteCallback on_written;
  };
  // This thread's deferred sends, grouped by I/O thread (a few groups: one per I/O
  // thread), in the order they were sent; flushed when the first batch that deferred one
  // closes (a batch opened inside another's delivery, on the same thread, joins it).
  struct DeferredSends {
    std::vector<std::pair<Executor, std::vector<DeferredSend>>> groups;
    bool flush_registered = false;
  };
  static DeferredSends& ThreadDeferredSends() {
    thread_local DeferredSends sends;
    return sends;
  }
  static void Defer(CompletionBatch* batch, DeferredSend send) {
    DeferredSends& sends = ThreadDeferredSends();
    if (!sends.flush_registered) {
      sends.flush_registered = true;
      batch->AtClose(&Session::FlushDeferred);
    }
    const Executor executor = send.session->socket_.get_executor();
    for (auto& [group_executor, group] : sends.groups) {
      if (group_executor == executor) return group.push_back(std::move(send));
    }
    sends.groups.emplace_back(executor, std::vector<DeferredSend>{}).second.push_back(std::move(send));
  }
  // At the batch's end: one posted handler per I/O thread writes its responses, in order.
  static void FlushDeferred() {
    DeferredSends& sends = ThreadDeferredSends();
    auto groups = std::move(sends.groups);
    sends.groups.clear();
    sends.flush_registered = false;
    for (auto& [executor, group] : groups) {
      net::post(executor, [group = std::move(group)]() mutable {
        for (DeferredSend& send : group) send.session->Write(std::move(send.response), std::move(send.on_written));
      });
    }
  }

 public:
  // The last response's body buffer, emptied, with its capacity (on the session's thread,
  // while no write is in progress; otherwise an empty string).
  std::string TakeBodyBuffer() {
    if (!socket_.get_executor().running_in_this_thread() || response_serializer_active_) return {};
    body_.clear();
    return std::move(body_);
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
  // Cancels the socket's pending read when `timeout` passes. Re-arming is only a new
  // deadline: one timer wait stays pending and, when it fires early, waits again for the
  // rest, so a keep-alive request costs no timer operation (and no allocation) in steady
  // state. A wait that a later, earlier deadline superseded is recognised by its number.
  void ArmTimer(std::chrono::milliseconds timeout) {
    read_deadline_ = std::chrono::steady_clock::now() + timeout;
    read_timer_armed_ = true;
    if (timer_waiting_ && timer_.expiry() <= read_deadline_) return;  // fires first, then re-waits
    StartTimerWait();
  }
  void StartTimerWait() {
    timer_.expires_at(read_deadline_);  // a pending wait completes with operation_aborted
    timer_waiting_ = true;
    const uint64_t wait = ++timer_waits_;
    timer_.async_wait([self = shared_from_this(), wait](beast::error_code ec) { self->OnTimer(ec, wait); });
  }
  void OnTimer(beast::error_code ec, uint64_t wait) {
    if (wait != timer_waits_) return;  // superseded by a later wait
    timer_waiting_ = false;
    if (ec || !read_timer_armed_) return;
    if (std::chrono::steady_clock::now() < read_deadline_) return StartTimerWait();
    read_timer_armed_ = false;
    timed_out_ = true;
    beast::error_code ignored;
    socket_.cancel(ignored);
  }
  // A pending wait finds the timer disarmed and ends; Close() cancels it.
  void DisarmTimer() { read_timer_armed_ = false; }

  // Write timeout: a pending write that makes no progress for `write_timeout` closes the
  // connection (nginx's send_timeout). One timer per session, armed when a write starts
  // and re-armed for the remainder when it fires while writes are progressing, so a long
  // response costs no timer operation per socket write.
  void WriteStarted(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) {
    write_pending_ = true;
    last_write_progress_ = now;
    if (write_watch_armed_) return;
    write_watch_armed_ = true;
    ArmWriteTimer(state_->options.write_timeout);
  }
  void WriteProgressed(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) {
    write_pending_ = false;
    last_write_progress_ = now;
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
    parser_.emplace(&request_, &header_pool_);
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
    if (parser_->framing_problem()) {
      DisarmTimer();
      return Fail(400, *parser_->framing_problem());
    }
    // From here until its response is written the request is in flight: a drain waits
    // for it even while its body is still arriving.
    in_flight_->Add(1);
    counted_ = true;
    if (parser_->expects_continue()) {
      // curl sends this for large bodies and waits for the go-ahead before sending.
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      net::async_write(socket_, net::buffer(kContinue),
                       [self = shared_from_this()](beast::error_code write_ec, size_t) {
                         if (write_ec) return self->Close();
                         self->ReadBody();
                       });
      return;
    }
    // Small requests usually arrive whole with their header: parse the body already in
    // the buffer here instead of starting another read.
    while (!parser_->is_done() && buffer_.size() > 0) {
      beast::error_code parse_ec;
      const size_t used = parser_->put(buffer_.data(), parse_ec);
      buffer_.consume(used);
      if (parse_ec == http::error::need_more) break;
      if (parse_ec) return OnReadError(parse_ec);
      if (used == 0) break;
    }
    if (parser_->is_done()) return Dispatch();
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
    // The parser wrote method (HEAD as GET), target, headers and body into request_.
    head_request_ = parser_->is_head();
    keep_alive_ = parser_->keep_alive();
    request_.received_time = std::chrono::steady_clock::now();
    // The previous request's token is reused when nothing else holds it any more (its
    // request and watch are gone) and it was never cancelled: no allocation.
    if (!current_token_ || current_token_.use_count() != 1 || current_token_->IsCancelled()) {
      current_token_ = std::make_shared<CancellationToken>();
    }
    std::shared_ptr<CancellationToken> token = current_token_;
    const uint64_t request_number = ++requests_dispatched_;
    state_->handler(std::move(request_), HttpResponder(shared_from_this(), token));
    // Watch for a disconnect only if the handler has not finished answering (the
    // request waits in a queue, or it started a streamed response that goes on):
    // requests answered inline skip the two syscalls a watch costs.
    if (StillAnswering(request_number)) WatchForDisconnect(std::move(token), request_number);
  }

  // Whether request `request_number` still has its response (or its stream) to finish.
  bool StillAnswering(uint64_t request_number) const {
    return responses_started_ < request_number || stream_serializer_.has_value();
  }

  // Waits (without consuming anything) for the socket to become readable while the
  // request is served. Readable with data means a pipelined request is waiting: it is read
  // after the response, and the watch ends (its token then only matters to this request).
  // Only an orderly close (a peek reads end-of-stream) or a broken connection cancels.
  // Readable with nothing to read is not a close: epoll can report bytes that a
  // speculative read has already consumed (a request that arrived with its connection),
  // and FIONREAD's 0 cannot tell that from end-of-stream; such a stale wake-up re-arms
  // the watch while the request is still being answered.
  void WatchForDisconnect(std::shared_ptr<CancellationToken> token, uint64_t request_number) {
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this(), token = std::move(token),
                                                request_number](beast::error_code ec) mutable {
      if (ec) return;
      char byte;
      const ssize_t peeked = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (peeked > 0) return;  // a pipelined request: read after this response
      if (peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (self->StillAnswering(request_number)) self->WatchForDisconnect(std::move(token), request_number);
        return;
      }
      token->Cancel();  // end-of-stream or a connection error: the client is gone
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
    responses_->Count(response.status);
    if (state_->options.on_response) state_->options.on_response(response.status);
    response_keep_alive_ = keep_alive_ && !state_->draining.load(std::memory_order_relaxed);
    // Content-Length is the body's length; a HEAD answer keeps it and sends no body.
    head_.clear();
    AppendResponseHead(response, response_keep_alive_, response.body.size(), head_);
    body_ = std::move(response.body);
    if (head_request_) ReleaseBody();
    written_ = 0;
    response_serializer_active_ = true;
    on_written_ = std::move(on_written);
    write_start_ = std::chrono::steady_clock::now();
    WriteStarted(write_start_);
    WriteSome();
  }

  // Header and body go out in one gather write (one sendmsg); the rest, if the socket
  // took less, in further ones. Each completion is progress for the write timeout.
  void WriteSome() {
    std::array<net::const_buffer, 2> buffers;
    if (written_ < head_.size()) {
      buffers[0] = net::buffer(head_.data() + written_, head_.size() - written_);
      buffers[1] = net::buffer(body_);
    } else {
      const size_t body_written = written_ - head_.size();
      buffers[0] = net::buffer(body_.data() + body_written, body_.size() - body_written);
    }
    socket_.async_write_some(buffers, [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->OnWriteSome(ec, n);
    });
  }

  void OnWriteSome(beast::error_code ec, size_t n) {
    const auto now = std::chrono::steady_clock::now();
    WriteProgressed(now);
    written_ += n;
    if (!ec && written_ < head_.size() + body_.size()) {
      WriteStarted(now);
      return WriteSome();
    }
    response_serializer_active_ = false;
    state_->budget->Release(response_buffered_);
    response_buffered_ = 0;
    ReleaseBody();
    if (on_written_) {
      const bool completed = !ec && !(current_token_ && current_token_->IsCancelled());
      auto on_written = std::move(on_written_);
      on_written_ = nullptr;
      on_written(now - write_start_, completed);
    }
    OnWrite(ec);
  }

  // Empties body_; a small buffer keeps its capacity for the next response.
  void ReleaseBody() {
    if (body_.capacity() > kKeptBodyCapacity) {
      std::string().swap(body_);
    } else {
      body_.clear();
    }
  }

  void Uncount() {
    if (counted_) {
      counted_ = false;
      in_flight_->Add(-1);
    }
  }

  void OnWrite(beast::error_code ec) {
    Uncount();
    if (ec) return Close();
    if (!response_keep_alive_) return LingeringClose();
    stream_done_ = false;
    ReadHeader();
  }

  void WriteStreamHead(HttpResponse head) {
    ++responses_started_;
    responses_->Count(head.status);
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
    response_keep_alive_ = stream_head_.keep_alive();  // read by OnWrite at the end
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
    timer_.cancel();
    write_timer_.cancel();
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    socket_.close(ignored);
  }

  Socket socket_;
  Timer timer_;
  Timer write_timer_;
  // Read timeout (ArmTimer): the deadline, whether it applies, whether a wait is pending
  // and the number of the latest wait.
  std::chrono::steady_clock::time_point read_deadline_{};
  bool read_timer_armed_ = false;
  bool timer_waiting_ = false;
  uint64_t timer_waits_ = 0;
  bool timed_out_ = false;
  std::shared_ptr<ServerState> state_;
  InFlightCounter* const in_flight_;  // this I/O thread's
  ResponseCounter* const responses_;  // this I/O thread's
  beast::flat_buffer buffer_;
  // The request being read or served, and header strings kept for the next ones: both
  // keep their capacity across requests (RequestParser).
  HttpRequest request_;
  HeaderPool header_pool_;
  std::optional<RequestParser> parser_;
  // The response being written: its serialised status line and header, and its body.
  std::string head_;
  std::string body_;
  size_t written_ = 0;  // bytes of head_ + body_ the socket has taken
  bool response_serializer_active_ = false;  // a response write is in progress
  bool response_keep_alive_ = true;  // the connection stays open after this response
  int64_t response_buffered_ = 0;  // bytes of body_ counted in buffered_bytes
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

void HttpResponder::Send(HttpResponse response, WriteCallback on_written, CompletionBatch* batch) && {
  std::shared_ptr<http_internal::Session> session = std::move(session_);
  if (session) session->Send(std::move(response), std::move(on_written), batch);
}

std::string HttpResponder::TakeBodyBuffer() { return session_ ? session_->TakeBodyBuffer() : std::string(); }

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
      state_->in_flight.push_back(std::make_unique<http_internal::InFlightCounter>());
      state_->responses.push_back(std::make_unique<http_internal::ResponseCounter>());
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
    while (InFlight() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (auto& guard : guards_) guard.reset();
    for (auto& context : contexts_) context->stop();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  uint16_t port() const { return port_; }
  int InFlight() const {
    int64_t total = 0;
    for (const auto& counter : state_->in_flight) total += counter->value.load(std::memory_order_relaxed);
    return static_cast<int>(total);
  }
  std::vector<std::pair<int, uint64_t>> ResponseCounts() const {
    std::vector<std::pair<int, uint64_t>> counts;
    for (size_t status = 0; status < 600; ++status) {
      uint64_t total = 0;
      for (const auto& counter : state_->responses) total += counter->by_status[status].load(std::memory_order_relaxed);
      if (total > 0) counts.emplace_back(static_cast<int>(status), total);
    }
    return counts;
  }
  Stats GetStats() const {
    return Stats{state_->budget->buffered(), state_->budget->write_timeouts(), state_->budget->rejected()};
  }

 private:
  void Accept() {
    const size_t index = next_context_++ % contexts_.size();
    net::io_context& target = *contexts_[index];
    acceptor_->async_accept(target, [this, index](beast::error_code ec, http_internal::Socket socket) {
      if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
      if (ec) {
        // Usually EMFILE: back off briefly instead of spinning on the error.
        INFERA_LOG(WARNING) << "accept failed: " << ec.message();
        auto timer = std::make_shared<net::steady_timer>(*contexts_[0], std::chrono::milliseconds(50));
        timer->async_wait([this, timer](beast::error_code) { Accept(); });
        return;
      }
      std::make_shared<http_internal::Session>(std::move(socket), state_, state_->in_flight[index].get(),
                                               state_->responses[index].get())
          ->Start();
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
std::vector<std::pair<int, uint64_t>> HttpServer::ResponseCounts() const { return impl_->ResponseCounts(); }
void HttpServer::Shutdown(std::chrono::milliseconds grace) { impl_->Shutdown(grace); }

}  // namespace infera
