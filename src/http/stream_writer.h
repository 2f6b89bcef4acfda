// StreamWriter: one connection's streamed response (chunked transfer coding; Server-Sent
// Events use it): the head (serialised by Beast, Transfer-Encoding: chunked), the queue
// of chunks a producer writes from any thread, their accounting, and the chunk framing.
// The session starts the writes it asks for, one at a time, and reports them done.
//
// States (the session moves it; one write in flight at most):
//
//   kNone ──Begin──> kWritingHead ──HeadWritten──> kIdle <──ChunkWritten── kWritingChunk
//                                                    │  └──Next()=kChunk──────────^
//                                                    └──Next()=kLastChunk──> kWritingLast
//   any state ──Abandon──> kAbandoned (a write in flight ends with an error) ──End──> kNone
//   kWritingLast / kIdle / ... ──End──> kNone (the stream is over: queue dropped)
//
// Accounting: a chunk's bytes are counted when the producer writes it (Admit, any thread:
// the per-connection bound covers chunks still waiting in the io_context's queue too) and
// in the server's ResponseBudget; they are released when the chunk is written or dropped.
//
// Thread-safety: Admit and Release may run on any thread (an atomic); everything else on
// the connection's I/O thread.
#ifndef INFERA_HTTP_STREAM_WRITER_H_
#define INFERA_HTTP_STREAM_WRITER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>

#include "http/http_message.h"
#include "http/response_budget.h"

namespace infera::http_internal {

class StreamWriter {
 public:
  enum class State : uint8_t { kNone, kWritingHead, kIdle, kWritingChunk, kWritingLast, kAbandoned };
  // The next write to start.
  enum class Next : uint8_t { kNothing, kChunk, kLastChunk };

  StreamWriter(ResponseBudget* budget, size_t max_buffered_bytes) : budget_(budget), max_buffered_bytes_(max_buffered_bytes) {}
  ~StreamWriter() { budget_->Release(queued_); }
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  // Any thread: counts a chunk of `bytes` about to be posted to the I/O thread. False
  // (nothing counted) when the connection would then hold more than the bound: the
  // client reads slower than the producer writes.
  bool Admit(int64_t bytes);
  // Any thread: un-counts chunk bytes that will not be written.
  void Release(int64_t bytes) {
    pending_.fetch_sub(bytes, std::memory_order_relaxed);
    budget_->Release(bytes);
  }

  // Starts a stream with `head`'s status, content type and headers; its body, if any and
  // unless `head_only`, is the first chunk. kNone -> kWritingHead. Returns whether the
  // connection stays open after the stream (`keep_alive` unless the route's headers say
  // otherwise).
  bool Begin(HttpResponse head, bool keep_alive, bool head_only);
  // Queues an admitted chunk (dropped, and released, when the stream does not accept
  // chunks any more).
  void Enqueue(std::string chunk, int64_t bytes);
  // The producer is done: the last chunk follows the queued ones.
  void RequestFinish() {
    if (active()) finish_requested_ = true;
  }

  // The head was written: kWritingHead -> kIdle.
  void HeadWritten() {
    if (state_ == State::kWritingHead) state_ = State::kIdle;
  }
  // From kIdle: the next write, if any is due (the state moves to kWritingChunk or
  // kWritingLast).
  Next TakeNext();
  // The chunk write completed: its bytes are released; kWritingChunk -> kIdle.
  void ChunkWritten();
  // The stream is cut short (its client stopped reading); a write may still be in flight.
  void Abandon() { state_ = State::kAbandoned; }
  // The stream is over: queued chunks are dropped and released, back to kNone.
  void End();

  State state() const { return state_; }
  // A stream is open and takes chunks.
  bool accepting() const { return state_ != State::kNone && state_ != State::kWritingLast && state_ != State::kAbandoned; }
  // A stream exists (begun, not yet ended).
  bool active() const { return state_ != State::kNone; }
  bool writing() const {
    return state_ == State::kWritingHead || state_ == State::kWritingChunk || state_ == State::kWritingLast;
  }

  // The writes (the session passes its socket and completion handler).
  template <class Socket, class Handler>
  void WriteHead(Socket& socket, Handler&& handler) {
    boost::beast::http::async_write_header(socket, *serializer_, std::forward<Handler>(handler));
  }
  template <class Socket, class Handler>
  void WriteChunk(Socket& socket, Handler&& handler) {
    boost::asio::async_write(socket, boost::beast::http::make_chunk(boost::asio::buffer(current_)),
                             std::forward<Handler>(handler));
  }
  template <class Socket, class Handler>
  void WriteLastChunk(Socket& socket, Handler&& handler) {
    boost::asio::async_write(socket, boost::beast::http::make_chunk_last(), std::forward<Handler>(handler));
  }

 private:
  ResponseBudget* const budget_;
  const size_t max_buffered_bytes_;
  State state_ = State::kNone;
  bool finish_requested_ = false;
  boost::beast::http::response<boost::beast::http::empty_body> head_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::empty_body>> serializer_;
  std::deque<std::string> queue_;
  std::string current_;  // the chunk being written
  // Chunk bytes accounted (in the budget too): pending_ from Admit (any thread) until
  // written or dropped; queued_ (I/O thread) the part already in queue_ or being written,
  // current_accounted_ the latter.
  std::atomic<int64_t> pending_{0};
  int64_t queued_ = 0;
  int64_t current_accounted_ = 0;
};

}  // namespace infera::http_internal

#endif  // INFERA_HTTP_STREAM_WRITER_H_
