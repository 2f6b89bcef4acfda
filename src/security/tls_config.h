// TlsConfig: the certificate files one listening port serves TLS with, and whether (and
// how) it asks clients for a certificate (mutual TLS). Shared by the HTTP, metrics and
// gRPC ports (docs/tls.md); each transport turns it into its own TLS context and reloads
// the files when they change on disk (cert-manager rotates them in place).
//
// Thread-safe (a value type).
#ifndef INFERA_SECURITY_TLS_CONFIG_H_
#define INFERA_SECURITY_TLS_CONFIG_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace infera {

// --tls-client-auth: none (no client certificate asked for), optional (asked for and
// verified against --tls-ca-file when sent; a client without one is served), require (a
// client without a certificate verified against --tls-ca-file is refused in the handshake).
enum class TlsClientAuth { kNone, kOptional, kRequire };

absl::StatusOr<TlsClientAuth> ParseTlsClientAuth(std::string_view text);
std::string_view TlsClientAuthName(TlsClientAuth mode);

struct TlsConfig {
  std::string cert_file;  // PEM: the server's certificate chain, leaf first
  std::string key_file;   // PEM: its private key
  std::string ca_file;    // PEM: the CAs client certificates must chain to (mutual TLS)
  TlsClientAuth client_auth = TlsClientAuth::kNone;

  // TLS is on when a certificate is configured.
  bool enabled() const { return !cert_file.empty(); }
};

// The checks made at start, before any port is opened: a certificate needs its key (and
// the reverse); client authentication needs a CA file (and a CA file needs client
// authentication other than none, or it would silently check nothing — except for Triton's
// --grpc-root-cert, which Triton accepts without mutual TLS); every named file
// is a readable regular file. InvalidArgument naming the flag and the file. `flag_prefix`
// names the flags in messages ("--tls-" or Triton's "--grpc-").
absl::Status ValidateTlsConfig(const TlsConfig& config, std::string_view flag_prefix);

}  // namespace infera

#endif  // INFERA_SECURITY_TLS_CONFIG_H_
