#include "security/tls_files.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "security/test_certificates.h"

namespace infera {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Certificates written as PEM files in a fresh directory (security/test_certificates.h).
class TlsFilesTest : public ::testing::Test {
 protected:
  // Writes <name>.key and <name>.pem; returns the common path stem.
  std::string MakeSelfSigned(const std::string& name, const char* passphrase = nullptr) {
    test::KeyPair pair = test::WriteSelfSigned(dir_, name, "", passphrase);
    return pair.cert_file.substr(0, pair.cert_file.size() - 4);
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_.File(name);
    std::ofstream(path) << text;
    return path;
  }

  test::TempDir dir_;
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
  const std::string missing = dir_.File("missing.pem");
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
