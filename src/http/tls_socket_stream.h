// TlsSocketStream: the server side of TLS over one connection's TCP socket, OpenSSL driven
// on the socket through a BIO of its own: records are sent with send() on the descriptor;
// records arrive through Asio's receive on the socket into a buffer the BIO serves from.
// docs/tls.md, "The record path", has the design.
//
// Why not boost::asio::ssl::stream: it runs OpenSSL over a memory BIO pair and copies every
// record between the pair and its own buffers, and it sets SSL_MODE_RELEASE_BUFFERS, which
// frees and reallocates OpenSSL's record buffers around every request. Why receive through
// Asio rather than recv() in the BIO and a readiness wait: Asio's receive is tried at once
// and queued on the reactor without a system call when nothing has arrived, where
// async_wait re-arms the descriptor with epoll_ctl on every wait (one more system call per
// request at load). So a request costs what plaintext costs in system calls (the receive
// that finds nothing, the epoll_wait, the receive, one send) plus the record's decryption
// and encryption.
//
// Operations follow Asio's AsyncReadStream / AsyncWriteStream rules: each completes through
// the socket's executor, never inside the call that starts it. At most one read and one
// write at a time (Beast's reads and the session's writes), plus one handshake or shutdown.
// Every operation waits on the socket, so tcp().cancel() and close() end a pending one with
// operation_aborted (the session's deadlines rely on this).
//
// Errors: end of stream (close_notify, or a peer that closes the TCP connection:
// SSL_OP_IGNORE_UNEXPECTED_EOF) is net::error::eof; a failed record or handshake is an
// error of Asio's SSL category (OpenSSL's reason); a system error is the errno.
//
// Not thread-safe: used on its connection's I/O thread only, like the Session that owns it.
#ifndef INFERA_HTTP_TLS_SOCKET_STREAM_H_
#define INFERA_HTTP_TLS_SOCKET_STREAM_H_

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>

namespace infera::http_internal {

using Executor = boost::asio::io_context::executor_type;
// Concrete executor type: no any_io_executor type erasure on the per-request path.
using Socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, Executor>;

class TlsSocketStream {
 public:
  using error_code = boost::system::error_code;
  using executor_type = Executor;

  // The largest plaintext of one TLS record: a gather write up to this size is sent as one
  // record.
  static constexpr size_t kMaxRecordPlaintext = 16384;

  // How much one receive from the socket asks for: a whole record of the largest size
  // (16 KiB of plaintext plus the header and the AEAD's expansion) fits.
  static constexpr size_t kInputBufferSize = 17 * 1024;

  // What the socket BIO keeps between calls (public for the BIO's functions).
  struct SocketBioState {
    int fd = -1;             // sends go straight to the descriptor
    bool end_of_stream = false;  // the socket's receive reported end of stream
    // Bytes received from the socket that OpenSSL has not read yet: input[begin, end).
    char* input = nullptr;
    size_t input_begin = 0;
    size_t input_end = 0;
  };

  // `socket` must outlive the stream; `context` is referenced by the SSL object (OpenSSL
  // counts it) for the stream's life.
  TlsSocketStream(Socket& socket, SSL_CTX* context);
  ~TlsSocketStream();
  TlsSocketStream(const TlsSocketStream&) = delete;
  TlsSocketStream& operator=(const TlsSocketStream&) = delete;

  executor_type get_executor() { return socket_.get_executor(); }

  template <class Handler>
  void async_handshake(Handler&& handler) {
    Start<void(error_code)>([this] { return Handshake(); }, std::forward<Handler>(handler));
  }
  // Sends close_notify and waits for the peer's (or its end of stream, or an error).
  template <class Handler>
  void async_shutdown(Handler&& handler) {
    Start<void(error_code)>([this] { return Shutdown(); }, std::forward<Handler>(handler));
  }
  // Reads into the first non-empty buffer of `buffers`.
  template <class MutableBuffers, class Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    boost::asio::mutable_buffer into;
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it) {
      into = *it;
      if (into.size() > 0) break;
    }
    Start<void(error_code, size_t)>([this, into] { return Read(into.data(), into.size()); },
                                    std::forward<Handler>(handler));
  }
  // Buffers that fit in one record go as one record (copied together); otherwise the first
  // buffer alone (the caller writes the rest next, as async_write does).
  template <class ConstBuffers, class Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    const boost::asio::const_buffer from = Gather(buffers);
    Start<void(error_code, size_t)>([this, from] { return Write(from.data(), from.size()); },
                                    std::forward<Handler>(handler));
  }

 private:
  enum class Next { kDone, kWaitRead, kWaitWrite };
  struct Step {
    Next next = Next::kDone;
    error_code error;
    size_t bytes = 0;
  };

  Step Handshake();
  Step Shutdown();
  Step Read(void* data, size_t size);
  Step Write(const void* data, size_t size);
  // The Step after an SSL call that returned `result` <= 0.
  Step Failed(int result);
  // Whether a read can make no progress without more bytes from the socket: nothing
  // received and not yet read, no record or plaintext buffered inside OpenSSL, the
  // handshake done, the end of stream not yet seen.
  bool NothingToRead() const;

  template <class ConstBuffers>
  boost::asio::const_buffer Gather(const ConstBuffers& buffers) {
    // Empty buffers are skipped: async_write's two-buffer form passes the first, used up,
    // as an empty one.
    boost::asio::const_buffer first;
    size_t non_empty = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::const_buffer buffer(*it);
      if (buffer.size() == 0) continue;
      if (non_empty++ == 0) first = buffer;
    }
    const size_t total = boost::asio::buffer_size(buffers);
    if (non_empty <= 1 || total > kMaxRecordPlaintext) return first;
    // Several buffers that fit one record: copied into one, so one record (and one send)
    // carries them. The copy stays put until the write completes (a write that must wait
    // is retried with the same bytes).
    if (!gather_) gather_ = std::make_unique<char[]>(kMaxRecordPlaintext);
    boost::asio::buffer_copy(boost::asio::buffer(gather_.get(), total), buffers);
    return {gather_.get(), total};
  }

  // Runs `step` until it is done, waiting on the socket whenever OpenSSL needs it to be
  // readable or writable. A step done at once completes through a post.
  template <class Signature, class StepFn, class Handler>
  void Start(StepFn step, Handler&& handler) {
    boost::asio::async_compose<Handler, Signature>(Op<StepFn, Signature>{this, std::move(step)}, handler, socket_);
  }

  // When OpenSSL wants to read, the op receives from the socket into the input buffer (the
  // BIO's) and calls the step again; when it wants to write, it waits for the socket to be
  // writable. Only one op fills the input buffer at a time: another that wants to read
  // meanwhile (a shutdown beside a read) waits for readability instead, and its step then
  // reads what the first one received.
  template <class StepFn, class Signature>
  struct Op {
    TlsSocketStream* stream;
    StepFn step;
    bool waited = false;
    bool filling = false;  // this op's receive into the input buffer is pending

    template <class Self>
    void operator()(Self& self, error_code wait_error = {}, size_t received = 0) {
      if (filling) {
        filling = false;
        stream->filling_ = false;
        if (wait_error == boost::asio::error::eof) {
          stream->bio_state_.end_of_stream = true;  // OpenSSL decides what the end means
          wait_error = {};
        } else if (wait_error && wait_error != boost::asio::error::operation_aborted) {
          stream->fatal_ = true;  // a broken connection: OpenSSL must send nothing more
        }
        stream->bio_state_.input_begin = 0;
        stream->bio_state_.input_end = received;
      }
      if (wait_error) return Complete(self, Step{Next::kDone, wait_error, 0});
      const Step result = step();
      // (OpenSSL wants to read only when the BIO has handed over all it received.)
      if (result.next == Next::kWaitRead && !stream->filling_) {
        waited = true;
        filling = true;
        stream->filling_ = true;
        return stream->socket_.async_read_some(
            boost::asio::buffer(stream->input_.get(), kInputBufferSize), std::move(self));
      }
      if (result.next != Next::kDone) {
        waited = true;
        return stream->socket_.async_wait(result.next == Next::kWaitRead ? Socket::wait_read : Socket::wait_write,
                                          std::move(self));
      }
      if (waited) return Complete(self, result);
      // Done inside the initiating call: the handler must not run there.
      boost::asio::post(stream->socket_.get_executor(), [self = std::move(self), result]() mutable {
        Op::Complete(self, result);
      });
    }

    template <class Self>
    static void Complete(Self& self, const Step& result) {
      if constexpr (std::is_same_v<Signature, void(error_code)>) {
        self.complete(result.error);
      } else {
        self.complete(result.error, result.bytes);
      }
    }
  };

  Socket& socket_;
  SSL* ssl_;
  SocketBioState bio_state_;  // the BIO's data (the stream is not movable)
  std::unique_ptr<char[]> input_;  // kInputBufferSize bytes: bio_state_.input
  bool filling_ = false;  // a receive into input_ is pending
  bool fatal_ = false;  // a record or system error: OpenSSL must send nothing more
  std::unique_ptr<char[]> gather_;  // kMaxRecordPlaintext bytes, made on the first gather write
};

}  // namespace infera::http_internal

#endif  // INFERA_HTTP_TLS_SOCKET_STREAM_H_
