#include "http/tls_socket_stream.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "security/tls_server_context.h"
#include "security/test_certificates.h"

namespace infera::http_internal {
namespace {

namespace net = boost::asio;
using error_code = boost::system::error_code;
using tcp = net::ip::tcp;

// A blocking OpenSSL client on its own descriptor (the peer the server stream talks to).
class BlockingTlsClient {
 public:
  explicit BlockingTlsClient(int fd) : fd_(fd), context_(SSL_CTX_new(TLS_client_method())) {
    ssl_ = SSL_new(context_);
    SSL_set_fd(ssl_, fd_);
  }
  ~BlockingTlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(context_);
    if (fd_ >= 0) ::close(fd_);
  }
  bool Handshake() { return SSL_connect(ssl_) == 1; }
  void Write(const std::string& data) { ASSERT_EQ(SSL_write(ssl_, data.data(), static_cast<int>(data.size())), static_cast<int>(data.size())); }
  std::string ReadExactly(size_t size) {
    std::string out(size, '\0');
    size_t got = 0;
    while (got < size) {
      const int n = SSL_read(ssl_, out.data() + got, static_cast<int>(size - got));
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    out.resize(got);
    return out;
  }
  // Answers the server's close_notify with its own.
  int AnswerShutdown() {
    char byte;
    SSL_read(ssl_, &byte, 1);  // returns 0 at the server's close_notify
    return SSL_shutdown(ssl_);
  }
  // Ends the TCP stream without close_notify (unread session tickets would make a close()
  // a reset).
  void EndTcpStream() { ::shutdown(fd_, SHUT_WR); }
  int fd() const { return fd_; }
  // Before the handshake: the TLS 1.3 suites offered, in the client's order of preference.
  void OfferSuites(const char* suites) { ASSERT_EQ(SSL_set_ciphersuites(ssl_, suites), 1); }
  std::string NegotiatedSuite() const { return SSL_CIPHER_get_name(SSL_get_current_cipher(ssl_)); }

 private:
  int fd_;
  SSL_CTX* context_;
  SSL* ssl_;
};

class TlsSocketStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::KeyPair pair = test::WriteSelfSigned(dir_, "server", "127.0.0.1");
    auto context = TlsServerContext::Build(TlsConfig{pair.cert_file, pair.key_file, "", TlsClientAuth::kNone});
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = *context;
    tcp::acceptor acceptor(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    const int client_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const tcp::endpoint at = acceptor.local_endpoint();
    sockaddr_in address = *reinterpret_cast<const sockaddr_in*>(at.data());
    ASSERT_EQ(::connect(client_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socket_.emplace(io_.get_executor());
    acceptor.accept(*socket_);
    stream_ = std::make_unique<TlsSocketStream>(*socket_, context_->native_handle());
    client_ = std::make_unique<BlockingTlsClient>(client_fd);
  }

  // Runs the handshake: the client on a thread, the server stream on the io_context.
  void Handshake() {
    bool client_ok = false;
    std::thread client([&] { client_ok = client_->Handshake(); });
    error_code server_error = net::error::would_block;
    stream_->async_handshake([&](error_code ec) { server_error = ec; });
    io_.run();
    io_.restart();
    client.join();
    ASSERT_FALSE(server_error) << server_error.message();
    ASSERT_TRUE(client_ok);
  }

  test::TempDir dir_;
  net::io_context io_;
  std::shared_ptr<TlsServerContext::SslContext> context_;
  std::optional<Socket> socket_;
  std::unique_ptr<TlsSocketStream> stream_;
  std::unique_ptr<BlockingTlsClient> client_;
};

TEST_F(TlsSocketStreamTest, ReadsWhatTheClientSendsAndNeverCompletesInsideTheCall) {
  Handshake();
  client_->Write("GET / HTTP/1.1\r\n\r\n");
  char into[64];
  size_t got = 0;
  error_code read_error = net::error::would_block;
  bool completed = false;
  stream_->async_read_some(net::buffer(into), [&](error_code ec, size_t n) {
    completed = true;
    read_error = ec;
    got = n;
  });
  EXPECT_FALSE(completed);  // even when the record is already there
  io_.run();
  ASSERT_FALSE(read_error) << read_error.message();
  EXPECT_EQ(std::string(into, got), "GET / HTTP/1.1\r\n\r\n");
}

// Records larger than one receive from the socket (3 records of up to 16 KiB, received
// in pieces of at most kInputBufferSize bytes) come out whole and in order.
TEST_F(TlsSocketStreamTest, ReadsALargeUploadAcrossManyReceives) {
  Handshake();
  std::string upload(40000, '\0');
  for (size_t i = 0; i < upload.size(); ++i) upload[i] = static_cast<char>('a' + i % 26);
  std::thread client([&] { client_->Write(upload); });
  std::string received;
  std::array<char, 5000> into;  // less than a record: reads also end inside records
  std::function<void()> read_more = [&] {
    stream_->async_read_some(net::buffer(into), [&](error_code ec, size_t n) {
      ASSERT_FALSE(ec) << ec.message();
      received.append(into.data(), n);
      if (received.size() < upload.size()) read_more();
    });
  };
  read_more();
  io_.run();
  client.join();
  EXPECT_EQ(received, upload);
}

// The keep-alive pattern: request, answer, request... each read waits on the socket again.
TEST_F(TlsSocketStreamTest, ManyExchangesOnOneConnection) {
  Handshake();
  for (int i = 0; i < 50; ++i) {
    const std::string request = "request " + std::to_string(i);
    const std::string answer = "answer " + std::to_string(i);
    std::string echoed;
    std::thread client([&] {
      client_->Write(request);
      echoed = client_->ReadExactly(answer.size());
    });
    char into[64];
    error_code read_error, write_error;
    size_t got = 0;
    stream_->async_read_some(net::buffer(into), [&](error_code ec, size_t n) {
      read_error = ec;
      got = n;
      if (!ec) net::async_write(*stream_, net::buffer(answer), [&](error_code ec2, size_t) { write_error = ec2; });
    });
    io_.run();
    io_.restart();
    client.join();
    ASSERT_FALSE(read_error) << read_error.message();
    ASSERT_FALSE(write_error) << write_error.message();
    ASSERT_EQ(std::string(into, got), request);
    ASSERT_EQ(echoed, answer);
  }
}

// TLS 1.3 with the server's preference: AES-128-GCM for a client with OpenSSL's default
// order (AES-256 first); ChaCha20 for a client that puts it first.
TEST_F(TlsSocketStreamTest, NegotiatesAes128GcmUnlessTheClientPrefersChaCha20) {
  client_->OfferSuites("TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256");
  Handshake();
  EXPECT_EQ(client_->NegotiatedSuite(), "TLS_AES_128_GCM_SHA256");
}

TEST_F(TlsSocketStreamTest, NegotiatesChaCha20ForAClientThatPutsItFirst) {
  client_->OfferSuites("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256");
  Handshake();
  EXPECT_EQ(client_->NegotiatedSuite(), "TLS_CHACHA20_POLY1305_SHA256");
}

TEST_F(TlsSocketStreamTest, GatherWritesArriveWholeSmallAndLarge) {
  Handshake();
  const std::string head = "HTTP/1.1 200 OK\r\n\r\n";
  const std::string small_body = "{\"ok\":true}";
  const std::string large_body(40000, 'x');  // more than one record: written in parts
  const std::array<net::const_buffer, 2> small = {net::buffer(head), net::buffer(small_body)};
  const std::array<net::const_buffer, 2> large = {net::buffer(head), net::buffer(large_body)};
  std::string received;
  std::thread client([&] { received = client_->ReadExactly(head.size() * 2 + small_body.size() + large_body.size()); });
  error_code first, second;
  net::async_write(*stream_, small, [&](error_code ec, size_t) {
    first = ec;
    net::async_write(*stream_, large, [&](error_code ec2, size_t) { second = ec2; });
  });
  io_.run();
  client.join();
  EXPECT_FALSE(first);
  EXPECT_FALSE(second);
  EXPECT_EQ(received, head + small_body + head + large_body);
}

TEST_F(TlsSocketStreamTest, ClientThatClosesTheConnectionIsEndOfStream) {
  Handshake();
  client_->EndTcpStream();
  char into[16];
  error_code read_error;
  stream_->async_read_some(net::buffer(into), [&](error_code ec, size_t) { read_error = ec; });
  io_.run();
  EXPECT_EQ(read_error, net::error::eof) << read_error.message();
}

TEST_F(TlsSocketStreamTest, PlaintextInsteadOfAClientHelloFailsTheHandshake) {
  const std::string not_tls = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(client_->fd(), not_tls.data(), not_tls.size(), 0), static_cast<ssize_t>(not_tls.size()));
  error_code handshake_error;
  stream_->async_handshake([&](error_code ec) { handshake_error = ec; });
  io_.run();
  ASSERT_TRUE(handshake_error);
  EXPECT_EQ(handshake_error.category(), net::error::get_ssl_category()) << handshake_error.message();
  // After a fatal error the stream sends nothing more: shutdown ends at once.
  io_.restart();
  error_code shutdown_error;
  stream_->async_shutdown([&](error_code ec) { shutdown_error = ec; });
  io_.run();
  EXPECT_EQ(shutdown_error, net::ssl::error::stream_truncated);
}

TEST_F(TlsSocketStreamTest, CancellingThePendingReadAbortsIt) {
  Handshake();
  char into[16];
  error_code read_error;
  stream_->async_read_some(net::buffer(into), [&](error_code ec, size_t) { read_error = ec; });
  io_.poll();  // the read now waits on the socket
  socket_->cancel();
  io_.run();
  EXPECT_EQ(read_error, net::error::operation_aborted);
}

TEST_F(TlsSocketStreamTest, ShutdownExchangesCloseNotify) {
  Handshake();
  int client_result = -1;
  std::thread client([&] { client_result = client_->AnswerShutdown(); });
  error_code shutdown_error = net::error::would_block;
  stream_->async_shutdown([&](error_code ec) { shutdown_error = ec; });
  io_.run();
  client.join();
  EXPECT_FALSE(shutdown_error) << shutdown_error.message();
  EXPECT_EQ(client_result, 1);
}

}  // namespace
}  // namespace infera::http_internal
