// The grammars that tool_choice required / a named function compile to (chat_tools.h,
// through src/guided/) accept the calls vLLM's form allows and nothing else — checked
// with the grammar engine's own matcher (src/grammar/), bytes only.
#include <string>

#include "gtest/gtest.h"
#include "grammar/compiled_grammar.h"
#include "grammar/grammar_matcher.h"
#include "openai/openai_requests.h"

namespace infera::openai {
namespace {

bool Accepts(const std::string& gbnf, const std::string& text) {
  auto compiled = grammar::CompiledGrammar::Compile(gbnf, nullptr);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return false;
  grammar::GrammarMatcher m(*compiled);
  return m.AcceptBytes(text) && m.CanEnd();
}

std::string GrammarOf(const std::string& tool_choice_fields) {
  auto r = ParseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [
      {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
        "properties": {"city": {"type": "string", "enum": ["Paris", "Oslo"]}, "celsius": {"type": "boolean"}},
        "required": ["city", "celsius"], "additionalProperties": false}}},
      {"type": "function", "function": {"name": "get_time"}}], )" + tool_choice_fields + "}");
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->sampling.grammar : "";
}

TEST(ToolChoiceGrammarTest, RequiredIsAnArrayOfTheToolsCalls) {
  const std::string g = GrammarOf(R"("tool_choice": "required")");
  EXPECT_TRUE(Accepts(g, R"([{"name": "get_weather", "parameters": {"city": "Paris", "celsius": true}}])"));
  EXPECT_TRUE(Accepts(g, R"([{"name":"get_time","parameters":{"x":1}},)"
                         R"({"name":"get_weather","parameters":{"city":"Oslo","celsius":false}}])"));
  EXPECT_FALSE(Accepts(g, "[]"));
  EXPECT_FALSE(Accepts(g, R"([{"name": "get_weather", "parameters": {"city": "Rome", "celsius": true}}])"));
  EXPECT_FALSE(Accepts(g, R"([{"name": "nope", "parameters": {}}])"));
  EXPECT_FALSE(Accepts(g, R"([{"name": "get_time"}])"));
  EXPECT_FALSE(Accepts(g, R"([{"name": "get_time", "parameters": {}, "extra": 1}])"));
}

TEST(ToolChoiceGrammarTest, WithoutParallelCallsOneCall) {
  const std::string g = GrammarOf(R"("tool_choice": "required", "parallel_tool_calls": false)");
  EXPECT_TRUE(Accepts(g, R"([{"name": "get_time", "parameters": {}}])"));
  EXPECT_FALSE(Accepts(g, R"([{"name": "get_time", "parameters": {}}, {"name": "get_time", "parameters": {}}])"));
}

TEST(ToolChoiceGrammarTest, NamedIsTheFunctionsArguments) {
  const std::string g = GrammarOf(R"("tool_choice": {"type": "function", "function": {"name": "get_weather"}})");
  EXPECT_TRUE(Accepts(g, R"({"city": "Paris", "celsius": true})"));
  EXPECT_FALSE(Accepts(g, R"({"city": "Paris"})"));
  EXPECT_FALSE(Accepts(g, R"({"city": "Paris", "celsius": true, "more": 1})"));
}

}  // namespace
}  // namespace infera::openai
