#include "diagnosis/diagnosis_routes.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::diagnosis {
namespace {

using ::testing::HasSubstr;

TEST(DiagnosisRoutesTest, MatchesOnlyDiagnosisPaths) {
  EXPECT_TRUE(DiagnosisRoutes::Matches("/v2/models/m/diagnosis"));
  EXPECT_TRUE(DiagnosisRoutes::Matches("/v2/models/m/versions/2/diagnosis"));
  EXPECT_FALSE(DiagnosisRoutes::Matches("/v2/models/m/stats"));
  EXPECT_FALSE(DiagnosisRoutes::Matches("/v2/models/diagnosis"));
  EXPECT_FALSE(DiagnosisRoutes::Matches("/v2/models/m/x/diagnosis"));
  EXPECT_FALSE(DiagnosisRoutes::Matches("/v2/models/m/versions/2/x/diagnosis"));
  EXPECT_FALSE(DiagnosisRoutes::Matches("/v1/models/m/diagnosis"));
}

TEST(DiagnosisRoutesTest, WindowDefaultsAndBounds) {
  EXPECT_EQ(*ParseWindowQuery(""), kDefaultWindowSeconds);
  EXPECT_EQ(*ParseWindowQuery("window=1"), 1);
  EXPECT_EQ(*ParseWindowQuery("window=300"), 300);
  EXPECT_EQ(*ParseWindowQuery("&window=5&"), 5);
}

TEST(DiagnosisRoutesTest, BadWindowsNameTheParameter) {
  for (const char* query : {"window=0", "window=301", "window=-1", "window=abc", "window=", "window",
                            "window=1.5", "window=99999999999999999999", "window=5&window=6"}) {
    absl::StatusOr<int> window = ParseWindowQuery(query);
    ASSERT_FALSE(window.ok()) << query;
    EXPECT_EQ(window.status().code(), absl::StatusCode::kInvalidArgument) << query;
    EXPECT_THAT(window.status().message(), HasSubstr("window")) << query;
  }
  absl::StatusOr<int> unknown = ParseWindowQuery("windw=5");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("'windw'"));
}

}  // namespace
}  // namespace infera::diagnosis
