#include "http/tls_socket_stream.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

#include "common/check.h"

namespace infera::http_internal {
namespace {

namespace net = boost::asio;

// A BIO over a non-blocking socket: writes are send() with MSG_NOSIGNAL (a peer that
// closed must not raise SIGPIPE, wherever the server runs); reads take the bytes the
// stream received from the socket (SocketBioState::input) and end of stream once the
// socket reported it. Nothing there, or EAGAIN on send, is OpenSSL's "retry", so
// SSL_get_error answers WANT_READ / WANT_WRITE; end of stream is also remembered for
// BIO_CTRL_EOF (OpenSSL asks it to tell a peer's close from an error). The BIO's data is
// the stream's SocketBioState; the socket owns the descriptor (the BIO never closes it).
using SocketBioState = TlsSocketStream::SocketBioState;

SocketBioState& StateOf(BIO* bio) { return *static_cast<SocketBioState*>(BIO_get_data(bio)); }

int SocketBioWrite(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t sent = ::send(StateOf(bio).fd, data, static_cast<size_t>(size), MSG_NOSIGNAL);
  if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(bio);
  return static_cast<int>(sent);
}

int SocketBioRead(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  SocketBioState& state = StateOf(bio);
  const size_t available = state.input_end - state.input_begin;
  if (available == 0) {
    if (state.end_of_stream) return 0;
    BIO_set_retry_read(bio);
    return -1;
  }
  const size_t taken = std::min(available, static_cast<size_t>(size));
  std::memcpy(data, state.input + state.input_begin, taken);
  state.input_begin += taken;
  return static_cast<int>(taken);
}

long SocketBioCtrl(BIO* bio, int command, long, void*) {  // NOLINT(runtime/int): OpenSSL's signature
  switch (command) {
    case BIO_CTRL_FLUSH:  // after each record; nothing is buffered here
      return 1;
    case BIO_CTRL_EOF:
      return StateOf(bio).end_of_stream ? 1 : 0;
    default:
      return 0;
  }
}

int SocketBioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* SocketBioMethod() {
  static const BIO_METHOD* const method = [] {
    BIO_METHOD* made = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "infera socket");
    INFERA_CHECK(made != nullptr) << "OpenSSL: BIO_meth_new failed";
    BIO_meth_set_write(made, SocketBioWrite);
    BIO_meth_set_read(made, SocketBioRead);
    BIO_meth_set_ctrl(made, SocketBioCtrl);
    BIO_meth_set_create(made, SocketBioCreate);
    return made;
  }();
  return method;
}

}  // namespace

TlsSocketStream::TlsSocketStream(Socket& socket, SSL_CTX* context)
    : socket_(socket), ssl_(SSL_new(context)), input_(std::make_unique<char[]>(kInputBufferSize)) {
  INFERA_CHECK(ssl_ != nullptr) << "OpenSSL: SSL_new failed";
  BIO* bio = BIO_new(SocketBioMethod());
  INFERA_CHECK(bio != nullptr) << "OpenSSL: BIO_new failed";
  bio_state_.fd = socket_.native_handle();
  bio_state_.input = input_.get();
  BIO_set_data(bio, &bio_state_);
  SSL_set_bio(ssl_, bio, bio);  // the SSL object owns the BIO
  SSL_set_accept_state(ssl_);
  // A write that must wait is retried with the same bytes from wherever they are; a large
  // write may complete in part (the caller writes the rest).
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Take all the input buffer holds, not a record header then its body: one BIO read per
  // request.
  SSL_set_read_ahead(ssl_, 1);
  // The descriptor must not block inside OpenSSL: waits go through the reactor.
  error_code ignored;
  socket_.non_blocking(true, ignored);
}

TlsSocketStream::~TlsSocketStream() { SSL_free(ssl_); }

TlsSocketStream::Step TlsSocketStream::Failed(int result) {
  const int reason = SSL_get_error(ssl_, result);
  switch (reason) {
    case SSL_ERROR_WANT_READ:
      return {Next::kWaitRead, {}, 0};
    case SSL_ERROR_WANT_WRITE:
      return {Next::kWaitWrite, {}, 0};
    case SSL_ERROR_ZERO_RETURN:
      return {Next::kDone, net::error::eof, 0};
    case SSL_ERROR_SYSCALL: {
      const int system_error = errno;
      fatal_ = true;
      ERR_clear_error();
      if (system_error != 0) return {Next::kDone, error_code(system_error, boost::system::system_category()), 0};
      return {Next::kDone, net::ssl::error::stream_truncated, 0};
    }
    default: {
      fatal_ = true;
      const unsigned long first = ERR_get_error();  // NOLINT(runtime/int): OpenSSL's type
      ERR_clear_error();
      if (first == 0) return {Next::kDone, net::ssl::error::unspecified_system_error, 0};
      return {Next::kDone, error_code(static_cast<int>(first), net::error::get_ssl_category()), 0};
    }
  }
}

// OpenSSL's error queue is per thread and SSL_get_error reads it: each call starts empty.
TlsSocketStream::Step TlsSocketStream::Handshake() {
  ERR_clear_error();
  errno = 0;
  const int result = SSL_do_handshake(ssl_);
  return result == 1 ? Step{} : Failed(result);
}

TlsSocketStream::Step TlsSocketStream::Shutdown() {
  // After a fatal error OpenSSL must not send anything more (nor is it asked to).
  if (fatal_ || SSL_in_init(ssl_) != 0) return {Next::kDone, net::ssl::error::stream_truncated, 0};
  ERR_clear_error();
  errno = 0;
  int result = SSL_shutdown(ssl_);
  if (result == 0) result = SSL_shutdown(ssl_);  // close_notify sent: now the peer's
  if (result == 1) return {};
  return Failed(result);
}

bool TlsSocketStream::NothingToRead() const {
  return bio_state_.input_begin == bio_state_.input_end && !bio_state_.end_of_stream && SSL_has_pending(ssl_) == 0 &&
         SSL_is_init_finished(ssl_) == 1;
}

TlsSocketStream::Step TlsSocketStream::Read(void* data, size_t size) {
  if (size == 0) return {};
  // The usual case on a keep-alive connection (the next request has not come yet): straight
  // to the socket, without an SSL_read that can only ask for more.
  if (NothingToRead()) return {Next::kWaitRead, {}, 0};
  ERR_clear_error();
  errno = 0;
  size_t got = 0;
  const int result = SSL_read_ex(ssl_, data, size, &got);
  if (result == 1) return {Next::kDone, {}, got};
  return Failed(result);
}

TlsSocketStream::Step TlsSocketStream::Write(const void* data, size_t size) {
  if (size == 0) return {};
  ERR_clear_error();
  errno = 0;
  size_t sent = 0;
  const int result = SSL_write_ex(ssl_, data, size, &sent);
  if (result == 1) return {Next::kDone, {}, sent};
  return Failed(result);
}

}  // namespace infera::http_internal
