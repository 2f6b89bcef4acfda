// SessionStream: the byte stream of one HTTP connection, either the plain TCP socket or a
// TLS stream over it (TlsSocketStream: OpenSSL on the socket), chosen when the connection is accepted. Its
// async_read_some / async_write_some forward to the one in use, so Beast's parser and
// serializer and the session's gather writes run unchanged over both. Socket-level
// operations (cancel, shutdown, close, the disconnect watch's wait and peek) act on the TCP
// socket underneath: tcp().
//
// A TLS stream holds its context (shared with the other connections accepted while it was
// current): a certificate rotation does not touch open connections.
//
// Not thread-safe: used on its connection's I/O thread only, like the Session that owns it.
#ifndef INFERA_HTTP_SESSION_STREAM_H_
#define INFERA_HTTP_SESSION_STREAM_H_

#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/ssl/context.hpp>

#include "http/tls_socket_stream.h"

namespace infera::http_internal {

class SessionStream {
 public:
  using executor_type = Executor;

  // `tls_context` null: plaintext.
  SessionStream(Socket socket, std::shared_ptr<boost::asio::ssl::context> tls_context)
      : socket_(std::move(socket)), tls_context_(std::move(tls_context)) {
    if (tls_context_) tls_.emplace(socket_, tls_context_->native_handle());
  }
  SessionStream(const SessionStream&) = delete;
  SessionStream& operator=(const SessionStream&) = delete;

  bool tls() const { return tls_.has_value(); }
  Socket& tcp() { return socket_; }
  executor_type get_executor() { return socket_.get_executor(); }

  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) return tls_->async_read_some(buffers, std::forward<Handler>(handler));
    socket_.async_read_some(buffers, std::forward<Handler>(handler));
  }
  // Over TLS, the buffers of a gather write go as one record when they fit in one (16 KiB);
  // otherwise the first goes alone (the session writes the rest next).
  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) return tls_->async_write_some(buffers, std::forward<Handler>(handler));
    socket_.async_write_some(buffers, std::forward<Handler>(handler));
  }

  // TLS only: the server side of the handshake; the close_notify exchange.
  template <class Handler>
  void async_handshake(Handler&& handler) {
    tls_->async_handshake(std::forward<Handler>(handler));
  }
  template <class Handler>
  void async_shutdown(Handler&& handler) {
    tls_->async_shutdown(std::forward<Handler>(handler));
  }

 private:
  Socket socket_;
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::optional<TlsSocketStream> tls_;  // over socket_, using *tls_context_
};

}  // namespace infera::http_internal

#endif  // INFERA_HTTP_SESSION_STREAM_H_
