#include "security/grpc_tls_credentials.h"

#include <string>

#include "common/str_cat.h"
#include "security/tls_files.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace infera {
namespace {

grpc_ssl_client_certificate_request_type RequestType(TlsClientAuth mode) {
  switch (mode) {
    case TlsClientAuth::kNone:
      return GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    case TlsClientAuth::kOptional:
      return GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
    case TlsClientAuth::kRequire:
      return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeGrpcServerTlsCredentials(
    const TlsConfig& config) {
  if (absl::Status s = CheckTlsFiles(config); !s.ok()) return s;
  // The provider reads the files once here, then every kGrpcTlsRefreshSeconds on a thread
  // of its own; the credentials hold it for the server's life.
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      config.key_file, config.cert_file, config.ca_file, kGrpcTlsRefreshSeconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (!config.ca_file.empty()) options.watch_root_certs();
  options.set_cert_request_type(RequestType(config.client_auth));
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::experimental::TlsServerCredentials(options);
  if (credentials == nullptr) {
    return absl::InternalError(StrCat("gRPC TLS: gRPC refused the credentials for ", config.cert_file));
  }
  return credentials;
}

}  // namespace infera
