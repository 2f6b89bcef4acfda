// SseTokenCounter: follows an OpenAI streaming response (Server-Sent Events) as its
// bytes arrive, for TTFT and TPOT: when the first token came, and how many tokens came.
//
// Each event is a "data: {json}" line; the stream ends with "data: [DONE]". A token
// event is a chunk whose choices[0].text (completions) or choices[0].delta.content
// (chat) is non-empty; the first one's arrival time is the first token time. The token
// count is usage.completion_tokens when the server sends usage (stream_options
// include_usage), else the number of token events. An event carrying "error" records its
// message. Lines may be split anywhere across Feed() calls; "\r\n" and "\n" both end a
// line.
//
// Not thread-safe; one per connection, Reset() per request.
//
// Usage:
//   counter.Feed(body_piece, clock.NowNs());
//   ... result.first_token_ns = counter.first_token_ns(); result.output_tokens = counter.tokens();
#ifndef INFERA_TOOLS_BENCH_SSE_TOKEN_COUNTER_H_
#define INFERA_TOOLS_BENCH_SSE_TOKEN_COUNTER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace infera::bench {

class SseTokenCounter {
 public:
  void Reset();
  void Feed(std::string_view data, int64_t now_ns);

  int64_t first_token_ns() const { return first_token_ns_; }
  int64_t tokens() const { return usage_tokens_ >= 0 ? usage_tokens_ : token_events_; }
  int64_t token_events() const { return token_events_; }
  bool done() const { return done_; }
  const std::string& error() const { return error_; }

 private:
  void OnLine(std::string_view line, int64_t now_ns);

  std::string partial_;  // an unterminated line from the previous Feed
  int64_t first_token_ns_ = 0;
  int64_t token_events_ = 0;
  int64_t usage_tokens_ = -1;
  bool done_ = false;
  std::string error_;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_SSE_TOKEN_COUNTER_H_
