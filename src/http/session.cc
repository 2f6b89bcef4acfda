// Session, lifecycle and writing side: Start / Drain / Close, the answer's phases
// (kWritingResponse, kStreaming, kWritingError), the write-progress timeout and the
// lingering close. The state machine is drawn in session.h; reading is session_read.cc.
#include "http/session.h"

#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "common/completion_batch.h"
#include "common/logging.h"
#include "common/str_cat.h"
#include "http/http_status.h"

namespace infera::http_internal {
namespace net = boost::asio;
using error_code = boost::system::error_code;
using tcp = net::ip::tcp;

void SessionList::Add(Session* session) {
  session->list_prev_ = nullptr;
  session->list_next_ = head_;
  if (head_ != nullptr) head_->list_prev_ = session;
  head_ = session;
  session->listed_ = true;
}

void SessionList::Remove(Session* session) {
  if (!session->listed_) return;
  if (session->list_prev_ != nullptr) session->list_prev_->list_next_ = session->list_next_;
  if (session->list_next_ != nullptr) session->list_next_->list_prev_ = session->list_prev_;
  if (head_ == session) head_ = session->list_next_;
  session->list_prev_ = session->list_next_ = nullptr;
  session->listed_ = false;
}

void SessionList::ForEach(const std::function<void(Session&)>& f) const {
  for (Session* s = head_; s != nullptr; s = s->list_next_) f(*s);
}

Session::Session(Socket socket, std::shared_ptr<boost::asio::ssl::context> tls_context,
                 std::shared_ptr<ServerState> state, IoThread* thread)
    : connection_(std::move(socket), std::move(tls_context)),
      state_(std::move(state)),
      thread_(thread),
      read_deadline_(this, connection_.get_executor()),
      write_deadline_(this, connection_.get_executor()),
      writer_(state_->budget.get()),
      stream_(state_->budget.get(), state_->options.max_stream_buffered_bytes) {}

// A session is closed (and unlisted) on its thread before its last reference goes, except
// when the server's io_contexts are destroyed with it still open: then no I/O thread runs.
Session::~Session() { thread_->sessions.Remove(this); }

void Session::Start() {
  thread_->sessions.Add(this);
  error_code ignored;
  connection_.tcp().set_option(tcp::no_delay(true), ignored);
  const tcp::endpoint remote = connection_.tcp().remote_endpoint(ignored);
  if (!ignored) {
    peer_ = remote.address().is_v6() ? StrCat("[", remote.address().to_string(), "]:", remote.port())
                                     : StrCat(remote.address().to_string(), ":", remote.port());
  }
  if (!connection_.tls()) return ReadHeader();
  if (StopReadingIfDraining()) return;
  // The handshake is the first read: a client that sends nothing, or half a ClientHello,
  // is closed at the read timeout (OnReadDeadline cancels it).
  read_deadline_.Set(std::chrono::steady_clock::now() + state_->options.read_timeout);
  connection_.async_handshake([self = shared_from_this()](error_code ec) { self->OnHandshake(ec); });
}

void Session::Drain() {
  // A pending read ends with operation_aborted (OnReadError closes); a completion already
  // queued finds the server draining (StopReadingIfDraining).
  if (phase_ == Phase::kReadingHeader || phase_ == Phase::kContinuing || phase_ == Phase::kReadingBody) {
    error_code ignored;
    connection_.tcp().cancel(ignored);
  }
}

void Session::EnterPhase(Phase next) {
  const bool was_in_flight = InFlight(phase_);
  const bool in_flight = InFlight(next);
  if (was_in_flight != in_flight) thread_->in_flight.Add(in_flight ? 1 : -1);
  phase_ = next;
}

// A response sent with a CompletionBatch, waiting for the batch's end.
struct Session::DeferredSend {
  std::shared_ptr<Session> session;
  HttpResponse response;
  HttpResponder::WriteCallback on_written;
};
// This thread's deferred sends, grouped by I/O thread (a few groups: one per I/O
// thread), in the order they were sent; flushed when the first batch that deferred one
// closes (a batch opened inside another's delivery, on the same thread, joins it).
struct Session::DeferredSends {
  std::vector<std::pair<Executor, std::vector<DeferredSend>>> groups;
  bool flush_registered = false;
};

Session::DeferredSends& Session::ThreadDeferredSends() {
  thread_local DeferredSends sends;
  return sends;
}

void Session::Send(HttpResponse response, HttpResponder::WriteCallback on_written, CompletionBatch* batch) {
  if (connection_.get_executor().running_in_this_thread()) {
    return Write(std::move(response), std::move(on_written), Phase::kWritingResponse);
  }
  if (batch != nullptr) {
    return Defer(batch, {shared_from_this(), std::move(response), std::move(on_written)});
  }
  net::post(connection_.get_executor(), [self = shared_from_this(), response = std::move(response),
                                     on_written = std::move(on_written)]() mutable {
    self->Write(std::move(response), std::move(on_written), Phase::kWritingResponse);
  });
}

void Session::Defer(CompletionBatch* batch, DeferredSend send) {
  DeferredSends& sends = ThreadDeferredSends();
  if (!sends.flush_registered) {
    sends.flush_registered = true;
    batch->AtClose(&Session::FlushDeferred);
  }
  const Executor executor = send.session->connection_.get_executor();
  for (auto& [group_executor, group] : sends.groups) {
    if (group_executor == executor) return group.push_back(std::move(send));
  }
  sends.groups.emplace_back(executor, std::vector<DeferredSend>{}).second.push_back(std::move(send));
}

// At the batch's end: one posted handler per I/O thread writes its responses, in order.
void Session::FlushDeferred() {
  DeferredSends& sends = ThreadDeferredSends();
  auto groups = std::move(sends.groups);
  sends.groups.clear();
  sends.flush_registered = false;
  for (auto& [executor, group] : groups) {
    net::post(executor, [group = std::move(group)]() mutable {
      for (DeferredSend& send : group) {
        send.session->Write(std::move(send.response), std::move(send.on_written), Phase::kWritingResponse);
      }
    });
  }
}

std::string Session::TakeBodyBuffer() {
  if (!connection_.get_executor().running_in_this_thread() || writer_.active()) return {};
  return writer_.TakeBodyBuffer();
}

void Session::StartStream(HttpResponse head) {
  net::dispatch(connection_.get_executor(), [self = shared_from_this(), head = std::move(head)]() mutable {
    self->WriteStreamHead(std::move(head));
  });
}

// Chunks are accounted on the producer's thread, before they are posted, so the bound
// covers chunks still waiting in the io_context's queue too.
void Session::StreamChunk(std::string chunk) {
  if (chunk.empty()) return;  // an empty chunk would end the body
  const auto bytes = static_cast<int64_t>(chunk.size());
  if (!stream_.Admit(bytes)) {
    // The client reads slower than the producer writes: stop both.
    net::dispatch(connection_.get_executor(), [self = shared_from_this()] { self->AbandonStream(); });
    return;
  }
  net::dispatch(connection_.get_executor(), [self = shared_from_this(), chunk = std::move(chunk), bytes]() mutable {
    self->stream_.Enqueue(std::move(chunk), bytes);
    self->PumpStream();
  });
}

void Session::FinishStream() {
  net::dispatch(connection_.get_executor(), [self = shared_from_this()] {
    self->stream_.RequestFinish();
    self->PumpStream();
  });
}

// Answers the request being served (phase kWritingResponse) or refuses one being read
// (kWritingError: not in flight, the connection closes after it).
void Session::Write(HttpResponse response, HttpResponder::WriteCallback on_written, Phase phase) {
  const bool keep_alive = phase == Phase::kWritingResponse && client_keep_alive_ &&
                          !state_->draining.load(std::memory_order_relaxed);
  const auto now = std::chrono::steady_clock::now();
  const ResponseWriter::Started started =
      writer_.Start(std::move(response), keep_alive, head_request_, std::move(on_written), now);
  thread_->responses.Count(started.status);
  if (state_->options.on_response) state_->options.on_response(started.status);
  keep_open_after_answer_ = started.keep_alive;
  EnterPhase(phase);
  WriteStarted(now);
  WriteSome();
}

// Header and body go out in one gather write (one sendmsg); the rest, if the socket
// took less, in further ones. Each completion is progress for the write timeout.
void Session::WriteSome() {
  connection_.async_write_some(writer_.Pending(),
                           [self = shared_from_this()](error_code ec, size_t n) { self->OnWriteSome(ec, n); });
}

void Session::OnWriteSome(error_code ec, size_t n) {
  const auto now = std::chrono::steady_clock::now();
  WriteProgressed();
  const bool all_taken = writer_.Advance(n);
  if (!ec && !all_taken) {
    WriteStarted(now);
    return WriteSome();
  }
  writer_.Finish(now, !ec && !(current_token_ && current_token_->IsCancelled()));
  OnAnswered(ec);
}

// The answer (or the refusal) is written: the next request, or the connection's end.
void Session::OnAnswered(error_code ec) {
  if (ec) return Close();
  if (!keep_open_after_answer_) return LingeringClose();
  ReadHeader();
}

void Session::WriteStreamHead(HttpResponse head) {
  thread_->responses.Count(head.status);
  if (state_->options.on_response) state_->options.on_response(head.status);
  // A HEAD on a stream gets its headers and a closed connection: a stream has no
  // length, and its producer's late chunks must not reach a next request's answer.
  const bool keep_alive = client_keep_alive_ && !head_request_ && !state_->draining.load(std::memory_order_relaxed);
  keep_open_after_answer_ = stream_.Begin(std::move(head), keep_alive, head_request_);
  EnterPhase(Phase::kStreaming);
  WriteStarted();
  stream_.WriteHead(connection_, [self = shared_from_this()](error_code ec, size_t) { self->OnStreamHeadWritten(ec); });
}

void Session::OnStreamHeadWritten(error_code ec) {
  WriteProgressed();
  if (ec) return StreamFailed();
  stream_.HeadWritten();
  if (head_request_) {  // headers only: stop the producer
    if (current_token_) current_token_->Cancel();
    stream_.End();
    return OnAnswered(ec);
  }
  PumpStream();
}

// Starts the stream's next write, if one is due (one write at a time): the next queued
// chunk, or the last chunk once Finish() was asked for and the queue is empty.
void Session::PumpStream() {
  switch (stream_.TakeNext()) {
    case StreamWriter::Next::kNothing:
      return;
    case StreamWriter::Next::kChunk:
      WriteStarted();
      return stream_.WriteChunk(connection_, [self = shared_from_this()](error_code ec, size_t) {
        self->WriteProgressed();
        self->stream_.ChunkWritten();
        if (ec) return self->StreamFailed();
        self->PumpStream();
      });
    case StreamWriter::Next::kLastChunk:
      WriteStarted();
      return stream_.WriteLastChunk(connection_, [self = shared_from_this()](error_code ec, size_t) {
        self->WriteProgressed();
        self->stream_.End();
        self->OnAnswered(ec);
      });
  }
}

// A chunk could not be written: the client is gone, so the producer (e.g. an LLM
// generation) is cancelled instead of running to its end for nobody.
void Session::StreamFailed() {
  if (current_token_) current_token_->Cancel();
  stream_.End();
  Close();
}

// Ends a stream whose client stopped reading. A chunk write may be in flight (its buffer
// must stay intact): closing the socket makes it complete with an error, whose handler
// runs StreamFailed.
void Session::AbandonStream() {
  if (!stream_.accepting()) return;  // already ended
  state_->budget->CountRejected();
  INFERA_LOG(VERBOSE) << "HTTP stream closed: the client left more than "
                      << state_->options.max_stream_buffered_bytes << " bytes unread";
  if (current_token_) current_token_->Cancel();
  if (!stream_.writing()) return StreamFailed();
  stream_.Abandon();
  Close();
}

// Write timeout: a pending write that makes no progress for `write_timeout` closes the
// connection (nginx's send_timeout). Each write completion is progress; the deadline
// timer re-waits for the remainder while writes progress, so a long response costs no
// timer operation per socket write.
void Session::WriteStarted(std::chrono::steady_clock::time_point now) {
  write_deadline_.Set(now + state_->options.write_timeout);
}

void Session::OnWriteDeadline() {
  state_->budget->CountWriteTimeout();
  INFERA_LOG(VERBOSE) << "HTTP write timed out: the client read nothing for " << state_->options.write_timeout.count()
                      << " ms";
  if (current_token_) current_token_->Cancel();
  error_code ignored;
  connection_.tcp().shutdown(tcp::socket::shutdown_both, ignored);
  connection_.tcp().cancel(ignored);
}

// Answers a protocol error and closes the connection.
void Session::Fail(int status, std::string message) {
  INFERA_LOG(VERBOSE) << "HTTP " << status << ": " << message;
  Write(ErrorResponse(status, message), nullptr, Phase::kWritingError);
}

// Closing a socket with unread input makes the kernel send RST, which can destroy the
// response we just wrote before the client reads it (e.g. a 413 while the client is
// still sending its body). So: stop sending, then read and discard what the client
// still sends, for a bounded time and amount, then close (nginx's "lingering close").
void Session::LingeringClose() {
  EnterPhase(Phase::kLingering);
  linger_budget_ = kLingerMaxBytes;
  read_deadline_.Set(std::chrono::steady_clock::now() + kLingerTimeout);
  if (!connection_.tls()) return StopSendingAndDiscard();
  // TLS: close_notify, and the client's (or its end of stream, or an error), within the
  // same bound; then as over plaintext, the TCP bytes still coming read raw and dropped.
  connection_.async_shutdown([self = shared_from_this()](error_code) {
    if (self->read_deadline_.expired()) return self->Close();
    self->StopSendingAndDiscard();
  });
}

void Session::StopSendingAndDiscard() {
  error_code ignored;
  connection_.tcp().shutdown(tcp::socket::shutdown_send, ignored);
  DiscardInput();
}

void Session::DiscardInput() {
  connection_.tcp().async_read_some(net::buffer(discard_buffer_), [self = shared_from_this()](error_code ec, size_t n) {
    if (ec || n >= self->linger_budget_) return self->Close();
    self->linger_budget_ -= n;
    self->DiscardInput();
  });
}

void Session::Close() {
  EnterPhase(Phase::kClosed);
  read_deadline_.Cancel();
  write_deadline_.Cancel();
  error_code ignored;
  connection_.tcp().shutdown(tcp::socket::shutdown_send, ignored);
  connection_.tcp().close(ignored);
  thread_->sessions.Remove(this);
}

}  // namespace infera::http_internal
