// Unit tests of the Jinja engine: behaviour jinja_reference_test.py cannot pin against
// jinja2 (limits, error messages with lines, hostile templates), plus a few outputs.
#include "jinja/template.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jinja/builtins.h"

namespace infera::jinja {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Render(std::string_view source, const std::string& context_json = "{}", RenderOptions options = {}) {
  auto t = Template::Parse(source);
  if (!t.ok()) return "PARSE ERROR: " + std::string(t.status().message());
  auto out = t->Render(FromJson(context_json).as_dict(), options);
  if (!out.ok()) return "RENDER ERROR: " + std::string(out.status().message());
  return *out;
}

TEST(JinjaTest, RendersTheCommonConstructs) {
  EXPECT_EQ(Render("a{{ 1 + 2 }}b"), "a3b");
  EXPECT_EQ(Render("{% for x in xs %}{{ loop.index }}{{ x }}{% endfor %}", R"({"xs": ["a", "b"]})"), "1a2b");
  EXPECT_EQ(Render("{% set ns = namespace(n=0) %}{% for x in [1, 2, 3] %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}"),
            "6");
  EXPECT_EQ(Render("{{ m | tojson }}", R"({"m": {"b": [1, 2.0, null], "a": "é"}})"), R"({"b": [1, 2.0, null], "a": "é"})");
  EXPECT_EQ(Render("  {% if true %}\n  x\n  {% endif %}\n"), "  x\n");
  EXPECT_EQ(Render("{{ 'abc'[::-1] }} {{ [1, 2, 3][1:] }} {{ 7 // 2 }} {{ -7 % 3 }} {{ 1 / 4 }}"), "cba [2, 3] 3 2 0.25");
}

TEST(JinjaTest, ParseErrorsNameTheConstructAndLine) {
  EXPECT_EQ(Render("ok\n{% include 'x.jinja' %}"), "PARSE ERROR: line 2: unsupported template construct '{% include %}'");
  EXPECT_EQ(Render("{% raw %}x{% endraw %}"), "PARSE ERROR: line 1: unsupported template construct '{% raw %}'");
  EXPECT_EQ(Render("\n\n{{ x | frobnicate }}"), "PARSE ERROR: line 3: unsupported filter 'frobnicate'");
  EXPECT_EQ(Render("{{ x is frobnicated }}"), "PARSE ERROR: line 1: unsupported test 'frobnicated'");
  EXPECT_THAT(Render("{% for x in y %}"), HasSubstr("missing {% endfor %}"));
  EXPECT_THAT(Render("{% if x %}{% endfor %}"), StartsWith("PARSE ERROR: line 1:"));
  EXPECT_THAT(Render("{{ 'unterminated }}"), HasSubstr("unterminated string literal"));
  EXPECT_THAT(Render("{{ x "), HasSubstr("unterminated expression"));
  EXPECT_THAT(Render("{# never closed"), HasSubstr("unterminated comment"));
  EXPECT_THAT(Render("{{ x ; y }}"), HasSubstr("unexpected character ';'"));
  EXPECT_THAT(Render("{% for x in y recursive %}{% endfor %}"), HasSubstr("recursive for loops are not supported"));
  EXPECT_THAT(Render("{{ f(*args) }}"), HasSubstr("*args and **kwargs"));
  EXPECT_THAT(Render("{{ 99999999999999999999 }}"), HasSubstr("integer literal out of range"));
}

TEST(JinjaTest, RenderErrorsCarryTheTemplatesMessageAndLine) {
  EXPECT_EQ(Render("x\n{{ raise_exception('Conversation roles must alternate') }}"),
            "RENDER ERROR: line 2: Conversation roles must alternate");
  EXPECT_EQ(Render("{{ nope.attr }}"), "RENDER ERROR: line 1: 'nope' is undefined");
  EXPECT_EQ(Render("{{ d.a.b }}", R"({"d": {}})"), "RENDER ERROR: line 1: 'dict object' has no attribute 'a'");
  EXPECT_THAT(Render("{{ 'a' + 1 }}"), HasSubstr("unsupported operand type(s) for +: 'str' and 'int'"));
  EXPECT_THAT(Render("{{ 1 // 0 }}"), HasSubstr("division or modulo by zero"));
  EXPECT_THAT(Render("{{ messages.append(1) }}", R"({"messages": []})"), HasSubstr("unsafe"));
  EXPECT_THAT(Render("{% set x = 1 %}{% set x.a = 2 %}"), HasSubstr("non-namespace"));
  EXPECT_THAT(Render("{{ 9223372036854775807 + 1 }}"), HasSubstr("integer overflow"));
  EXPECT_THAT(Render("{{ 2 ** 64 }}"), HasSubstr("integer overflow"));
}

// Hostile templates end in a clear error, not a crash, a hang or unbounded memory.
TEST(JinjaTest, NestingIsBounded) {
  EXPECT_THAT(Render("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}"),
              HasSubstr("nests deeper than"));
  EXPECT_THAT(Render("{{ " + std::string(100000, '[') + std::string(100000, ']') + " }}"), HasSubstr("nests deeper than"));
  EXPECT_THAT(Render("{{ " + std::string(50000, '-') + "1 }}"), HasSubstr("nests deeper than"));
  EXPECT_THAT(Render("{{ x" + std::string(50000, '.') + " }}"), StartsWith("PARSE ERROR"));
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
  EXPECT_THAT(Render(ifs), HasSubstr("nests deeper than"));
  std::string nots;
  for (int i = 0; i < 50000; ++i) nots += "not ";
  EXPECT_THAT(Render("{{ " + nots + "x }}"), HasSubstr("nests deeper than"));
  EXPECT_THAT(Render("{{ x" + std::string(50000, '|') + "trim }}"), StartsWith("PARSE ERROR"));
  EXPECT_THAT(Render("{{ " + std::string(100000, '{') + " }}"), HasSubstr("unterminated expression"));
}

TEST(JinjaTest, OutputLoopsAndRecursionAreBounded) {
  RenderOptions small;
  small.limits.max_output_bytes = 1000;
  small.limits.max_loop_iterations = 500;
  small.limits.max_call_depth = 10;
  EXPECT_THAT(Render("{% for i in range(100) %}{{ 'x' * 20 }}{% endfor %}", "{}", small),
              HasSubstr("rendered output exceeds 1000 bytes"));
  EXPECT_THAT(Render("{{ 'x' * 100000 }}", "{}", small), HasSubstr("exceeds 1000 bytes"));
  EXPECT_THAT(Render("{% set ns = namespace(s='xx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                     "{}", small),
              HasSubstr("exceeds 1000 bytes"));
  EXPECT_THAT(Render("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", "{}", small),
              HasSubstr("loop iterations"));
  EXPECT_THAT(Render("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}", "{}", small),
              HasSubstr("macro calls nest deeper than 10"));
  // Deep blocks in a recursive macro: the evaluator's stack is bounded too.
  std::string deep = "{% macro m(n) %}";
  for (int i = 0; i < 120; ++i) deep += "{% if true %}";
  deep += "{{ m(n + 1) }}";
  for (int i = 0; i < 120; ++i) deep += "{% endif %}";
  EXPECT_THAT(Render(deep + "{% endmacro %}{{ m(0) }}"), HasSubstr("template evaluation nests deeper than 1000 levels"));
  EXPECT_THAT(Render("{{ range(100001) | length }}"), HasSubstr("Range too big"));
  EXPECT_THAT(Render("{{ [1] * 100000000 }}"), HasSubstr("loop iterations"));
  // The defaults hold a generous chat prompt.
  EXPECT_EQ(Render("{% for i in range(1000) %}{{ 'x' * 100 }}{% endfor %}").size(), 100000u);
}

TEST(JinjaTest, UndefinedFollowsJinja2) {
  EXPECT_EQ(Render("[{{ nope }}][{{ nope | default('d') }}][{{ nope is defined }}][{% for x in nope %}x{% endfor %}]"),
            "[][d][False][]");
  EXPECT_EQ(Render("{{ d.missing is defined }} {{ d['missing'] | default(1) }}", R"({"d": {}})"), "False 1");
  EXPECT_EQ(Render("{{ 'a' if false }}|{{ none }}|{{ nope == nope }}"), "|None|True");
}

// Tool schemas and call arguments reach templates through FromJson: request text.
TEST(JinjaTest, FromJsonIsBoundedAndSafe) {
  // RapidJSON's full-precision strtod crashed on this (common/json_reader.cc).
  EXPECT_EQ(FromJson("0." + std::string(370, '0') + "88").kind(), Value::Kind::kFloat);
  EXPECT_THROW(FromJson(std::string(1000, '[') + std::string(1000, ']')), Error);
  EXPECT_THROW(FromJson("{\"a\": 1} trailing"), Error);
  EXPECT_THROW(FromJson("\"\xff\""), Error);  // not UTF-8
  EXPECT_EQ(FromJson(R"({"b": 1, "a": [true, null, "x"]})").Repr(), "{'b': 1, 'a': [True, None, 'x']}");
}

TEST(JinjaTest, StrftimeNowUsesTheInjectedClock) {
  RenderOptions options;
  options.strftime_now = [](const std::string& format) { return "<" + format + ">"; };
  EXPECT_EQ(Render("{{ strftime_now('%d %b %Y') }}", "{}", options), "<%d %b %Y>");
  EXPECT_EQ(Render("{{ strftime_now('%Y') | length }}"), "4");
}

TEST(JinjaTest, ReferencesFindsVariablesAnywhere) {
  auto t = Template::Parse("{% macro m(x=tools) %}{% endmacro %}{% for m in messages %}{% endfor %}");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->References("tools"));
  EXPECT_TRUE(t->References("messages"));
  EXPECT_FALSE(t->References("documents"));
}

}  // namespace
}  // namespace infera::jinja
