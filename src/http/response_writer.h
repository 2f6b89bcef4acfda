// ResponseWriter: one connection's whole (not streamed) responses, one at a time: the
// admission of the body against the server's ResponseBudget (a 503 in its place when
// over), the status line and header serialised by hand, and the bytes left to send as one
// gather write (header + body: one sendmsg). The session does the socket writes.
//
// The header is byte for byte what Beast's serializer wrote for the message the server
// used to build (http_server_test pins it): status line, Content-Type, the route's
// headers (a later header of the same name replaces an earlier one, as fields::set did;
// one named Content-Type replaces the content type), `Connection: close` when the
// connection closes after the response, Content-Length of the body (for a HEAD: of the
// body a GET gets, with no body sent).
//
// The header string and a small body's buffer keep their capacity for the connection's
// next response (TakeBodyBuffer hands the body buffer to the route that builds the next
// answer): no allocation per response in steady state.
//
// Not thread-safe: used on its connection's I/O thread only.
//
// Usage (the session):
//   auto started = writer.Start(std::move(response), keep_alive, head_only, on_written, now);
//   socket.async_write_some(writer.Pending(), ...);   // until Advance(n) returns true
//   writer.Finish(now, completed);
#ifndef INFERA_HTTP_RESPONSE_WRITER_H_
#define INFERA_HTTP_RESPONSE_WRITER_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/asio/buffer.hpp>

#include "http/http_message.h"
#include "http/http_server.h"
#include "http/response_budget.h"

namespace infera::http_internal {

// Responses of at most this many bytes leave their body buffer's capacity with the
// connection for the next response; larger ones free it.
inline constexpr size_t kKeptBodyCapacity = 64 << 10;

// Appends the status line and header of `response` (see above) to `out`.
void AppendResponseHead(const HttpResponse& response, bool keep_alive, size_t content_length, std::string& out);

class ResponseWriter {
 public:
  explicit ResponseWriter(ResponseBudget* budget) : budget_(budget) {}
  ~ResponseWriter() { budget_->Release(accounted_); }
  ResponseWriter(const ResponseWriter&) = delete;
  ResponseWriter& operator=(const ResponseWriter&) = delete;

  struct Started {
    int status;       // the status written (503 when the body was not admitted)
    bool keep_alive;  // the connection stays open after this response
  };
  // Prepares `response` for writing. Its body is admitted against the budget; when it is
  // not, it is dropped at once and a 503 replaces it (the connection then closes, and
  // `on_written` is not called). `head_only` (HEAD): no body is sent, and none is
  // accounted. `on_written` runs from Finish.
  Started Start(HttpResponse response, bool keep_alive, bool head_only, HttpResponder::WriteCallback on_written,
                std::chrono::steady_clock::time_point now);

  // What the socket has not taken yet, as one gather write (header rest + body).
  std::array<boost::asio::const_buffer, 2> Pending() const;
  // The socket took `n` more bytes; true when nothing is left.
  bool Advance(size_t n) {
    written_ += n;
    return written_ >= head_.size() + body_.size();
  }
  // The write is over (all taken, or failed): the budget gets the body's bytes back, the
  // body buffer is emptied (a small one keeps its capacity), and the write callback runs
  // with the time since Start and `completed`.
  void Finish(std::chrono::steady_clock::time_point now, bool completed);

  // A response is between Start and Finish.
  bool active() const { return active_; }
  // The last response's body buffer, emptied, with its capacity (call while !active()).
  std::string TakeBodyBuffer() {
    body_.clear();
    return std::move(body_);
  }

 private:
  void ReleaseBody();

  ResponseBudget* const budget_;
  std::string head_;  // the serialised status line and header
  std::string body_;
  size_t written_ = 0;      // bytes of head_ + body_ the socket has taken
  int64_t accounted_ = 0;   // bytes of body_ counted in the budget
  bool active_ = false;
  HttpResponder::WriteCallback on_written_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace infera::http_internal

#endif  // INFERA_HTTP_RESPONSE_WRITER_H_
