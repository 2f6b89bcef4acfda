// TlsServerContext: the OpenSSL server context of one listening port (HTTP, metrics),
// built from a TlsConfig and rebuilt when its files change on disk (certificate rotation
// without a restart). docs/tls.md has the design.
//
// Settings: TLS 1.2 minimum; for TLS 1.2 only ECDHE key exchange with AEAD ciphers (AES-GCM,
// ChaCha20-Poly1305), OpenSSL's three TLS 1.3 suites with AES-128-GCM first; no compression,
// no renegotiation, the server's cipher order (ChaCha20 for a client that lists it first).
// Client auth (TlsConfig::client_auth): optional verifies a certificate that is sent;
// require fails the handshake of a client without one chaining to ca_file.
//
// Rotation: Current() re-reads the files (their SHA-256) at most once per
// `check_interval`; when any changed it builds a new context. New connections get the new
// one, connections that hold the old one keep it (shared ownership). A replacement that
// does not build (unreadable, key not matching the certificate, a half-written file) keeps
// the previous context and logs one ERROR per distinct state of the files.
//
// Thread-safe: Current() from any thread (an absl::Mutex guards the state; the files are
// read under it, at most once per interval). A context is shared by many connections on
// many threads; each connection's SSL object stays on its own thread.
#ifndef INFERA_SECURITY_TLS_SERVER_CONTEXT_H_
#define INFERA_SECURITY_TLS_SERVER_CONTEXT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/ssl/context.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "security/tls_config.h"

namespace infera {

class TlsServerContext {
 public:
  using Clock = std::chrono::steady_clock;
  using SslContext = boost::asio::ssl::context;

  // Builds the first context. InvalidArgument naming the file that cannot be read or does
  // not fit (a key that is not the certificate's).
  static absl::StatusOr<std::unique_ptr<TlsServerContext>> Create(
      TlsConfig config, std::chrono::milliseconds check_interval = std::chrono::seconds(1));

  // One build of `config`'s files into a fresh context (no reload state): Create uses it,
  // and so does every reload.
  static absl::StatusOr<std::shared_ptr<SslContext>> Build(const TlsConfig& config);

  // The context for a new connection; re-checks the files first when the last check is
  // `check_interval` old (at `now`).
  std::shared_ptr<SslContext> Current(Clock::time_point now = Clock::now()) ABSL_LOCKS_EXCLUDED(mu_);

  // Contexts built after start (successful reloads), and reloads refused.
  uint64_t reloads() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t failed_reloads() const ABSL_LOCKS_EXCLUDED(mu_);

  const TlsConfig& config() const { return config_; }

  // A file's contents as last read: their SHA-256 (empty when unreadable).
  struct FileState {
    std::string sha256;
    bool operator==(const FileState& o) const { return sha256 == o.sha256; }
  };

 private:
  TlsServerContext(TlsConfig config, std::chrono::milliseconds check_interval, std::shared_ptr<SslContext> context,
                   std::vector<FileState> files);
  static std::vector<FileState> StatFiles(const TlsConfig& config);

  const TlsConfig config_;
  const std::chrono::milliseconds check_interval_;
  mutable absl::Mutex mu_;
  std::shared_ptr<SslContext> current_ ABSL_GUARDED_BY(mu_);
  // The files as last seen (built or refused): a reload is tried only when they change.
  std::vector<FileState> seen_files_ ABSL_GUARDED_BY(mu_);
  Clock::time_point last_check_ ABSL_GUARDED_BY(mu_);
  uint64_t reloads_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failed_reloads_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace infera

#endif  // INFERA_SECURITY_TLS_SERVER_CONTEXT_H_
