// RequestResult: what a client reports about one request — the unit every statistic
// of the load generator is built from. Protocol- and API-neutral: HTTP and gRPC
// clients fill the same fields; streaming APIs (OpenAI completions/chat) also
// fill the token fields that TTFT and TPOT come from.
#ifndef INFERA_TOOLS_BENCH_REQUEST_RESULT_H_
#define INFERA_TOOLS_BENCH_REQUEST_RESULT_H_

#include <cstdint>
#include <string>

namespace infera::bench {

struct RequestResult {
  bool ok = false;
  // Set when !ok. `error_kind` is a short, low-cardinality class that errors are
  // counted by ("http 429", "timeout", "connect", "io", "invalid response", "check");
  // `error_detail` is one human-readable example ("OUTPUT0[3] is 7, expected 8").
  std::string error_kind;
  std::string error_detail;
  // When the request's first byte was handed to the socket (Clock ns); 0 if it never
  // was (a connect failure).
  int64_t sent_ns = 0;
  // Streaming APIs: arrival of the first output token (0: none) and the number of
  // output tokens. Unused (0) for KServe tensor inference.
  int64_t first_token_ns = 0;
  int64_t output_tokens = 0;
};

inline RequestResult ErrorResult(std::string kind, std::string detail, int64_t sent_ns) {
  RequestResult result;
  result.error_kind = std::move(kind);
  result.error_detail = std::move(detail);
  result.sent_ns = sent_ns;
  return result;
}

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_REQUEST_RESULT_H_
