#include "console/console_assets.h"

#include <string>

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(ConsoleAssetsTest, PageAndScriptsAreEmbeddedWithTypesAndEtags) {
  const EmbeddedAsset* index = FindConsoleAsset("index.html");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  EXPECT_NE(index->bytes.find("<!doctype html>"), std::string_view::npos);
  const EmbeddedAsset* js = FindConsoleAsset("console.js");
  ASSERT_NE(js, nullptr);
  EXPECT_EQ(js->content_type, "text/javascript; charset=utf-8");
  const EmbeddedAsset* css = FindConsoleAsset("console.css");
  ASSERT_NE(css, nullptr);
  EXPECT_EQ(css->content_type, "text/css; charset=utf-8");
  // Quoted, 16 hex digits, different for different files.
  EXPECT_EQ(js->etag.size(), 18u);
  EXPECT_EQ(js->etag.front(), '"');
  EXPECT_NE(js->etag, css->etag);
}

TEST(ConsoleAssetsTest, LookupIsExact) {
  EXPECT_EQ(FindConsoleAsset(""), nullptr);
  EXPECT_EQ(FindConsoleAsset("../console.js"), nullptr);
  EXPECT_EQ(FindConsoleAsset("./console.js"), nullptr);
  EXPECT_EQ(FindConsoleAsset("console.js/"), nullptr);
  EXPECT_EQ(FindConsoleAsset("CONSOLE.JS"), nullptr);
  EXPECT_EQ(FindConsoleAsset("%63onsole.js"), nullptr);
}

}  // namespace
}  // namespace infera
