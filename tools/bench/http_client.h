// HttpInferClient: the HTTP/1.1 InferClient — a pool of keep-alive connections on one
// Boost.Asio io_context (one thread), each with at most one request outstanding.
//
// Built to stay out of the way of the server on a 2-core machine: requests are encoded
// once before the run (kserve_http_payload.h) and each send is one write of those
// bytes; responses go through a small incremental parser (http_response_parser.h)
// into a per-connection buffer that is reused; TCP_NODELAY is set; nothing is
// allocated per request on the happy path beyond Asio's recycled handler memory.
//
// Behaviour:
//   - Connections open lazily (the first request on a slot connects) up to
//     max_connections; idle ones are reused most-recently-used first.
//   - Each response is checked: a transport failure is error "connect" / "io", a
//     response the parser rejects "invalid response", a status other than 200
//     "http <code>" (with the start of the body as the example), and with `check`, a
//     200 whose outputs differ from the payload's expected outputs "check".
//   - OpenAI streaming (HttpApi::kOpenAiStream): the Server-Sent Events are followed as
//     they arrive (sse_token_counter.h), so each result carries the first token's
//     arrival and the output token count; a stream without [DONE] or with an error
//     event is error "stream".
//   - A request without an answer after `request_timeout_ns` is error "timeout"; its
//     connection is closed (HTTP/1.1 cannot abandon a request otherwise).
//   - A connection the server closed while idle (keep-alive timeout) is detected when
//     the next request gets no byte back; that request is retried once on a fresh
//     connection, like browsers and HTTP client libraries do.
//   - `Connection: close` from the server closes the connection after the response.
//
// Not thread-safe: all calls and completions on the io_context's one thread.
//
// Usage:
//   ASSIGN_OR_RETURN(auto client, HttpInferClient::Create(io, clock, options, payloads));
//   client->Send(0, [](RequestResult r) { ... });   // from a handler on `io`
#ifndef INFERA_TOOLS_BENCH_HTTP_CLIENT_H_
#define INFERA_TOOLS_BENCH_HTTP_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "tools/bench/bench_clock.h"
#include "tools/bench/infer_client.h"

namespace boost::asio {
class io_context;
}

namespace infera::bench {

// One request as it goes on the wire, and what its response must contain (--check).
struct HttpPayload {
  std::string request;                   // complete HTTP/1.1 request (head + body)
  std::vector<Tensor> expected_outputs;  // empty: status check only
};

// What a 200 response must be, per API.
enum class HttpApi {
  kKServe,        // KServe v2 infer: outputs checked against expected_outputs (with `check`)
  kOpenAiStream,  // OpenAI completions/chat with stream=true: tokens timed (TTFT/TPOT)
};

struct HttpClientOptions {
  HttpApi api = HttpApi::kKServe;
  std::string host = "127.0.0.1";  // a numeric address or a name resolved once
  uint16_t port = 8000;
  int max_connections = 1;
  int64_t request_timeout_ns = 30 * kNsPerSecond;
  bool check = false;  // compare outputs with HttpPayload::expected_outputs
};

class HttpInferClient final : public InferClient {
 public:
  static absl::StatusOr<std::unique_ptr<HttpInferClient>> Create(boost::asio::io_context& io,
                                                                 const Clock& clock,
                                                                 HttpClientOptions options,
                                                                 std::vector<HttpPayload> payloads);
  ~HttpInferClient() override;

  void Send(size_t payload_index, Done done) override;
  int max_in_flight() const override;
  size_t num_payloads() const override;
  void Close() override;

  class Impl;

 private:
  explicit HttpInferClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_HTTP_CLIENT_H_
