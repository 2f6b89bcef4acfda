// HttpResponseParser: an incremental HTTP/1.1 response parser for the load generator's
// client side — small and allocation-light, because it runs once per request at up to
// ~100k requests/s on one thread.
//
// Handles: the status line (HTTP/1.0 and 1.1), interim 1xx responses (skipped), headers
// (case-insensitive; the ones a client needs are decoded into Head), bodies delimited
// by Content-Length, by chunked transfer encoding (trailers skipped) or by the end of
// the connection (FeedEof), and no body for 204 / 304. The body is kept only when asked
// (response checks); otherwise only counted. `on_body_data`, when set, sees every body
// piece as it arrives — streaming APIs (Server-Sent Events) will timestamp tokens there.
//
// Limits: a head larger than 64 KiB, a malformed status line, header line, length or
// chunk size is kError with a message; nothing is read out of bounds.
//
// Not thread-safe; one per connection.
//
// Usage:
//   HttpResponseParser parser(/*keep_body=*/false);
//   size_t used = 0;
//   if (parser.Feed(data, n, &used) == HttpResponseParser::State::kDone) {
//     int status = parser.head().status;  ...  parser.Reset();
//   }
#ifndef INFERA_TOOLS_BENCH_HTTP_RESPONSE_PARSER_H_
#define INFERA_TOOLS_BENCH_HTTP_RESPONSE_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace infera::bench {

class HttpResponseParser {
 public:
  enum class State { kNeedMore, kDone, kError };

  struct Head {
    int status = 0;
    int64_t content_length = -1;  // -1: absent
    bool chunked = false;
    bool keep_alive = true;  // false: the server closes after this response
    std::optional<size_t> inference_header_length;  // Inference-Header-Content-Length
    std::string content_type;
  };

  static constexpr size_t kMaxHeadBytes = 64 << 10;

  explicit HttpResponseParser(bool keep_body) : keep_body_(keep_body) {}

  // Forgets the current response (after kDone, or to reuse after an error).
  void Reset();
  // Consumes bytes of the response; `*consumed` receives how many belong to it (bytes
  // after a complete response are left for the caller).
  State Feed(const char* data, size_t size, size_t* consumed);
  // The peer closed the connection: completes a body delimited by the close, else kError
  // (a truncated response).
  State FeedEof();

  State state() const { return state_; }
  const Head& head() const { return head_; }
  const std::string& body() const { return body_; }
  int64_t body_bytes() const { return body_bytes_; }
  const std::string& error() const { return error_; }

  std::function<void(std::string_view)> on_body_data;

 private:
  enum class Phase { kHead, kBody, kUntilClose, kChunkSize, kChunkData, kChunkDataEnd, kTrailers };

  // Each returns bytes consumed from `data`; they set state_ / phase_.
  size_t ConsumeHead(const char* data, size_t size);
  size_t ConsumeLine(const char* data, size_t size, bool* complete);
  void ParseHead();
  bool ParseHeaderLine(std::string_view line);
  void StartBody();
  void OnBody(const char* data, size_t size);
  void Fail(std::string message);

  const bool keep_body_;
  State state_ = State::kNeedMore;
  Phase phase_ = Phase::kHead;
  Head head_;
  std::string head_bytes_;  // the head so far, or the current chunk-size / trailer line
  std::string body_;
  int64_t body_bytes_ = 0;
  int64_t remaining_ = 0;  // of the Content-Length body or the current chunk
  std::string error_;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_HTTP_RESPONSE_PARSER_H_
