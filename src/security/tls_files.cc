#include "security/tls_files.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/str_cat.h"

namespace infera {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// OpenSSL's reason for the last failure (and the error queue cleared), for messages.
std::string OpenSslReason() {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data";
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : StrCat("OpenSSL error ", code);
}

// Refuses to prompt for a passphrase: an encrypted key fails to load.
int NoPassphrase(char*, int, int, void*) { return -1; }

absl::StatusOr<BioPtr> OpenFile(const std::string& path, std::string_view what) {
  BioPtr bio(BIO_new_file(path.c_str(), "r"));
  if (bio == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError(StrCat("TLS: cannot read the ", what, " file ", path));
  }
  return bio;
}

// The first PEM certificate in `path`.
absl::StatusOr<X509Ptr> LoadFirstCertificate(const std::string& path, std::string_view what) {
  absl::StatusOr<BioPtr> bio = OpenFile(path, what);
  if (!bio.ok()) return bio.status();
  X509Ptr cert(PEM_read_bio_X509(bio->get(), nullptr, NoPassphrase, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(StrCat("TLS: the ", what, " file ", path,
                                             " holds no PEM certificate (", OpenSslReason(), ")"));
  }
  return cert;
}

absl::Status CheckKeyMatches(const std::string& key_file, const std::string& cert_file, X509* cert) {
  absl::StatusOr<BioPtr> bio = OpenFile(key_file, "private key");
  if (!bio.ok()) return bio.status();
  PkeyPtr key(PEM_read_bio_PrivateKey(bio->get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("TLS: the private key file ", key_file,
               " holds no unencrypted PEM private key (", OpenSslReason(), ")"));
  }
  if (X509_check_private_key(cert, key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(StrCat("TLS: the private key in ", key_file,
                                             " does not belong to the certificate in ", cert_file));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckTlsFiles(const TlsConfig& config) {
  if (!config.enabled()) return absl::InvalidArgumentError("TLS: no certificate file configured");
  if (config.key_file.empty()) {
    return absl::InvalidArgumentError(StrCat("TLS: the certificate ", config.cert_file, " needs a private key file"));
  }
  absl::StatusOr<X509Ptr> cert = LoadFirstCertificate(config.cert_file, "certificate");
  if (!cert.ok()) return cert.status();
  if (absl::Status s = CheckKeyMatches(config.key_file, config.cert_file, cert->get()); !s.ok()) return s;
  if (!config.ca_file.empty()) {
    absl::StatusOr<X509Ptr> ca = LoadFirstCertificate(config.ca_file, "CA");
    if (!ca.ok()) return ca.status();
  }
  if (config.client_auth != TlsClientAuth::kNone && config.ca_file.empty()) {
    return absl::InvalidArgumentError(StrCat("TLS: client authentication ",
                                             TlsClientAuthName(config.client_auth), " needs a CA file"));
  }
  return absl::OkStatus();
}

}  // namespace infera
