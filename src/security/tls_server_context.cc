// TlsServerContext: building the OpenSSL context from the files, and reloading it when
// they change. The header has the settings and the rotation rules.
#include "security/tls_server_context.h"

#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>

#include "common/logging.h"
#include "common/str_cat.h"
#include "security/tls_files.h"

namespace infera {
namespace {

namespace ssl = boost::asio::ssl;

// TLS 1.2: forward secrecy (ECDHE) and AEAD only.
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
// TLS 1.3: OpenSSL's three default suites, AES-128-GCM first (OpenSSL's own order puts
// AES-256 first; with the server's preference every client would get it): 10 AES rounds
// instead of 14 on every record, on both sides, measured at about 0.5 µs of server CPU
// and 0.7 µs of the client's per small request (docs/benchmarks.md, "TLS on the HTTP
// port"). Mozilla's "modern" configuration uses this order too.
constexpr char kTls13Suites[] = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

// Session resumption with client certificates needs a session id context.
constexpr unsigned char kSessionIdContext[] = "infera-http";

absl::Status FileError(std::string_view what, const std::string& file, const boost::system::error_code& ec) {
  ERR_clear_error();
  return absl::InvalidArgumentError(StrCat("TLS ", what, " '", file, "': ", ec.message()));
}

}  // namespace

absl::StatusOr<std::shared_ptr<TlsServerContext::SslContext>> TlsServerContext::Build(const TlsConfig& config) {
  // The files as the handshake will use them, with messages naming the file and the
  // problem (OpenSSL's own, below, say less: "key values mismatch").
  if (absl::Status files = CheckTlsFiles(config); !files.ok()) return files;
  auto context = std::make_shared<SslContext>(SslContext::tls_server);
  SSL_CTX* native = context->native_handle();
  context->set_options(SslContext::default_workarounds | SslContext::no_sslv2 | SslContext::no_sslv3 |
                       SslContext::no_tlsv1 | SslContext::no_tlsv1_1 | SslContext::no_compression |
                       SslContext::single_dh_use);
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  // A client that closes without close_notify reads as end-of-stream, not as an error.
  // The server's order, except that a client that puts ChaCha20 first (one without AES
  // instructions: ChaCha20 is faster there) gets it.
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA |
                                  SSL_OP_IGNORE_UNEXPECTED_EOF);
  if (SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    ERR_clear_error();
    return absl::InternalError("TLS: OpenSSL accepts none of the TLS 1.2 ciphers");
  }
  if (SSL_CTX_set_ciphersuites(native, kTls13Suites) != 1) {
    ERR_clear_error();
    return absl::InternalError("TLS: OpenSSL accepts none of the TLS 1.3 cipher suites");
  }
  SSL_CTX_set_session_id_context(native, kSessionIdContext, sizeof(kSessionIdContext) - 1);

  boost::system::error_code ec;
  context->use_certificate_chain_file(config.cert_file, ec);
  if (ec) return FileError("certificate (--tls-cert-file)", config.cert_file, ec);
  context->use_private_key_file(config.key_file, SslContext::pem, ec);
  if (ec) return FileError("private key (--tls-key-file)", config.key_file, ec);
  if (SSL_CTX_check_private_key(native) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(StrCat("TLS private key '", config.key_file,
                                             "' (--tls-key-file) does not match the certificate '",
                                             config.cert_file, "'"));
  }
  if (config.client_auth != TlsClientAuth::kNone) {
    context->load_verify_file(config.ca_file, ec);
    if (ec) return FileError("CA file (--tls-ca-file)", config.ca_file, ec);
    // Tells clients which CAs their certificate must chain to.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.ca_file.c_str());
    if (names == nullptr) {
      ERR_clear_error();
      return absl::InvalidArgumentError(
          StrCat("TLS CA file '", config.ca_file, "' (--tls-ca-file) holds no certificate"));
    }
    SSL_CTX_set_client_CA_list(native, names);
    ssl::verify_mode mode = ssl::verify_peer;
    if (config.client_auth == TlsClientAuth::kRequire) mode |= ssl::verify_fail_if_no_peer_cert;
    context->set_verify_mode(mode);
  } else {
    context->set_verify_mode(ssl::verify_none);
  }
  return context;
}

absl::StatusOr<std::unique_ptr<TlsServerContext>> TlsServerContext::Create(TlsConfig config,
                                                                          std::chrono::milliseconds check_interval) {
  // The files' state before the build: a change during it is seen by the next check.
  std::vector<FileState> files = StatFiles(config);
  auto built = Build(config);
  if (!built.ok()) return built.status();
  return std::unique_ptr<TlsServerContext>(
      new TlsServerContext(std::move(config), check_interval, std::move(*built), std::move(files)));
}

TlsServerContext::TlsServerContext(TlsConfig config, std::chrono::milliseconds check_interval,
                                   std::shared_ptr<SslContext> context, std::vector<FileState> files)
    : config_(std::move(config)),
      check_interval_(check_interval),
      current_(std::move(context)),
      seen_files_(std::move(files)),
      last_check_(Clock::now()) {}

// The files' SHA-256 (empty: unreadable). Contents, not mtimes: a file rewritten in place
// within the file system's timestamp granularity (milliseconds) at the same size is seen.
std::vector<TlsServerContext::FileState> TlsServerContext::StatFiles(const TlsConfig& config) {
  std::vector<FileState> states;
  for (const std::string* file : {&config.cert_file, &config.key_file, &config.ca_file}) {
    FileState state;
    std::ifstream in(*file, std::ios::binary);
    if (!file->empty() && in) {
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      unsigned char digest[SHA256_DIGEST_LENGTH];
      SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
      state.sha256.assign(reinterpret_cast<const char*>(digest), sizeof(digest));
      OPENSSL_cleanse(bytes.data(), bytes.size());
    }
    states.push_back(std::move(state));
  }
  return states;
}

std::shared_ptr<TlsServerContext::SslContext> TlsServerContext::Current(Clock::time_point now) {
  absl::MutexLock lock(&mu_);
  if (now - last_check_ < check_interval_) return current_;
  last_check_ = now;
  std::vector<FileState> files = StatFiles(config_);
  if (files == seen_files_) return current_;
  seen_files_ = std::move(files);
  auto built = Build(config_);
  if (!built.ok()) {
    ++failed_reloads_;
    INFERA_LOG(ERROR) << "TLS certificate files changed but cannot be used; still serving the previous ones: "
                      << built.status().message();
    return current_;
  }
  ++reloads_;
  current_ = std::move(*built);
  INFERA_LOG(INFO) << "TLS certificate reloaded from " << config_.cert_file;
  return current_;
}

uint64_t TlsServerContext::reloads() const {
  absl::MutexLock lock(&mu_);
  return reloads_;
}

uint64_t TlsServerContext::failed_reloads() const {
  absl::MutexLock lock(&mu_);
  return failed_reloads_;
}

}  // namespace infera
