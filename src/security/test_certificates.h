// Test helpers (header-only, tests only): a temporary directory and self-signed P-256
// certificates written as PEM files, made in-process with OpenSSL, for the TLS unit tests
// (tls_files_test, tls_server_context_test).
//
// Not thread-safe (test fixtures).
#ifndef INFERA_SECURITY_TEST_CERTIFICATES_H_
#define INFERA_SECURITY_TEST_CERTIFICATES_H_

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace infera::test {

// A directory under /tmp, removed with everything in it at destruction.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/infera_tls_test.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct KeyPair {
  std::string cert_file;  // <dir>/<name>.pem
  std::string key_file;   // <dir>/<name>.key
};

// A P-256 key and a self-signed certificate for it (valid for an hour, common name
// `common_name`, or `name` when empty), written as <name>.pem and <name>.key; the key
// encrypted with `passphrase` when one is given.
inline KeyPair WriteSelfSigned(const TempDir& dir, const std::string& name, const std::string& common_name = "",
                               const char* passphrase = nullptr) {
  const std::string cn = common_name.empty() ? name : common_name;
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* subject = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert, subject);
  X509_sign(cert, key, EVP_sha256());
  KeyPair pair{dir.File(name + ".pem"), dir.File(name + ".key")};
  FILE* out = std::fopen(pair.cert_file.c_str(), "w");
  PEM_write_X509(out, cert);
  std::fclose(out);
  out = std::fopen(pair.key_file.c_str(), "w");
  if (passphrase != nullptr) {
    PEM_write_PrivateKey(out, key, EVP_aes_128_cbc(), nullptr, 0, nullptr, const_cast<char*>(passphrase));
  } else {
    PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  }
  std::fclose(out);
  X509_free(cert);
  EVP_PKEY_free(key);
  return pair;
}

}  // namespace infera::test

#endif  // INFERA_SECURITY_TEST_CERTIFICATES_H_
