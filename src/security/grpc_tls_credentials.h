// The gRPC port's TLS credentials (docs/grpc.md, "TLS and mutual TLS"): the certificate
// files of a TlsConfig checked with OpenSSL at start, then gRPC's TlsServerCredentials over
// a FileWatcherCertificateProvider that re-reads them every kGrpcTlsRefreshSeconds, so a
// rotated certificate (cert-manager) is served to new connections without a restart.
//
// Thread-safe (free functions; the credentials gRPC returns are immutable and shared).
#ifndef INFERA_SECURITY_GRPC_TLS_CREDENTIALS_H_
#define INFERA_SECURITY_GRPC_TLS_CREDENTIALS_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "security/tls_config.h"

namespace grpc {
class ServerCredentials;
}  // namespace grpc

namespace infera {

// How often gRPC's watcher re-reads the certificate, key and CA files.
inline constexpr unsigned kGrpcTlsRefreshSeconds = 5;

// Loads the files of an enabled `config` as the handshake will: the certificate file holds
// at least one PEM certificate, the key file a PEM private key (an encrypted key is
// refused, never prompted for) that belongs to the first certificate, and the CA file (when
// set) at least one PEM certificate. InvalidArgument naming the file and what is wrong.
absl::Status CheckGrpcTlsFiles(const TlsConfig& config);

// CheckGrpcTlsFiles, then the credentials: TLS with the certificate and key (re-read every
// kGrpcTlsRefreshSeconds), and client certificates asked for and verified against the
// CA file per config.client_auth (none: not asked; optional: asked, verified when sent;
// require: asked, required, verified). gRPC's minimum protocol version is TLS 1.2.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeGrpcServerTlsCredentials(
    const TlsConfig& config);

}  // namespace infera

#endif  // INFERA_SECURITY_GRPC_TLS_CREDENTIALS_H_
