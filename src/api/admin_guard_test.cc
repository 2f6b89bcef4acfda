#include "api/admin_guard.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;
using Op = AdminGuard::Operation;

AdminGuard::HeaderLookup Headers(std::map<std::string, std::string> headers) {
  return [headers = std::move(headers)](std::string_view name) -> std::optional<std::string_view> {
    auto it = headers.find(std::string(name));
    if (it == headers.end()) return std::nullopt;
    return std::string_view(it->second);
  };
}

AdminGuard Guard(std::string token, std::vector<std::string> groups, bool explicit_mode,
                 std::string prefix = "", std::vector<ApiCategory> opened = {}) {
  AdminGuard::Options options;
  options.opened = std::move(opened);
  options.admin_token = std::move(token);
  for (const std::string& g : groups) options.restrictions.push_back(*ParseApiRestriction(g));
  options.header_prefix = std::move(prefix);
  options.explicit_mode = explicit_mode;
  return *AdminGuard::Create(std::move(options));
}

TEST(AdminGuardTest, ParsesTritonsRestrictionShape) {
  auto r = ParseApiRestriction("model-repository,logging:Admin-Key=v=1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->categories,
            (std::vector<ApiCategory>{ApiCategory::kModelRepository, ApiCategory::kLogging}));
  EXPECT_EQ(r->key, "admin-key");  // header names are case-insensitive
  EXPECT_EQ(r->value, "v=1");
  for (const char* bad : {"logging", "logging:key", "logging:=v", "infer:k=v", ":k=v",
                          "logging,:k=v", "logging:a b=v", "logging:k="}) {
    EXPECT_EQ(ParseApiRestriction(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  // Triton's words for a misspelt category.
  EXPECT_THAT(std::string(ParseApiRestriction("model-reposit,health:k=v").status().message()),
              HasSubstr("unknown restricted api 'model-reposit'"));
  // Every one of Triton's nine categories may be restricted.
  auto all = ParseApiRestriction(
      "health,metadata,inference,shared-memory,model-config,model-repository,statistics,trace,logging:k=v");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->categories.size(), 9u);
  EXPECT_EQ(ApiCategoryName(all->categories[4]), "model-config");
  auto trace = ParseApiRestriction("trace:k=v");
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(ApiCategoryName(trace->categories[0]), "trace");
  AdminGuard::Options twice;
  twice.restrictions = {*ParseApiRestriction("logging:a=1"), *ParseApiRestriction("logging:b=2")};
  EXPECT_THAT(std::string(AdminGuard::Create(twice).status().message()),
              HasSubstr("more than one restricted group"));
}

TEST(AdminGuardTest, OpenOnlyWhereTheOperatorOpenedIt) {
  const AdminGuard none_mode = Guard("", {}, /*explicit_mode=*/false);
  const AdminGuard explicit_mode = Guard("", {}, /*explicit_mode=*/true);
  // Canary promotion used to be open without a token in the default mode.
  absl::Status promote = none_mode.Check(ApiCategory::kModelRepository, Op::kAdmin, Headers({}));
  EXPECT_EQ(promote.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(promote.message()), HasSubstr("--admin-token"));
  EXPECT_TRUE(explicit_mode.Check(ApiCategory::kModelRepository, Op::kAdmin, Headers({})).ok());
  // Reads are open without credentials (Triton's default).
  EXPECT_TRUE(none_mode.Check(ApiCategory::kModelRepository, Op::kRead, Headers({})).ok());
  EXPECT_FALSE(none_mode.Protected(ApiCategory::kModelRepository));
  EXPECT_FALSE(none_mode.OpenToEveryone(ApiCategory::kModelRepository));
  EXPECT_TRUE(explicit_mode.OpenToEveryone(ApiCategory::kModelRepository));
}

// Issue 26: shared-memory registration, the logging settings and trace updates were open
// to every client of a default server. Every category is now closed the same way, over
// both transports (this one check), until the operator opens it.
TEST(AdminGuardTest, EveryAdminCategoryIsClosedByDefault) {
  const AdminGuard closed = Guard("", {}, /*explicit_mode=*/false);
  const std::pair<ApiCategory, const char*> how_to_open[] = {
      {ApiCategory::kModelRepository, "--model-control-mode=explicit"},
      {ApiCategory::kLogging, "--allow-admin-api=logging"},
      {ApiCategory::kSharedMemory, "--allow-client-shm=true"},
      {ApiCategory::kTrace, "--allow-admin-api=trace"},
  };
  for (const auto& [category, flag] : how_to_open) {
    absl::Status refused = closed.Check(category, Op::kAdmin, Headers({}));
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << ApiCategoryName(category);
    EXPECT_THAT(std::string(refused.message()), HasSubstr(flag));
    EXPECT_THAT(std::string(refused.message()), HasSubstr("--admin-token"));
    // Reads and releases (shared-memory unregister) stay open: harmless when nothing
    // can be registered.
    EXPECT_TRUE(closed.Check(category, Op::kRead, Headers({})).ok());
    EXPECT_TRUE(closed.Check(category, Op::kRelease, Headers({})).ok());
    EXPECT_FALSE(closed.OpenToEveryone(category));
    // Opened by the operator: open to every client.
    const AdminGuard opened = Guard("", {}, false, "", {category});
    EXPECT_TRUE(opened.Check(category, Op::kAdmin, Headers({})).ok());
    EXPECT_TRUE(opened.OpenToEveryone(category));
  }
  EXPECT_TRUE(OpenAdminApiWarnings(closed, closed).empty());
}

TEST(AdminGuardTest, ACredentialOpensAClosedCategoryToItsHoldersOnly) {
  const AdminGuard token = Guard("tok", {}, false);
  EXPECT_EQ(token.Check(ApiCategory::kSharedMemory, Op::kAdmin, Headers({})).code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(token.Check(ApiCategory::kSharedMemory, Op::kRelease, Headers({})).code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(token.Check(ApiCategory::kSharedMemory, Op::kAdmin, Headers({{"authorization", "Bearer tok"}})).ok());
  // Opened and a token: the token still applies, and nothing is open to everyone.
  const AdminGuard both = Guard("tok", {}, false, "", {ApiCategory::kSharedMemory});
  EXPECT_EQ(both.Check(ApiCategory::kSharedMemory, Op::kAdmin, Headers({})).code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(both.OpenToEveryone(ApiCategory::kSharedMemory));
  const AdminGuard header = Guard("", {"shared-memory:k=v"}, false);
  EXPECT_EQ(header.Check(ApiCategory::kSharedMemory, Op::kAdmin, Headers({})).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(header.Check(ApiCategory::kSharedMemory, Op::kAdmin, Headers({{"k", "v"}})).ok());
  // The group covers shared-memory only: logging stays closed.
  EXPECT_EQ(header.Check(ApiCategory::kLogging, Op::kAdmin, Headers({{"k", "v"}})).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(AdminGuardTest, WarnsAboutEveryCategoryOpenToEveryone) {
  const AdminGuard http = Guard("", {}, /*explicit_mode=*/true, "", {ApiCategory::kSharedMemory});
  // gRPC protects shared memory with a restricted group; HTTP does not.
  const AdminGuard grpc = Guard("", {"shared-memory:k=v"}, true, "triton-grpc-protocol-",
                                {ApiCategory::kSharedMemory});
  const std::vector<std::string> warnings = OpenAdminApiWarnings(http, grpc);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_THAT(warnings[0], HasSubstr("SECURITY: the model-repository admin API is open to every client "
                                     "on the HTTP and gRPC ports"));
  EXPECT_THAT(warnings[0], HasSubstr("--admin-token"));
  EXPECT_THAT(warnings[1], HasSubstr("the shared-memory admin API is open to every client on the HTTP port"));
  EXPECT_THAT(warnings[1], HasSubstr("/dev/shm"));
  EXPECT_TRUE(OpenAdminApiWarnings(Guard("tok", {}, true, "", {ApiCategory::kLogging}),
                                   Guard("tok", {}, true, "", {ApiCategory::kLogging}))
                  .empty());
}

TEST(AdminGuardTest, ParsesCategoryLists) {
  auto both = ParseApiCategories("logging,trace");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both, (std::vector<ApiCategory>{ApiCategory::kLogging, ApiCategory::kTrace}));
  for (const char* bad : {"", "logging,", ",trace", "inference", "logging trace", "LOGGING"}) {
    EXPECT_EQ(ParseApiCategories(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(AdminGuardTest, AdminTokenGuardsEveryAdminOperation) {
  const AdminGuard guard = Guard("s3cret", {}, /*explicit_mode=*/false);
  for (ApiCategory c : {ApiCategory::kModelRepository, ApiCategory::kLogging}) {
    EXPECT_EQ(guard.Check(c, Op::kAdmin, Headers({})).code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(guard.Check(c, Op::kAdmin, Headers({{"authorization", "Bearer wrong"}})).code(),
              absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(guard.Check(c, Op::kAdmin, Headers({{"authorization", "Bearer s3cre"}})).code(),
              absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(guard.Check(c, Op::kAdmin, Headers({{"authorization", "s3cret"}})).code(),
              absl::StatusCode::kUnauthenticated);
    EXPECT_TRUE(guard.Check(c, Op::kAdmin, Headers({{"authorization", "Bearer s3cret"}})).ok());
  }
  EXPECT_TRUE(guard.Check(ApiCategory::kModelRepository, Op::kRead, Headers({})).ok());
  EXPECT_TRUE(guard.Protected(ApiCategory::kModelRepository));
}

TEST(AdminGuardTest, RestrictedCategoryNeedsItsHeaderInAdditionToTheToken) {
  const AdminGuard guard = Guard("tok", {"model-repository:admin-key=k1"}, /*explicit_mode=*/false);
  const auto token = std::pair<const std::string, std::string>{"authorization", "Bearer tok"};
  absl::Status missing = guard.Check(ApiCategory::kModelRepository, Op::kRead, Headers({token}));
  EXPECT_EQ(missing.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(missing.message(), "This API is restricted, expecting header 'admin-key'");
  EXPECT_EQ(guard.Check(ApiCategory::kModelRepository, Op::kRead, Headers({{"admin-key", "k2"}})).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(guard.Check(ApiCategory::kModelRepository, Op::kRead, Headers({{"admin-key", "k1"}})).ok());
  // Header right, token missing: still refused for an admin operation.
  EXPECT_EQ(guard.Check(ApiCategory::kModelRepository, Op::kAdmin, Headers({{"admin-key", "k1"}})).code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(guard.Check(ApiCategory::kModelRepository, Op::kAdmin,
                          Headers({{"admin-key", "k1"}, token}))
                  .ok());
  // Other categories are not affected by this group.
  EXPECT_TRUE(guard.Check(ApiCategory::kLogging, Op::kAdmin, Headers({token})).ok());
}

TEST(AdminGuardTest, RestrictionAloneOpensAdminOperationsOutsideExplicitMode) {
  const AdminGuard guard = Guard("", {"model-repository:admin-key=k1"}, /*explicit_mode=*/false);
  EXPECT_EQ(guard.Check(ApiCategory::kModelRepository, Op::kAdmin, Headers({})).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(guard.Check(ApiCategory::kModelRepository, Op::kAdmin, Headers({{"admin-key", "k1"}})).ok());
}

TEST(AdminGuardTest, GrpcUsesTritonsMetadataPrefix) {
  const AdminGuard guard = Guard("", {"model-repository:admin-key=k1"}, true, "triton-grpc-protocol-");
  absl::Status plain = guard.Check(ApiCategory::kModelRepository, Op::kAdmin, Headers({{"admin-key", "k1"}}));
  EXPECT_THAT(std::string(plain.message()), HasSubstr("'triton-grpc-protocol-admin-key'"));
  EXPECT_TRUE(guard.Check(ApiCategory::kModelRepository, Op::kAdmin,
                          Headers({{"triton-grpc-protocol-admin-key", "k1"}}))
                  .ok());
}

}  // namespace
}  // namespace infera

namespace infera {
namespace {

TEST(AdminGuardTest, PresentedCredentialNamesTheCredentialNeverTheSecret) {
  const AdminGuard token = Guard("s3cret", {"logging:x-admin=k3y"}, false);
  EXPECT_EQ(token.PresentedCredential(ApiCategory::kTrace, Headers({})), "none");
  EXPECT_EQ(token.PresentedCredential(ApiCategory::kTrace, Headers({{"authorization", "Bearer wrong"}})),
            "admin-token");
  EXPECT_EQ(token.PresentedCredential(ApiCategory::kTrace, Headers({{"authorization", "Basic abc"}})), "none");
  EXPECT_EQ(token.PresentedCredential(ApiCategory::kLogging, Headers({{"x-admin", "k3y"}})),
            "restricted:logging");
  EXPECT_EQ(token.PresentedCredential(ApiCategory::kLogging,
                                      Headers({{"x-admin", "k3y"}, {"authorization", "Bearer s3cret"}})),
            "restricted:logging+admin-token");
  // The header of another category's group is not this category's credential.
  EXPECT_EQ(token.PresentedCredential(ApiCategory::kTrace, Headers({{"x-admin", "k3y"}})), "none");
  // Without --admin-token a bearer header is no credential of the guard's.
  const AdminGuard grpc = Guard("", {"trace:k=v"}, false, "triton-grpc-protocol-");
  EXPECT_EQ(grpc.PresentedCredential(ApiCategory::kTrace, Headers({{"authorization", "Bearer s3cret"}})), "none");
  EXPECT_EQ(grpc.PresentedCredential(ApiCategory::kTrace, Headers({{"triton-grpc-protocol-k", "v"}})),
            "restricted:trace");
}

TEST(AdminGuardTest, WithApiKeysTheAdminRightIsTheCredentialAndRestrictionsStillApply) {
  AdminGuard::Options options;
  options.restrictions.push_back(*ParseApiRestriction("logging:x-admin=yes"));
  // The store's decision, faked: "Bearer admin-key" holds the admin right.
  options.api_key_admin = [](std::optional<std::string_view> authorization) {
    if (!authorization) return absl::UnauthenticatedError("missing API key");
    if (*authorization != "Bearer admin-key") return absl::PermissionDeniedError("not allowed");
    return absl::OkStatus();
  };
  AdminGuard guard = *AdminGuard::Create(std::move(options));
  // Closed by default no longer applies: the admin key opens every category...
  EXPECT_TRUE(guard.Check(ApiCategory::kModelRepository, Op::kAdmin,
                          Headers({{"authorization", "Bearer admin-key"}})).ok());
  EXPECT_TRUE(guard.Protected(ApiCategory::kModelRepository));
  EXPECT_FALSE(guard.OpenToEveryone(ApiCategory::kModelRepository));
  // ...and nothing else does.
  EXPECT_EQ(guard.Check(ApiCategory::kModelRepository, Op::kAdmin, Headers({})).code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(guard.Check(ApiCategory::kSharedMemory, Op::kRelease,
                        Headers({{"authorization", "Bearer read-key"}})).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(guard.Check(ApiCategory::kSharedMemory, Op::kRead, Headers({})).ok());
  // A restricted category still needs its header on top of the key.
  EXPECT_EQ(guard.Check(ApiCategory::kLogging, Op::kAdmin, Headers({{"authorization", "Bearer admin-key"}})).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(guard.Check(ApiCategory::kLogging, Op::kAdmin,
                          Headers({{"authorization", "Bearer admin-key"}, {"x-admin", "yes"}})).ok());
}


TEST(AdminGuardTest, ProtocolCategoriesNeedOnlyTheirHeader) {
  AdminGuard::Options options;
  options.restrictions = {*ParseApiRestriction("inference,metadata:infer-key=v")};
  options.admin_token = "tok";  // never asked of a protocol category
  auto guard = AdminGuard::Create(options);
  ASSERT_TRUE(guard.ok());
  auto none = [](std::string_view) -> std::optional<std::string_view> { return std::nullopt; };
  auto with_key = [](std::string_view name) -> std::optional<std::string_view> {
    if (name == "infer-key") return "v";
    return std::nullopt;
  };
  absl::Status refused = guard->CheckRestricted(ApiCategory::kInference, none);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(), "This API is restricted, expecting header 'infer-key'");
  EXPECT_TRUE(guard->CheckRestricted(ApiCategory::kInference, with_key).ok());
  EXPECT_TRUE(guard->CheckRestricted(ApiCategory::kHealth, none).ok());  // not restricted
  // gRPC: Triton's "protocol" wording and metadata names.
  options.header_prefix = "triton-grpc-protocol-";
  auto grpc_guard = AdminGuard::Create(options);
  ASSERT_TRUE(grpc_guard.ok());
  EXPECT_EQ(grpc_guard->CheckRestricted(ApiCategory::kMetadata, none).message(),
            "This protocol is restricted, expecting header 'triton-grpc-protocol-infer-key'");
  // Protocol categories cannot be opened: they have no admin operations.
  EXPECT_THAT(std::string(ParseApiCategories("inference").status().message()),
              HasSubstr("no admin operations"));
}

}  // namespace
}  // namespace infera
