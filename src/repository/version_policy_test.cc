#include "repository/version_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;

inference::ModelVersionPolicy Latest(uint32_t n) {
  inference::ModelVersionPolicy policy;
  policy.mutable_latest()->set_num_versions(n);
  return policy;
}

TEST(VersionPolicyTest, DefaultIsNewestOne) {
  auto versions = SelectVersions(inference::ModelVersionPolicy(), {3, 1, 2});
  ASSERT_TRUE(versions.ok());
  EXPECT_THAT(*versions, ElementsAre(3));
}

TEST(VersionPolicyTest, LatestN) {
  EXPECT_THAT(*SelectVersions(Latest(2), {1, 7, 3}), ElementsAre(3, 7));
  EXPECT_THAT(*SelectVersions(Latest(5), {1, 2}), ElementsAre(1, 2));
}

TEST(VersionPolicyTest, All) {
  inference::ModelVersionPolicy policy;
  policy.mutable_all();
  EXPECT_THAT(*SelectVersions(policy, {2, 1, 2}), ElementsAre(1, 2));
}

TEST(VersionPolicyTest, SpecificPresentAndMissing) {
  inference::ModelVersionPolicy policy;
  policy.mutable_specific()->add_versions(3);
  policy.mutable_specific()->add_versions(1);
  EXPECT_THAT(*SelectVersions(policy, {1, 2, 3}), ElementsAre(1, 3));
  auto missing = SelectVersions(policy, {1, 2});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), ::testing::HasSubstr("3"));
}

TEST(VersionPolicyTest, NoVersionsIsAnError) {
  auto none = SelectVersions(Latest(1), {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace infera
