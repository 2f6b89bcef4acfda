// RawClient: a blocking loopback HTTP/1.1 client for the HTTP server's tests: sends raw
// bytes, reads until a marker appears or the server closes (10 s receive timeout).
//
// Not thread-safe: one per test thread.
#ifndef INFERA_HTTP_RAW_TEST_CLIENT_H_
#define INFERA_HTTP_RAW_TEST_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace infera {

class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawClient() { Close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void Send(const std::string& data) {
    ASSERT_EQ(send(fd_, data.data(), data.size(), MSG_NOSIGNAL), static_cast<ssize_t>(data.size()));
  }
  // Reads until `until` has arrived, or the server closes, or 10 s pass without a byte.
  std::string ReadUntil(const std::string& until) {
    std::string out;
    char buf[4096];
    while (out.find(until) == std::string::npos) {
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // Waits (up to 10 s) for the server to close the connection; true when it did, with
  // nothing more sent (end-of-stream or a reset).
  bool ClosedByServer() {
    char byte;
    const ssize_t n = recv(fd_, &byte, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace infera

#endif  // INFERA_HTTP_RAW_TEST_CLIENT_H_
