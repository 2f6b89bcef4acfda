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

// CheckTlsFiles (security/tls_files.h), then the credentials: TLS with the certificate and key (re-read every
// kGrpcTlsRefreshSeconds), and client certificates asked for and verified against the
// CA file per config.client_auth (none: not asked; optional: asked, verified when sent;
// require: asked, required, verified). gRPC's minimum protocol version is TLS 1.2.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeGrpcServerTlsCredentials(
    const TlsConfig& config);

}  // namespace infera

#endif  // INFERA_SECURITY_GRPC_TLS_CREDENTIALS_H_
