// The certificate files of a TlsConfig, loaded with OpenSSL as a handshake will use them,
// so that a bad file is a start-up error naming it (not a handshake failure later). Used
// by both TLS transports: the HTTP and metrics ports (tls_server_context) and gRPC
// (grpc_tls_credentials).
//
// Thread-safe (a free function).
#ifndef INFERA_SECURITY_TLS_FILES_H_
#define INFERA_SECURITY_TLS_FILES_H_

#include "absl/status/status.h"
#include "security/tls_config.h"

namespace infera {

// The certificate file holds at least one PEM certificate, the key file a PEM private key
// (an encrypted key is refused, never prompted for) that belongs to the first certificate,
// and the CA file (when set) at least one PEM certificate; client authentication needs a
// CA file. InvalidArgument naming the file and what is wrong.
absl::Status CheckTlsFiles(const TlsConfig& config);

}  // namespace infera

#endif  // INFERA_SECURITY_TLS_FILES_H_
