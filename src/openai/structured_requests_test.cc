// The structured-output and tool-calling fields of OpenAI requests (output_constraint.h,
// chat_tools.h, the message fields of openai_requests.h): valid forms, one constraint per
// request, and hostile input — every refusal names its field.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "openai/chat_tools.h"
#include "openai/openai_requests.h"

namespace infera::openai {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string Chat(const std::string& extra) {
  return R"({"model": "m", "messages": [{"role": "user", "content": "hi"}])" + extra + "}";
}

std::string Error(const absl::StatusOr<ChatRequest>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : std::string(r.status().message());
}

constexpr char kWeather[] =
    R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}})";

TEST(StructuredRequestsTest, ResponseFormatTextAndJsonObject) {
  auto text = ParseChatRequest(Chat(R"(, "response_format": {"type": "text"})"));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->sampling.grammar, "");
  auto obj = ParseChatRequest(Chat(R"(, "response_format": {"type": "json_object"})"));
  ASSERT_TRUE(obj.ok()) << obj.status();
  EXPECT_THAT(obj->sampling.grammar, HasSubstr("root"));
  EXPECT_EQ(obj->sampling.constraint_kind, "json_object");
  auto completion = ParseCompletionRequest(R"({"model": "m", "prompt": "x", "response_format": {"type": "json_object"}})");
  ASSERT_TRUE(completion.ok()) << completion.status();
  EXPECT_EQ(completion->sampling.constraint_kind, "json_object");
}

TEST(StructuredRequestsTest, GuidedGrammarPassesThrough) {
  auto r = ParseChatRequest(Chat(R"(, "guided_grammar": "root ::= \"yes\" | \"no\"", "guided_decoding_backend": "xgrammar")"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->sampling.grammar, "root ::= \"yes\" | \"no\"");
  EXPECT_EQ(r->sampling.constraint_kind, "grammar");
}

TEST(StructuredRequestsTest, ConstraintsCompileToGrammars) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}, "strict": true}})",
       "response_format.json_schema.schema"},
      {R"(, "guided_json": {"type": "integer"})", "guided_json"},
      {R"(, "guided_json": "{\"type\": \"string\"}")", "guided_json"},
      {R"(, "guided_regex": "[a-z]+")", "guided_regex"},
      {R"(, "guided_choice": ["yes", "no"])", "guided_choice"},
  };
  for (const auto& [extra, field] : cases) {
    auto r = ParseChatRequest(Chat(extra));
    ASSERT_TRUE(r.ok()) << extra << ": " << r.status();
    EXPECT_THAT(r->sampling.grammar, HasSubstr("root ::=")) << extra;
    EXPECT_FALSE(r->sampling.constraint_kind.empty()) << extra;
  }
  // What a compiler does not support is a 400 naming the field and the keyword.
  auto unsupported = ParseChatRequest(Chat(R"(, "response_format": {"type": "json_schema", "json_schema": {"schema":
      {"type": "object", "patternProperties": {"^a": {}}}}})"));
  EXPECT_THAT(Error(unsupported), HasSubstr("'response_format.json_schema.schema'"));
  EXPECT_THAT(Error(unsupported), HasSubstr("patternProperties"));
  EXPECT_THAT(Error(ParseChatRequest(Chat(R"(, "guided_regex": "(a")"))), HasSubstr("'guided_regex'"));
}

TEST(StructuredRequestsTest, BadConstraintFieldsAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(, "response_format": "json")", "'response_format'"},
      {R"(, "response_format": {"type": "xml"})", "'response_format.type'"},
      {R"(, "response_format": {"type": "json_schema"})", "'response_format.json_schema'"},
      {R"(, "response_format": {"type": "json_schema", "json_schema": {"schema": 3}})", "'response_format.json_schema.schema'"},
      {R"(, "response_format": {"type": "json_schema", "json_schema": {"schema": {}, "strict": "yes"}})", "strict"},
      {R"(, "guided_json": 5)", "'guided_json'"},
      {R"(, "guided_json": "{not json")", "guided_json"},
      {R"(, "guided_json": "[1]")", "'guided_json'"},
      {R"(, "guided_regex": 1)", "'guided_regex'"},
      {R"(, "guided_choice": [])", "'guided_choice'"},
      {R"(, "guided_choice": ["a", 1])", "'guided_choice'"},
      {R"(, "guided_grammar": "")", "'guided_grammar'"},
      {R"(, "guided_decoding_backend": 1)", "'guided_decoding_backend'"},
      {R"(, "guided_whitespace_pattern": " ")", "'guided_whitespace_pattern'"},
      {R"(, "guided_grammar": "root ::= \"a\"", "response_format": {"type": "json_object"})", "at most one"},
      {R"(, "guided_grammar": "root ::= \"a\"", "guided_json": {}, "guided_regex": "a")", "at most one"},
      {R"(, "functions": [])", "'functions'"},
  };
  for (const auto& [extra, want] : cases) {
    EXPECT_THAT(Error(ParseChatRequest(Chat(extra))), HasSubstr(want)) << extra;
  }
  std::string big_choice = R"(, "guided_choice": [)";
  for (int i = 0; i < 5000; ++i) big_choice += std::string(i ? "," : "") + "\"c\"";
  EXPECT_THAT(Error(ParseChatRequest(Chat(big_choice + "]"))), HasSubstr("'guided_choice'"));
  EXPECT_THAT(std::string(ParseCompletionRequest(R"({"model": "m", "prompt": "x", "tools": []})").status().message()),
              HasSubstr("'tools'"));
}

TEST(StructuredRequestsTest, ToolsAndToolChoice) {
  auto r = ParseChatRequest(Chat(std::string(R"(, "tools": [)") + kWeather + "]"));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_THAT(r->tools.tools, SizeIs(1));
  EXPECT_EQ(r->tools.tools[0].name, "get_weather");
  EXPECT_EQ(r->tools.tools[0].description, "Weather now");
  EXPECT_THAT(r->tools.tools[0].parameters_json, HasSubstr(R"("required":["city"])"));
  EXPECT_EQ(r->tools.choice.mode, ToolChoiceMode::kAuto);  // OpenAI's default with tools
  EXPECT_EQ(r->sampling.grammar, "");                       // auto does not constrain
  auto none = ParseChatRequest(Chat(std::string(R"(, "tool_choice": "none", "tools": [)") + kWeather + "]"));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->tools.choice.mode, ToolChoiceMode::kNone);
  auto no_tools = ParseChatRequest(Chat(""));
  ASSERT_TRUE(no_tools.ok());
  EXPECT_EQ(no_tools->tools.choice.mode, ToolChoiceMode::kNone);
}

TEST(StructuredRequestsTest, RequiredAndNamedBuildVllmsSchemas) {
  ChatTools t;
  t.tools = {{"a", "", R"({"type":"object"})"}, {"b", "", R"({"type":"object","properties":{"x":{"type":"integer"}}})"}};
  t.strict = {false, false};
  t.choice.mode = ToolChoiceMode::kRequired;
  EXPECT_EQ(ToolChoiceSchema(t),
            R"({"type":"array","minItems":1,"items":{"anyOf":[)"
            R"({"type":"object","properties":{"name":{"type":"string","enum":["a"]},"parameters":{"type":"object"}},)"
            R"("required":["name","parameters"],"additionalProperties":false},)"
            R"({"type":"object","properties":{"name":{"type":"string","enum":["b"]},"parameters":)"
            R"({"type":"object","properties":{"x":{"type":"integer"}}}},"required":["name","parameters"],)"
            R"("additionalProperties":false}]}})");
  t.parallel_tool_calls = false;
  EXPECT_THAT(ToolChoiceSchema(t), HasSubstr(R"("minItems":1,"maxItems":1,)"));
  t.choice = {ToolChoiceMode::kNamed, "b"};
  EXPECT_EQ(ToolChoiceSchema(t), t.tools[1].parameters_json);
  t.choice = {ToolChoiceMode::kAuto, ""};
  EXPECT_EQ(ToolChoiceSchema(t), "");
  // Through the parser: compiled into the grammar.
  for (const std::string& choice : {std::string(R"("required")"),
                                    std::string(R"({"type": "function", "function": {"name": "get_weather"}})")}) {
    auto r = ParseChatRequest(Chat(std::string(R"(, "tools": [)") + kWeather + R"(], "tool_choice": )" + choice));
    ASSERT_TRUE(r.ok()) << choice << ": " << r.status();
    EXPECT_EQ(r->sampling.constraint_kind, "tools");
    EXPECT_THAT(r->sampling.grammar, HasSubstr("root ::="));
  }
  // A parameters schema the compiler refuses: named by the tool's field.
  auto bad = ParseChatRequest(Chat(R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters":
      {"type": "object", "patternProperties": {"^a": {}}}}}], "tool_choice": {"type": "function", "function": {"name": "f"}})"));
  EXPECT_THAT(Error(bad), HasSubstr("'tools[0].function.parameters'"));
  auto bad_required = ParseChatRequest(Chat(R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters":
      {"type": "object", "patternProperties": {"^a": {}}}}}], "tool_choice": "required")"));
  EXPECT_THAT(Error(bad_required), HasSubstr("'tools'"));
}

TEST(StructuredRequestsTest, BadToolsAreNamed) {
  const std::string w = kWeather;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(, "tools": {})", "'tools'"},
      {R"(, "tools": [1])", "'tools[0]'"},
      {R"(, "tools": [{"type": "retrieval"}])", "'tools[0].type'"},
      {R"(, "tools": [{"type": "function"}])", "'tools[0].function'"},
      {R"(, "tools": [{"type": "function", "function": {"name": "has space"}}])", "'tools[0].function.name'"},
      {R"(, "tools": [{"type": "function", "function": {"name": ""}}])", "'tools[0].function.name'"},
      {R"(, "tools": [{"type": "function", "function": {"name": ")" + std::string(65, 'a') + R"("}}])",
       "'tools[0].function.name'"},
      {R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters": []}}])", "'tools[0].function.parameters'"},
      {R"(, "tools": [{"type": "function", "function": {"name": "f", "description": 1}}])", "'tools[0].function.description'"},
      {", \"tools\": [" + w + "," + w + "]", "given twice"},
      {R"(, "tool_choice": "required")", "needs 'tools'"},
      {", \"tools\": [" + w + R"(], "tool_choice": "always")", "'tool_choice'"},
      {", \"tools\": [" + w + R"(], "tool_choice": {"type": "function", "function": {"name": "other"}})",
       "'tool_choice.function.name'"},
      {", \"tools\": [" + w + R"(], "tool_choice": {"type": "function"})", "'tool_choice'"},
      {", \"tools\": [" + w + R"(], "parallel_tool_calls": "no")", "'parallel_tool_calls'"},
      {", \"tools\": [" + w + R"(], "tool_choice": "required", "response_format": {"type": "json_object"})",
       "one output constraint"},
  };
  for (const auto& [extra, want] : cases) {
    EXPECT_THAT(Error(ParseChatRequest(Chat(extra))), HasSubstr(want)) << extra;
  }
  std::string huge = R"(, "tools": [)";
  for (size_t i = 0; i <= kMaxTools; ++i) {
    huge += (i ? "," : "") + std::string(R"({"type": "function", "function": {"name": "f)") + std::to_string(i) + "\"}}";
  }
  EXPECT_THAT(Error(ParseChatRequest(Chat(huge + "]"))), HasSubstr("at most 128 tools"));
}

TEST(StructuredRequestsTest, ToolMessagesAndAssistantToolCalls) {
  auto r = ParseChatRequest(R"({"model": "m", "messages": [
      {"role": "user", "content": "weather?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
          "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_THAT(r->messages, SizeIs(3));
  EXPECT_EQ(r->messages[1].content, "");
  ASSERT_THAT(r->messages[1].tool_calls, SizeIs(1));
  EXPECT_EQ(r->messages[1].tool_calls[0].id, "call_1");
  EXPECT_EQ(r->messages[1].tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(r->messages[2].tool_call_id, "call_1");
  EXPECT_EQ(r->messages[2].content, "sunny");

  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"role": "tool", "content": "x"})", "'messages[1].tool_call_id'"},
      {R"({"role": "user", "content": "x", "tool_calls": []})", "'messages[1].tool_calls'"},
      {R"({"role": "assistant", "tool_calls": {}})", "'messages[1].tool_calls'"},
      {R"({"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{nope"}}]})",
       "'messages[1].tool_calls[0].function.arguments'"},
      {R"({"role": "assistant", "tool_calls": [{"function": {"name": "bad name"}}]})",
       "'messages[1].tool_calls[0].function.name'"},
      {R"({"role": "assistant", "tool_calls": [{"type": "code", "function": {"name": "f"}}]})",
       "'messages[1].tool_calls[0].type'"},
      {R"({"role": "assistant", "tool_calls": [7]})", "'messages[1].tool_calls[0]'"},
  };
  for (const auto& [message, want] : bad) {
    auto b = ParseChatRequest(R"({"model": "m", "messages": [{"role": "user", "content": "x"}, )" + message + "]}");
    EXPECT_THAT(Error(b), HasSubstr(want)) << message;
  }
  std::string many = R"({"model": "m", "messages": [{"role": "assistant", "tool_calls": [)";
  for (int i = 0; i < 200; ++i) many += std::string(i ? "," : "") + R"({"function": {"name": "f"}})";
  EXPECT_THAT(Error(ParseChatRequest(many + "]}]}")), HasSubstr("at most 128 calls"));
}

TEST(StructuredRequestsTest, NestedJunkIsBounded) {
  // Deep nesting in a schema or in arguments: the JSON reader's depth limit, a 400.
  std::string deep = std::string(5000, '[') + std::string(5000, ']');
  EXPECT_FALSE(ParseChatRequest(Chat(R"(, "guided_json": )" + deep)).ok());
  EXPECT_FALSE(ParseChatRequest(Chat(R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters": )" +
                                     deep + "}}]"))
                   .ok());
}

}  // namespace
}  // namespace infera::openai
