// HttpServer: the listening socket, the I/O threads (one io_context each) and the drain.
// A connection is a Session (session.h); the per-request work is there.
//
// Includes Asio (not Beast directly; session.h brings the Beast parser and writers).
#include "http/http_server.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/logging.h"
#include "common/str_cat.h"
#include "http/http_status.h"
#include "http/session.h"

namespace infera {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

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
      state_->threads.push_back(std::make_unique<http_internal::IoThread>());
    }
  }

  ~Impl() { Shutdown(std::chrono::milliseconds(0)); }

  absl::Status Listen() {
    if (state_->options.tls.enabled()) {
      auto tls = TlsServerContext::Create(state_->options.tls);
      if (!tls.ok()) return tls.status();
      state_->tls = std::move(*tls);
    }
    error_code ec;
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

  // Draining: accept no connection; on each I/O thread, close the sessions reading a
  // request (not in flight: Session::Drain) and let no session read another; wait, up to
  // `grace`, until the requests in flight are answered; then stop the threads.
  void Shutdown(std::chrono::milliseconds grace) {
    if (stopped_.exchange(true)) return;
    state_->draining.store(true);
    if (acceptor_) {
      net::post(*contexts_[0], [this] {
        error_code ignored;
        acceptor_->close(ignored);
      });
    }
    // Until every thread has run its drain, a request dispatched there may not be counted
    // yet; afterwards no new one is.
    auto threads_to_drain = std::make_shared<std::atomic<size_t>>(contexts_.size());
    for (size_t i = 0; i < contexts_.size(); ++i) {
      net::post(*contexts_[i], [thread = state_->threads[i].get(), threads_to_drain] {
        thread->sessions.ForEach([](http_internal::Session& session) { session.Drain(); });
        threads_to_drain->fetch_sub(1, std::memory_order_release);
      });
    }
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while ((threads_to_drain->load(std::memory_order_acquire) > 0 || InFlight() > 0) &&
           std::chrono::steady_clock::now() < deadline) {
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
    for (const auto& thread : state_->threads) total += thread->in_flight.value.load(std::memory_order_relaxed);
    return static_cast<int>(total);
  }
  std::vector<std::pair<int, uint64_t>> ResponseCounts() const {
    std::vector<std::pair<int, uint64_t>> counts;
    for (size_t status = 0; status < 600; ++status) {
      uint64_t total = 0;
      for (const auto& thread : state_->threads) {
        total += thread->responses.by_status[status].load(std::memory_order_relaxed);
      }
      if (total > 0) counts.emplace_back(static_cast<int>(status), total);
    }
    return counts;
  }
  Stats GetStats() const {
    return Stats{state_->budget->buffered(), state_->budget->write_timeouts(), state_->budget->rejected(),
                 state_->tls_handshake_failures.load(std::memory_order_relaxed)};
  }

 private:
  void Accept() {
    const size_t index = next_context_++ % contexts_.size();
    net::io_context& target = *contexts_[index];
    acceptor_->async_accept(target, [this, index](error_code ec, http_internal::Socket socket) {
      if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
      if (ec) {
        // Usually EMFILE: back off briefly instead of spinning on the error.
        INFERA_LOG(WARNING) << "accept failed: " << ec.message();
        auto timer = std::make_shared<net::steady_timer>(*contexts_[0], std::chrono::milliseconds(50));
        timer->async_wait([this, timer](error_code) { Accept(); });
        return;
      }
      // The session starts on its own I/O thread (its session list is touched only there).
      // TLS: the current context (re-read from its files at most once a second).
      auto session = std::make_shared<http_internal::Session>(
          std::move(socket), state_->tls ? state_->tls->Current() : nullptr, state_, state_->threads[index].get());
      net::post(*contexts_[index], [session = std::move(session)] { session->Start(); });
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
