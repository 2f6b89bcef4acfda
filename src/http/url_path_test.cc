#include "http/url_path.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;

TEST(UrlPathTest, SplitsAndDropsEmptySegments) {
  EXPECT_THAT(SplitPath("/v2/models/m/infer"), ElementsAre("v2", "models", "m", "infer"));
  EXPECT_THAT(SplitPath("//v2///health/"), ElementsAre("v2", "health"));
  EXPECT_TRUE(SplitPath("/").empty());
  EXPECT_TRUE(SplitPath("").empty());
}

TEST(UrlPathTest, SplitPathInlineMatchesSplitPath) {
  for (const char* path : {"/v2/models/m/infer", "//v2///health/", "/", "", "/a/b/c/d/e/f/g/h/i/j/k"}) {
    const PathSegments inline_parts = SplitPathInline(path);
    const std::vector<std::string_view> parts = SplitPath(path);
    EXPECT_EQ(std::vector<std::string_view>(inline_parts.begin(), inline_parts.end()), parts) << path;
  }
  EXPECT_THAT(SplitPathInline("/v2/models/m/versions/3/infer"),
              ElementsAre("v2", "models", "m", "versions", "3", "infer"));
}

TEST(UrlPathTest, PercentDecodes) {
  EXPECT_EQ(*PercentDecode("a%20b%2Fc"), "a b/c");
  EXPECT_EQ(*PercentDecode("plain"), "plain");
  EXPECT_FALSE(PercentDecode("bad%2").has_value());
  EXPECT_FALSE(PercentDecode("bad%").has_value());
  EXPECT_FALSE(PercentDecode("bad%zz").has_value());
  EXPECT_FALSE(PercentDecode("nul%00").has_value());
}

}  // namespace
}  // namespace infera
