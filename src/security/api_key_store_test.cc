#include "security/api_key_store.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "common/retry_after.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

std::string Line(std::string_view id, std::string_view key, std::string_view rest) {
  return std::string(id) + " sha256:" + DigestHex(DigestOf(key)) + " " + std::string(rest) + "\n";
}

// Replaces the file atomically (a new inode), as an operator's editor or a config
// management tool would.
void WriteFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp, std::ios::binary | std::ios::trunc) << text;
  ASSERT_EQ(std::rename(tmp.c_str(), path.c_str()), 0);
}

class ApiKeyStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<ApiKeyStore> Make(const std::string& text, std::string api_key = "", std::string admin = "") {
    WriteFile(path_, text);
    ApiKeyStore::Options options;
    options.key_file = path_;
    options.api_key = std::move(api_key);
    options.admin_token = std::move(admin);
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<ApiKeyStore>> store = ApiKeyStore::Create(std::move(options));
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }
  static std::string Bearer(std::string_view key) { return "Bearer " + std::string(key); }

  FakeClock clock_;
  std::string path_ = testing::TempDir() + "/api_keys_" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
};

TEST_F(ApiKeyStoreTest, NoKeysConfiguredIsNull) {
  absl::StatusOr<std::unique_ptr<ApiKeyStore>> store = ApiKeyStore::Create({});
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*store, nullptr);
}

TEST_F(ApiKeyStoreTest, MissingUnknownRightsModels) {
  auto store = Make(Line("team-a", "ka", "rights=read,infer models=resnet*,fortune"));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Authorize(std::nullopt, kRightRead, std::nullopt).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(store->Authorize("Bearer nope", kRightRead, std::nullopt).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(store->Authorize("Basic ka", kRightRead, std::nullopt).status().code(),
            absl::StatusCode::kUnauthenticated);
  absl::StatusOr<ApiKeyGrantPtr> ok = store->Authorize(Bearer("ka"), kRightInfer, "resnet50");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->entry.id, "team-a");
  EXPECT_TRUE(store->Authorize("bearer   ka ", kRightRead, "fortune").ok());
  absl::Status rights = store->Authorize(Bearer("ka"), kRightAdmin, std::nullopt).status();
  absl::Status models = store->Authorize(Bearer("ka"), kRightInfer, "bert").status();
  absl::Status every = store->Authorize(Bearer("ka"), kRightRead, std::nullopt, /*every_model=*/true).status();
  EXPECT_EQ(rights.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(models.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(every.code(), absl::StatusCode::kPermissionDenied);
  // The refusal does not say which part of the key was wrong, and never holds the key.
  EXPECT_EQ(rights.message(), models.message());
  EXPECT_THAT(std::string(rights.message()), ::testing::Not(HasSubstr("ka")));
  EXPECT_EQ(CheckGrantModel(*ok, "fortune"), absl::OkStatus());
  EXPECT_EQ(CheckGrantModel(*ok, "bert").code(), absl::StatusCode::kPermissionDenied);

  std::string metrics;
  store->AppendMetrics(metrics);
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_requests_total{key=\"team-a\"} 2\n"));
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_rejected_total{key=\"team-a\",reason=\"rights\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_rejected_total{key=\"team-a\",reason=\"models\"} 3\n"));
  EXPECT_THAT(metrics, HasSubstr("infera_auth_failures_total{reason=\"missing\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("infera_auth_failures_total{reason=\"unknown\"} 2\n"));
  EXPECT_THAT(metrics, ::testing::Not(HasSubstr(DigestHex(DigestOf("ka")))));
}

TEST_F(ApiKeyStoreTest, ApiKeyFlagAndAdminToken) {
  auto store = Make("", "flag-key", "admin-secret");
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->Authorize(Bearer("flag-key"), kRightInfer, "any").ok());
  EXPECT_EQ(store->Authorize(Bearer("flag-key"), kRightAdmin, std::nullopt).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(store->Authorize(Bearer("admin-secret"), kRightAdmin, "any").ok());
  EXPECT_TRUE(store->CheckRight(Bearer("admin-secret"), kRightAdmin).ok());
  EXPECT_EQ(store->CheckRight(Bearer("flag-key"), kRightAdmin).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(store->CheckRight(std::nullopt, kRightAdmin).code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(ApiKeyStoreTest, BadFileAtStartNamesTheLine) {
  WriteFile(path_, Line("a", "k", "rights=read models=*") + "b sha256:zz rights=read models=*\n");
  ApiKeyStore::Options options;
  options.key_file = path_;
  absl::StatusOr<std::unique_ptr<ApiKeyStore>> store = ApiKeyStore::Create(std::move(options));
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("line 2"));
  options = {};
  options.key_file = path_ + ".absent";
  EXPECT_FALSE(ApiKeyStore::Create(std::move(options)).ok());
}

TEST_F(ApiKeyStoreTest, ReloadSwapsKeysAndKeepsOldOnBadFile) {
  auto store = Make(Line("a", "ka", "rights=read models=*"));
  ASSERT_NE(store, nullptr);
  WriteFile(path_, Line("b", "kb", "rights=read models=*"));
  // Authorize checks at most once a second: the clock has not moved since the start.
  EXPECT_TRUE(store->Authorize(Bearer("ka"), kRightRead, std::nullopt).ok());
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_FALSE(store->Authorize(Bearer("ka"), kRightRead, std::nullopt).ok());
  EXPECT_TRUE(store->Authorize(Bearer("kb"), kRightRead, std::nullopt).ok());
  // A bad replacement: the previous keys stay.
  WriteFile(path_, Line("c", "kc", "rights=bogus models=*"));
  EXPECT_EQ(store->ReloadIfChanged().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(store->Authorize(Bearer("kb"), kRightRead, std::nullopt).ok());
  EXPECT_FALSE(store->Authorize(Bearer("kc"), kRightRead, std::nullopt).ok());
  // Removed: still the previous keys.
  std::remove(path_.c_str());
  EXPECT_FALSE(store->ReloadIfChanged().ok());
  EXPECT_TRUE(store->Authorize(Bearer("kb"), kRightRead, std::nullopt).ok());
  WriteFile(path_, Line("c", "kc", "rights=read models=*"));
  EXPECT_TRUE(store->ReloadIfChanged().ok());
  EXPECT_TRUE(store->Authorize(Bearer("kc"), kRightRead, std::nullopt).ok());
  EXPECT_EQ(store->size(), 1u);
}

TEST_F(ApiKeyStoreTest, RequestQuotaWithRetryAfter) {
  auto store = Make(Line("a", "ka", "rights=read models=* rps=2"));
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->Authorize(Bearer("ka"), kRightRead, std::nullopt).ok());
  EXPECT_TRUE(store->Authorize(Bearer("ka"), kRightRead, std::nullopt).ok());
  absl::Status third = store->Authorize(Bearer("ka"), kRightRead, std::nullopt).status();
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RetryAfterSeconds(third), 1);
  clock_.Advance(std::chrono::milliseconds(500));
  EXPECT_TRUE(store->Authorize(Bearer("ka"), kRightRead, std::nullopt).ok());
  std::string metrics;
  store->AppendMetrics(metrics);
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_rejected_total{key=\"a\",reason=\"quota_requests\"} 1\n"));
}

TEST_F(ApiKeyStoreTest, TokenQuotaChargedAfterUseAndKeptAcrossReload) {
  auto store = Make(Line("a", "ka", "rights=infer models=* tokens_per_min=600"));
  ASSERT_NE(store, nullptr);
  absl::StatusOr<ApiKeyGrantPtr> grant = store->Authorize(Bearer("ka"), kRightInfer, "m");
  ASSERT_TRUE(grant.ok());
  ChargeGrantTokens(*grant, 500, 400);  // 600 - 900 = -300 tokens: 30 s at 10/s
  // An unrelated reload (a key added) keeps a's bucket: its limits did not change.
  WriteFile(path_, Line("a", "ka", "rights=infer models=* tokens_per_min=600") + Line("b", "kb", "rights=read models=*"));
  ASSERT_TRUE(store->ReloadIfChanged().ok());
  absl::Status refused = store->Authorize(Bearer("ka"), kRightInfer, "m").status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RetryAfterSeconds(refused), 31);  // strictly above zero: a hair past 30 s
  clock_.Advance(std::chrono::seconds(31));
  EXPECT_TRUE(store->Authorize(Bearer("ka"), kRightInfer, "m").ok());
  std::string metrics;
  store->AppendMetrics(metrics);
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_tokens_total{key=\"a\",kind=\"prompt\"} 500\n"));
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_tokens_total{key=\"a\",kind=\"completion\"} 400\n"));
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_rejected_total{key=\"a\",reason=\"quota_tokens\"} 1\n"));
}

TEST_F(ApiKeyStoreTest, MetricLabelsAreBounded) {
  std::string text;
  for (int i = 0; i < 5; ++i) text += Line("k" + std::to_string(i), "key" + std::to_string(i), "rights=read models=*");
  WriteFile(path_, text);
  ApiKeyStore::Options options;
  options.key_file = path_;
  options.clock = &clock_;
  options.max_metric_labels = 3;
  auto store = ApiKeyStore::Create(std::move(options));
  ASSERT_TRUE(store.ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*store)->Authorize(Bearer("key" + std::to_string(i)), kRightRead, {}).ok());
  std::string metrics;
  (*store)->AppendMetrics(metrics);
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_requests_total{key=\"k2\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("infera_api_key_requests_total{key=\"other\"} 2\n"));
  EXPECT_THAT(metrics, ::testing::Not(HasSubstr("key=\"k3\"")));
}

TEST(BearerKeyTest, Forms) {
  EXPECT_EQ(BearerKey("Bearer abc"), "abc");
  EXPECT_EQ(BearerKey("BEARER  abc  "), "abc");
  EXPECT_EQ(BearerKey("Bearer "), std::nullopt);
  EXPECT_EQ(BearerKey("Basic abc"), std::nullopt);
  EXPECT_EQ(BearerKey("abc"), std::nullopt);
}

}  // namespace
}  // namespace infera
