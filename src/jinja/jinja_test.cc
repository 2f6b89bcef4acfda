#include "jinja/template.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jinja/builtins.h"

namespace infera::jinja {
namespace {

using ::testing::HasSubstr;

std::string Render(std::string_view source, const std::string& context_json = "{}", RenderOptions options = {}) {
  auto t = Template::Parse(source);
  if (!t.ok()) return "PARSE ERROR: " + std::string(t.status().message());
  auto out = t->Render(FromJson(context_json).as_dict(), options);
  if (!out.ok()) return "RENDER ERROR: " + std::string(out.status().message());
  return *out;
}

TEST(JinjaTest, Basics) {
  EXPECT_EQ(Render("a{{ 1 + 2 }}b"), "a3b");
  EXPECT_EQ(Render("{% for x in xs %}{{ loop.index }}{{ x }}{% endfor %}", R"({"xs": ["a", "b"]})"), "1a2b");
}

}  // namespace
}  // namespace infera::jinja
