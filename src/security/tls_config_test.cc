#include "security/tls_config.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace infera {
namespace {

class TlsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tls_config_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    for (const char* name : {"cert.pem", "key.pem", "ca.pem"}) std::ofstream(dir_ / name) << "pem";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string File(const char* name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST(TlsClientAuthTest, ParsesTheThreeModesAndNamesAWrongOne) {
  EXPECT_EQ(*ParseTlsClientAuth("none"), TlsClientAuth::kNone);
  EXPECT_EQ(*ParseTlsClientAuth("optional"), TlsClientAuth::kOptional);
  EXPECT_EQ(*ParseTlsClientAuth("require"), TlsClientAuth::kRequire);
  absl::StatusOr<TlsClientAuth> bad = ParseTlsClientAuth("required");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'required'"), std::string::npos);
  EXPECT_EQ(TlsClientAuthName(TlsClientAuth::kOptional), "optional");
}

TEST_F(TlsConfigTest, PlaintextIsValid) { EXPECT_TRUE(ValidateTlsConfig(TlsConfig{}, "--tls-").ok()); }

TEST_F(TlsConfigTest, CertificateAndKeyComeTogether) {
  absl::Status s = ValidateTlsConfig(TlsConfig{File("cert.pem"), "", "", TlsClientAuth::kNone}, "--tls-");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--tls-cert-file needs --tls-key-file"), std::string::npos) << s;
  s = ValidateTlsConfig(TlsConfig{"", File("key.pem"), "", TlsClientAuth::kNone}, "--grpc-");
  EXPECT_NE(s.message().find("--grpc-server-key needs --grpc-server-cert"), std::string::npos) << s;
  EXPECT_TRUE(ValidateTlsConfig(TlsConfig{File("cert.pem"), File("key.pem"), "", TlsClientAuth::kNone}, "--tls-").ok());
}

TEST_F(TlsConfigTest, ClientAuthenticationNeedsTlsAndACaFile) {
  absl::Status s = ValidateTlsConfig(TlsConfig{"", "", File("ca.pem"), TlsClientAuth::kRequire}, "--tls-");
  EXPECT_NE(s.message().find("client authentication needs TLS"), std::string::npos) << s;
  s = ValidateTlsConfig(TlsConfig{File("cert.pem"), File("key.pem"), "", TlsClientAuth::kRequire}, "--tls-");
  EXPECT_NE(s.message().find("'require' needs --tls-ca-file"), std::string::npos) << s;
  s = ValidateTlsConfig(TlsConfig{File("cert.pem"), File("key.pem"), File("ca.pem"), TlsClientAuth::kNone}, "--tls-");
  EXPECT_NE(s.message().find("--tls-ca-file is only read with client authentication"), std::string::npos) << s;
  // Triton accepts --grpc-root-cert without mutual TLS.
  EXPECT_TRUE(
      ValidateTlsConfig(TlsConfig{File("cert.pem"), File("key.pem"), File("ca.pem"), TlsClientAuth::kNone}, "--grpc-")
          .ok());
  EXPECT_TRUE(
      ValidateTlsConfig(TlsConfig{File("cert.pem"), File("key.pem"), File("ca.pem"), TlsClientAuth::kOptional}, "--tls-")
          .ok());
}

TEST_F(TlsConfigTest, NamesAMissingOrUnreadableFile) {
  absl::Status s =
      ValidateTlsConfig(TlsConfig{File("cert.pem"), File("absent.pem"), "", TlsClientAuth::kNone}, "--tls-");
  EXPECT_NE(s.message().find("--tls-key-file: cannot open '"), std::string::npos) << s;
  s = ValidateTlsConfig(TlsConfig{dir_.string(), File("key.pem"), "", TlsClientAuth::kNone}, "--tls-");
  EXPECT_NE(s.message().find("is not a regular file"), std::string::npos) << s;
}

}  // namespace
}  // namespace infera
