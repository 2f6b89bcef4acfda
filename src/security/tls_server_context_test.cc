#include "security/tls_server_context.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "security/test_certificates.h"

namespace infera {
namespace {

using std::chrono::seconds;

using test::KeyPair;
using test::TempDir;
using test::WriteSelfSigned;

void CopyFile(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

// The common name of the certificate a context serves.
std::string ServedName(const std::shared_ptr<TlsServerContext::SslContext>& context) {
  X509* cert = SSL_CTX_get0_certificate(context->native_handle());
  if (cert == nullptr) return "";
  char name[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, name, sizeof(name));
  return name;
}

TEST(TlsServerContextTest, BuildsFromMatchingFiles) {
  TempDir dir;
  KeyPair pair = WriteSelfSigned(dir, "server", "first");
  auto context = TlsServerContext::Create(TlsConfig{pair.cert_file, pair.key_file, "", TlsClientAuth::kNone});
  ASSERT_TRUE(context.ok()) << context.status();
  EXPECT_EQ(ServedName((*context)->Current()), "first");
  EXPECT_EQ(SSL_CTX_get_min_proto_version((*context)->Current()->native_handle()), TLS1_2_VERSION);
  EXPECT_TRUE(SSL_CTX_get_options((*context)->Current()->native_handle()) & SSL_OP_NO_RENEGOTIATION);
  EXPECT_TRUE(SSL_CTX_get_options((*context)->Current()->native_handle()) & SSL_OP_NO_COMPRESSION);
}

TEST(TlsServerContextTest, MissingCertificateNamesTheFile) {
  TempDir dir;
  KeyPair pair = WriteSelfSigned(dir, "server", "first");
  auto context = TlsServerContext::Create(TlsConfig{dir.File("absent.pem"), pair.key_file, "", TlsClientAuth::kNone});
  ASSERT_FALSE(context.ok());
  EXPECT_NE(context.status().message().find(dir.File("absent.pem")), std::string::npos) << context.status();
}

TEST(TlsServerContextTest, GarbageKeyNamesTheFile) {
  TempDir dir;
  KeyPair pair = WriteSelfSigned(dir, "server", "first");
  FILE* f = fopen(pair.key_file.c_str(), "w");
  fputs("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n", f);
  fclose(f);
  auto context = TlsServerContext::Create(TlsConfig{pair.cert_file, pair.key_file, "", TlsClientAuth::kNone});
  ASSERT_FALSE(context.ok());
  EXPECT_NE(context.status().message().find(pair.key_file), std::string::npos) << context.status();
}

TEST(TlsServerContextTest, KeyOfAnotherCertificateIsRefused) {
  TempDir dir;
  KeyPair first = WriteSelfSigned(dir, "first", "first");
  KeyPair second = WriteSelfSigned(dir, "second", "second");
  auto context = TlsServerContext::Create(TlsConfig{first.cert_file, second.key_file, "", TlsClientAuth::kNone});
  ASSERT_FALSE(context.ok());
  EXPECT_NE(context.status().message().find("does not belong to the certificate"), std::string::npos) << context.status();
  EXPECT_NE(context.status().message().find(second.key_file), std::string::npos) << context.status();
}

TEST(TlsServerContextTest, ClientAuthModesSetTheVerifyMode) {
  TempDir dir;
  KeyPair server = WriteSelfSigned(dir, "server", "server");
  KeyPair ca = WriteSelfSigned(dir, "ca", "ca");
  auto required = TlsServerContext::Create(TlsConfig{server.cert_file, server.key_file, ca.cert_file,
                                                     TlsClientAuth::kRequire});
  ASSERT_TRUE(required.ok()) << required.status();
  EXPECT_EQ(SSL_CTX_get_verify_mode((*required)->Current()->native_handle()),
            SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
  auto optional = TlsServerContext::Create(TlsConfig{server.cert_file, server.key_file, ca.cert_file,
                                                     TlsClientAuth::kOptional});
  ASSERT_TRUE(optional.ok()) << optional.status();
  EXPECT_EQ(SSL_CTX_get_verify_mode((*optional)->Current()->native_handle()), SSL_VERIFY_PEER);
  auto bad_ca = TlsServerContext::Create(TlsConfig{server.cert_file, server.key_file, server.key_file,
                                                   TlsClientAuth::kRequire});
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_NE(bad_ca.status().message().find("the CA file " + server.key_file), std::string::npos) << bad_ca.status();
}

// Rotation: the files are re-read at most once per interval; a change builds a new context
// that new callers get, while a holder of the old one keeps it.
// Two certificates ("first", "second") and the files a context serves ("live"), holding a
// copy of the first until a test overwrites them.
struct RotationFiles {
  RotationFiles() {
    CopyFile(first.cert_file, live.cert_file);
    CopyFile(first.key_file, live.key_file);
  }
  TlsConfig Config() const { return TlsConfig{live.cert_file, live.key_file, "", TlsClientAuth::kNone}; }
  TempDir dir;
  KeyPair first = WriteSelfSigned(dir, "first");
  KeyPair second = WriteSelfSigned(dir, "second");
  KeyPair live{dir.File("live.pem"), dir.File("live.key")};
};

TEST(TlsServerContextTest, ReloadsChangedFilesAtMostOncePerInterval) {
  RotationFiles files;
  auto created = TlsServerContext::Create(files.Config());
  ASSERT_TRUE(created.ok()) << created.status();
  TlsServerContext& provider = **created;
  const KeyPair &second = files.second, &live = files.live;
  const auto start = TlsServerContext::Clock::now();
  std::shared_ptr<TlsServerContext::SslContext> old_context = provider.Current(start + seconds(1));
  EXPECT_EQ(ServedName(old_context), "first");
  EXPECT_EQ(provider.reloads(), 0u);

  CopyFile(second.cert_file, live.cert_file);
  CopyFile(second.key_file, live.key_file);
  // Within the interval of the last check: not re-read.
  EXPECT_EQ(provider.Current(start + std::chrono::milliseconds(1500)), old_context);
  std::shared_ptr<TlsServerContext::SslContext> new_context = provider.Current(start + seconds(3));
  EXPECT_NE(new_context, old_context);
  EXPECT_EQ(ServedName(new_context), "second");
  EXPECT_EQ(ServedName(old_context), "first");  // its holders keep it
  EXPECT_EQ(provider.reloads(), 1u);
  // Unchanged files: no rebuild.
  EXPECT_EQ(provider.Current(start + seconds(5)), new_context);
  EXPECT_EQ(provider.reloads(), 1u);
}

// A bad replacement keeps the previous context and is tried once per change of the files.
TEST(TlsServerContextTest, BadReplacementKeepsThePreviousContext) {
  RotationFiles files;
  auto created = TlsServerContext::Create(files.Config());
  ASSERT_TRUE(created.ok()) << created.status();
  TlsServerContext& provider = **created;
  const KeyPair &second = files.second, &live = files.live;
  const auto start = TlsServerContext::Clock::now();
  std::shared_ptr<TlsServerContext::SslContext> original = provider.Current(start);

  CopyFile(second.cert_file, live.cert_file);  // the certificate first, its key not yet
  EXPECT_EQ(provider.Current(start + seconds(2)), original);
  EXPECT_EQ(provider.failed_reloads(), 1u);
  EXPECT_EQ(provider.Current(start + seconds(4)), original);  // same files: not retried
  EXPECT_EQ(provider.failed_reloads(), 1u);

  std::filesystem::remove(live.key_file);  // unreadable
  EXPECT_EQ(provider.Current(start + seconds(6)), original);
  EXPECT_EQ(provider.failed_reloads(), 2u);

  CopyFile(second.key_file, live.key_file);  // the pair is complete
  std::shared_ptr<TlsServerContext::SslContext> rotated = provider.Current(start + seconds(8));
  EXPECT_EQ(ServedName(rotated), "second");
  EXPECT_EQ(provider.reloads(), 1u);
}

}  // namespace
}  // namespace infera
