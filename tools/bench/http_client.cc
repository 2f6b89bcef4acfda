#include "tools/bench/http_client.h"

#include <algorithm>
#include <array>
#include <boost/asio.hpp>

#include "common/str_cat.h"
#include "tools/bench/http_response_parser.h"
#include "tools/bench/kserve_http_payload.h"
#include "tools/bench/response_checker.h"
#include "tools/bench/sse_token_counter.h"

namespace infera::bench {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// One keep-alive connection. Its handlers hold a raw pointer: a connection that breaks
// is parked until its last handler has run (see Impl::Break / Reap).
struct Connection {
  explicit Connection(asio::io_context& io) : socket(io) {}

  tcp::socket socket;
  bool connected = false;
  bool used = false;    // has completed a request: a failure may be a stale keep-alive
  bool broken = false;  // closed; waiting for pending handlers before deletion
  bool busy = false;
  int pending_ops = 0;

  // The current request.
  size_t payload = 0;
  InferClient::Done done;
  int64_t sent_ns = 0;
  int64_t deadline_ns = 0;
  bool write_done = false;
  bool response_done = false;
  bool got_bytes = false;
  bool retried = false;
  HttpResponseParser parser{/*keep_body=*/true};
  SseTokenCounter sse;  // OpenAI streaming only
  std::array<char, 16384> buffer;
};

std::string Snippet(std::string_view body) {
  std::string s(body.substr(0, 200));
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

class HttpInferClient::Impl {
 public:
  Impl(asio::io_context& io, const Clock& clock, HttpClientOptions options,
       std::vector<HttpPayload> payloads, tcp::endpoint endpoint)
      : io_(io), clock_(clock), options_(std::move(options)), payloads_(std::move(payloads)),
        endpoint_(endpoint), timer_(io) {
    timer_period_ns_ = std::clamp<int64_t>(options_.request_timeout_ns / 10, 10 * kNsPerMs,
                                           200 * kNsPerMs);
  }

  ~Impl() {
    // Silent: no callbacks from a destructor. Pending handlers are destroyed, not run,
    // when the io_context goes (its owner stops it before destroying this client).
    timer_.cancel();
    for (auto& c : connections_) CloseSocket(*c);
    for (auto& c : graveyard_) CloseSocket(*c);
  }

  void Send(size_t payload, Done done) {
    Connection* c = nullptr;
    if (!idle_.empty()) {
      c = idle_.back();
      idle_.pop_back();
    } else {
      c = NewConnection();
    }
    StartRequest(c, payload, std::move(done), /*retried=*/false);
  }

  int max_in_flight() const { return options_.max_connections; }
  size_t num_payloads() const { return payloads_.size(); }

  void Close() {
    timer_.cancel();
    timer_armed_ = false;
    std::vector<Connection*> all;
    for (auto& c : connections_) all.push_back(c.get());
    for (Connection* c : all) {
      if (c->busy) {
        Fail(c, "io", "client closed");
      } else {
        Break(c);
      }
    }
    idle_.clear();
  }

 private:
  Connection* NewConnection() {
    connections_.push_back(std::make_unique<Connection>(io_));
    Connection* c = connections_.back().get();
    if (options_.api == HttpApi::kOpenAiStream) {
      c->parser.on_body_data = [this, c](std::string_view data) { c->sse.Feed(data, clock_.NowNs()); };
    }
    return c;
  }

  void StartRequest(Connection* c, size_t payload, Done done, bool retried) {
    c->busy = true;
    c->payload = payload;
    c->done = std::move(done);
    c->write_done = c->response_done = c->got_bytes = false;
    c->retried = retried;
    c->parser.Reset();
    c->sse.Reset();
    const int64_t now = clock_.NowNs();
    c->deadline_ns = now + options_.request_timeout_ns;  // connecting counts against it
    ArmTimer();
    c->sent_ns = c->connected ? now : 0;  // set once connected
    if (!c->connected) return Connect(c);
    Write(c);
    Read(c);
  }

  void Connect(Connection* c) {
    ++c->pending_ops;
    c->socket.async_connect(endpoint_, [this, c](const boost::system::error_code& ec) {
      if (--c->pending_ops, c->broken) return Reap(c);
      if (ec) return Fail(c, "connect", StrCat("connect to ", Endpoint(), ": ", ec.message()));
      boost::system::error_code ignored;
      c->socket.set_option(tcp::no_delay(true), ignored);
      c->connected = true;
      c->sent_ns = clock_.NowNs();
      Write(c);
      Read(c);
    });
  }

  void Write(Connection* c) {
    ++c->pending_ops;
    asio::async_write(c->socket, asio::buffer(payloads_[c->payload].request),
                      [this, c](const boost::system::error_code& ec, size_t) {
                        if (--c->pending_ops, c->broken) return Reap(c);
                        c->write_done = true;
                        // A server may answer (413, 400) and close before reading it all.
                        if (ec && !c->response_done) {
                          return FailOrRetry(c, StrCat("write: ", ec.message()));
                        }
                        if (c->response_done) Finish(c);
                      });
  }

  void Read(Connection* c) {
    ++c->pending_ops;
    c->socket.async_read_some(asio::buffer(c->buffer),
                              [this, c](const boost::system::error_code& ec, size_t n) {
                                if (--c->pending_ops, c->broken) return Reap(c);
                                OnRead(c, ec, n);
                              });
  }

  void OnRead(Connection* c, const boost::system::error_code& ec, size_t n) {
    using State = HttpResponseParser::State;
    State state;
    if (ec == asio::error::eof) {
      state = c->parser.FeedEof();
      if (state != State::kDone) return FailOrRetry(c, "connection closed by the server");
    } else if (ec) {
      return FailOrRetry(c, StrCat("read: ", ec.message()));
    } else {
      c->got_bytes = true;
      size_t used = 0;
      state = c->parser.Feed(c->buffer.data(), n, &used);
    }
    if (state == State::kError) return Fail(c, "invalid response", c->parser.error());
    if (state == State::kNeedMore) return Read(c);
    c->response_done = true;
    if (c->write_done) Finish(c);
  }

  RequestResult Evaluate(Connection* c) {
    const HttpResponseParser& p = c->parser;
    if (p.head().status != 200) {
      return ErrorResult(StrCat("http ", p.head().status), Snippet(p.body()), c->sent_ns);
    }
    if (options_.api == HttpApi::kOpenAiStream) return EvaluateStream(c);
    const HttpPayload& payload = payloads_[c->payload];
    if (options_.check && !payload.expected_outputs.empty()) {
      auto outputs = DecodeInferHttpResponse(p.body(), p.head().inference_header_length);
      if (!outputs.ok()) {
        return ErrorResult("invalid response", std::string(outputs.status().message()), c->sent_ns);
      }
      if (absl::Status s = CompareOutputs(payload.expected_outputs, *outputs); !s.ok()) {
        return ErrorResult("check", std::string(s.message()), c->sent_ns);
      }
    }
    RequestResult result;
    result.ok = true;
    result.sent_ns = c->sent_ns;
    return result;
  }

  RequestResult EvaluateStream(Connection* c) {
    const SseTokenCounter& sse = c->sse;
    if (!sse.error().empty()) return ErrorResult("stream", sse.error(), c->sent_ns);
    if (!sse.done()) return ErrorResult("stream", "the stream ended without data: [DONE]", c->sent_ns);
    RequestResult result;
    result.ok = true;
    result.sent_ns = c->sent_ns;
    result.first_token_ns = sse.first_token_ns();
    result.output_tokens = sse.tokens();
    return result;
  }

  void Finish(Connection* c) {
    RequestResult result = Evaluate(c);
    Done done = std::move(c->done);
    c->busy = false;
    c->used = true;
    if (c->parser.head().keep_alive) {
      idle_.push_back(c);
    } else {
      Break(c);
    }
    std::move(done)(std::move(result));
  }

  // A failure before any response byte on a reused connection is most likely a
  // keep-alive the server had already closed: retry once on a fresh connection.
  void FailOrRetry(Connection* c, std::string detail) {
    if (c->used && !c->got_bytes && !c->retried) {
      const size_t payload = c->payload;
      Done done = std::move(c->done);
      c->busy = false;
      Break(c);
      StartRequest(NewConnection(), payload, std::move(done), /*retried=*/true);
      return;
    }
    Fail(c, "io", std::move(detail));
  }

  void Fail(Connection* c, std::string kind, std::string detail) {
    RequestResult result = ErrorResult(std::move(kind), std::move(detail), c->sent_ns);
    Done done = std::move(c->done);
    c->busy = false;
    Break(c);  // may delete c
    if (done) std::move(done)(std::move(result));
  }

  static void CloseSocket(Connection& c) {
    boost::system::error_code ignored;
    c.socket.close(ignored);
  }

  // Takes `c` out of service; it is deleted once no handler of it is pending.
  void Break(Connection* c) {
    c->broken = true;
    CloseSocket(*c);
    idle_.erase(std::remove(idle_.begin(), idle_.end(), c), idle_.end());
    auto it = std::find_if(connections_.begin(), connections_.end(),
                           [c](const auto& p) { return p.get() == c; });
    if (it != connections_.end()) {
      graveyard_.push_back(std::move(*it));
      connections_.erase(it);
    }
    Reap(c);
  }

  void Reap(Connection* c) {
    if (c->pending_ops > 0) return;
    graveyard_.erase(std::remove_if(graveyard_.begin(), graveyard_.end(),
                                    [c](const auto& p) { return p.get() == c; }),
                     graveyard_.end());
  }

  void ArmTimer() {
    if (timer_armed_) return;
    timer_armed_ = true;
    timer_.expires_after(std::chrono::nanoseconds(timer_period_ns_));
    timer_.async_wait([this](const boost::system::error_code& ec) {
      timer_armed_ = false;
      if (ec) return;
      ExpireRequests();
    });
  }

  void ExpireRequests() {
    const int64_t now = clock_.NowNs();
    std::vector<Connection*> expired;
    bool any_busy = false;
    for (auto& c : connections_) {
      if (!c->busy) continue;
      any_busy = true;
      if (c->deadline_ns <= now) expired.push_back(c.get());
    }
    for (Connection* c : expired) {
      if (c->busy && !c->broken) {
        Fail(c, "timeout", StrCat("no response within ", options_.request_timeout_ns / kNsPerMs, " ms"));
      }
    }
    if (any_busy) ArmTimer();
  }

  std::string Endpoint() const { return StrCat(options_.host, ":", options_.port); }

  asio::io_context& io_;
  const Clock& clock_;
  const HttpClientOptions options_;
  const std::vector<HttpPayload> payloads_;
  const tcp::endpoint endpoint_;
  asio::steady_timer timer_;
  bool timer_armed_ = false;
  int64_t timer_period_ns_;
  std::vector<std::unique_ptr<Connection>> connections_;  // in service: idle or busy
  std::vector<Connection*> idle_;                         // most recently used last
  std::vector<std::unique_ptr<Connection>> graveyard_;    // broken, handlers pending
};

absl::StatusOr<std::unique_ptr<HttpInferClient>> HttpInferClient::Create(
    asio::io_context& io, const Clock& clock, HttpClientOptions options,
    std::vector<HttpPayload> payloads) {
  if (payloads.empty()) return absl::InvalidArgumentError("no payloads");
  if (options.max_connections < 1) return absl::InvalidArgumentError("max_connections must be >= 1");
  boost::system::error_code ec;
  tcp::resolver resolver(io);
  auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
  if (ec || results.empty()) {
    return absl::UnavailableError(StrCat("cannot resolve ", options.host, ": ", ec.message()));
  }
  const tcp::endpoint endpoint = results.begin()->endpoint();
  return std::unique_ptr<HttpInferClient>(new HttpInferClient(
      std::make_unique<Impl>(io, clock, std::move(options), std::move(payloads), endpoint)));
}

HttpInferClient::HttpInferClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpInferClient::~HttpInferClient() = default;
void HttpInferClient::Send(size_t payload_index, Done done) { impl_->Send(payload_index, std::move(done)); }
int HttpInferClient::max_in_flight() const { return impl_->max_in_flight(); }
size_t HttpInferClient::num_payloads() const { return impl_->num_payloads(); }
void HttpInferClient::Close() { impl_->Close(); }

}  // namespace infera::bench
