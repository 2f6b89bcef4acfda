#include "security/tls_files.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A self-signed P-256 certificate and its key, written as PEM files in a fresh directory.
class TlsFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/tls_files_test_XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Writes <name>.key and <name>.pem; returns the common path stem.
  std::string MakeSelfSigned(const std::string& name, const char* passphrase = nullptr) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    X509_sign(cert, key, EVP_sha256());
    const std::string stem = dir_ + "/" + name;
    FILE* cert_out = fopen((stem + ".pem").c_str(), "w");
    PEM_write_X509(cert_out, cert);
    fclose(cert_out);
    FILE* key_out = fopen((stem + ".key").c_str(), "w");
    if (passphrase != nullptr) {
      PEM_write_PrivateKey(key_out, key, EVP_aes_128_cbc(), nullptr, 0, nullptr,
                           const_cast<char*>(passphrase));
    } else {
      PEM_write_PrivateKey(key_out, key, nullptr, nullptr, 0, nullptr, nullptr);
    }
    fclose(key_out);
    X509_free(cert);
    EVP_PKEY_free(key);
    return stem;
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(TlsFilesTest, AcceptsAMatchingPairAndCa) {
  const std::string server = MakeSelfSigned("server");
  const std::string ca = MakeSelfSigned("ca");
  TlsConfig config{server + ".pem", server + ".key", ca + ".pem", TlsClientAuth::kRequire};
  EXPECT_TRUE(CheckTlsFiles(config).ok()) << CheckTlsFiles(config);
}

TEST_F(TlsFilesTest, RefusesAKeyOfAnotherCertificateNamingBothFiles) {
  const std::string server = MakeSelfSigned("server");
  const std::string other = MakeSelfSigned("other");
  TlsConfig config{server + ".pem", other + ".key", "", TlsClientAuth::kNone};
  absl::Status status = CheckTlsFiles(config);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr(other + ".key"), HasSubstr(server + ".pem"),
                                      HasSubstr("does not belong")));
}

TEST_F(TlsFilesTest, RefusesACertificateFileWithoutACertificate) {
  const std::string server = MakeSelfSigned("server");
  const std::string garbage = WriteFile("garbage.pem", "not a certificate\n");
  absl::Status status = CheckTlsFiles({garbage, server + ".key", "", TlsClientAuth::kNone});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr(garbage), HasSubstr("no PEM certificate")));
  // A key given as the certificate is no certificate either.
  status = CheckTlsFiles({server + ".key", server + ".key", "", TlsClientAuth::kNone});
  EXPECT_THAT(status.message(), HasSubstr("no PEM certificate"));
}

TEST_F(TlsFilesTest, RefusesAMissingFileNamingIt) {
  const std::string server = MakeSelfSigned("server");
  const std::string missing = dir_ + "/missing.pem";
  EXPECT_THAT(CheckTlsFiles({missing, server + ".key", "", TlsClientAuth::kNone}).message(),
              AllOf(HasSubstr("cannot read the certificate file"), HasSubstr(missing)));
  EXPECT_THAT(CheckTlsFiles({server + ".pem", missing, "", TlsClientAuth::kNone}).message(),
              AllOf(HasSubstr("cannot read the private key file"), HasSubstr(missing)));
  EXPECT_THAT(CheckTlsFiles({server + ".pem", server + ".key", missing, TlsClientAuth::kRequire}).message(),
              AllOf(HasSubstr("cannot read the CA file"), HasSubstr(missing)));
}

TEST_F(TlsFilesTest, RefusesAnEncryptedKeyWithoutPrompting) {
  const std::string server = MakeSelfSigned("server", "secret");
  absl::Status status = CheckTlsFiles({server + ".pem", server + ".key", "", TlsClientAuth::kNone});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr(server + ".key"), HasSubstr("unencrypted")));
}

TEST_F(TlsFilesTest, RefusesACaFileWithoutACertificate) {
  const std::string server = MakeSelfSigned("server");
  const std::string garbage = WriteFile("ca.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  absl::Status status = CheckTlsFiles({server + ".pem", server + ".key", garbage, TlsClientAuth::kOptional});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("CA file"), HasSubstr(garbage)));
}

TEST_F(TlsFilesTest, ClientAuthNeedsACaFile) {
  const std::string server = MakeSelfSigned("server");
  EXPECT_THAT(CheckTlsFiles({server + ".pem", server + ".key", "", TlsClientAuth::kRequire}).message(),
              HasSubstr("needs a CA file"));
}

}  // namespace
}  // namespace infera
