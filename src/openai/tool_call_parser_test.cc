// Tool calls read back from model output, per family, whole and streamed; hostile output.
#include "openai/tool_call_parser.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::openai {
namespace {

using ::testing::SizeIs;

std::function<std::string()> Ids() {
  auto n = std::make_shared<int>(0);
  return [n] { return "call_" + std::to_string((*n)++); };
}

TEST(ToolCallParserTest, Hermes) {
  ParsedToolOutput p = ParseToolCalls(
      ToolCallFormat::kHermes,
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>{\"name\": \"t2\", \"arguments\": {}}");  // the last one unterminated (EOS)
  EXPECT_EQ(p.content, "Let me check.");
  ASSERT_THAT(p.calls, SizeIs(2));
  EXPECT_EQ(p.calls[0].name, "get_weather");
  EXPECT_EQ(p.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(p.calls[1].name, "t2");
  EXPECT_EQ(p.calls[1].arguments, "{}");
}

TEST(ToolCallParserTest, Llama3JsonWithParametersOrArguments) {
  ParsedToolOutput p = ParseToolCalls(ToolCallFormat::kLlama3,
                                      " <|python_tag|>{\"name\": \"a\", \"parameters\": {\"x\": 1}}; "
                                      "{\"name\": \"b\", \"arguments\": {\"y\": [1, {\"z\": \"}\"}]}}");
  EXPECT_EQ(p.content, "");
  ASSERT_THAT(p.calls, SizeIs(2));
  EXPECT_EQ(p.calls[0].arguments, R"({"x":1})");
  EXPECT_EQ(p.calls[1].name, "b");
  EXPECT_EQ(p.calls[1].arguments, R"({"y":[1,{"z":"}"}]})");
  EXPECT_THAT(ParseToolCalls(ToolCallFormat::kLlama3, "Hello {\"name\": \"a\"}").calls, SizeIs(0));
}

TEST(ToolCallParserTest, Mistral) {
  ParsedToolOutput p = ParseToolCalls(
      ToolCallFormat::kMistral, "Sure.[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {\"q\": \"a\"}, \"id\": \"x\"}]");
  EXPECT_EQ(p.content, "Sure.");
  ASSERT_THAT(p.calls, SizeIs(1));
  EXPECT_EQ(p.calls[0].name, "f");
  EXPECT_EQ(p.calls[0].arguments, R"({"q":"a"})");
  // [TOOL_CALLS] skipped as a special token: the array alone.
  ParsedToolOutput skipped = ParseToolCalls(ToolCallFormat::kMistral, R"( [{"name": "f", "arguments": {}}])");
  EXPECT_EQ(skipped.content, "");
  ASSERT_THAT(skipped.calls, SizeIs(1));
  EXPECT_THAT(ParseToolCalls(ToolCallFormat::kMistral, "[1] is a footnote").calls, SizeIs(0));
}

TEST(ToolCallParserTest, OutputThatIsNotACallStaysContent) {
  const std::vector<std::pair<ToolCallFormat, std::string>> cases = {
      {ToolCallFormat::kHermes, "a <tool_call>{not json}</tool_call>"},
      {ToolCallFormat::kHermes, "<tool_call>{\"arguments\": {}}</tool_call>"},  // no name
      {ToolCallFormat::kHermes, "<tool_call>{\"name\": 5}</tool_call>"},
      {ToolCallFormat::kHermes, "<tool_call>[1,2]</tool_call>"},
      {ToolCallFormat::kLlama3, "{\"name\": \"a\", \"parameters\": {}"},  // truncated
      {ToolCallFormat::kLlama3, "{\"name\": \"a\"} trailing"},
      {ToolCallFormat::kMistral, "[TOOL_CALLS] [{\"name\": \"f\"}, 3]"},
      {ToolCallFormat::kMistral, "[TOOL_CALLS] {\"name\": \"f\"}"},
      {ToolCallFormat::kNone, "<tool_call>{\"name\": \"a\"}</tool_call>"},
  };
  for (const auto& [format, text] : cases) {
    ParsedToolOutput p = ParseToolCalls(format, text);
    EXPECT_THAT(p.calls, SizeIs(0)) << text;
    EXPECT_EQ(p.content, text);
  }
}

TEST(ToolCallParserTest, DeepNestingAndHugeOutputAreBounded) {
  const std::string deep = "<tool_call>{\"name\": \"a\", \"arguments\": " + std::string(100000, '[') +
                           std::string(100000, ']') + "}</tool_call>";
  ParsedToolOutput p = ParseToolCalls(ToolCallFormat::kHermes, deep);  // over the depth limit: content
  EXPECT_THAT(p.calls, SizeIs(0));
  EXPECT_EQ(JsonValueEnd(std::string(1000000, '{'), 0), std::string_view::npos);
  std::string many = "[";
  for (int i = 0; i < 10000; ++i) many += std::string(i ? "," : "") + "{\"name\":\"f\",\"parameters\":{}}";
  many += "]";
  auto calls = ParseRequiredToolCalls(many);
  ASSERT_TRUE(calls.has_value());
  EXPECT_THAT(*calls, SizeIs(10000));
}

TEST(ToolCallParserTest, RequiredIsVllmsArray) {
  auto calls = ParseRequiredToolCalls(R"([{"name": "a", "parameters": {"k": true}}, {"name": "b", "parameters": {}}])");
  ASSERT_TRUE(calls.has_value());
  ASSERT_THAT(*calls, SizeIs(2));
  EXPECT_EQ((*calls)[0].arguments, R"({"k":true})");
  EXPECT_FALSE(ParseRequiredToolCalls("[]").has_value());
  EXPECT_FALSE(ParseRequiredToolCalls(R"([{"name": "a", "parameters": {})").has_value());  // cut short
}

// Streams `text` a few bytes at a time; returns the content and the merged calls.
ToolCallStream::Piece StreamInPieces(ToolChoiceMode mode, ToolCallFormat format, std::string_view text, size_t step,
                                     int* content_pieces_before_calls = nullptr) {
  ToolCallStream s(mode, format, "named_fn", Ids());
  ToolCallStream::Piece all;
  for (size_t at = 0; at < text.size(); at += step) {
    ToolCallStream::Piece p = s.Add(text.substr(at, step));
    if (content_pieces_before_calls && !p.content.empty() && all.calls.empty()) ++*content_pieces_before_calls;
    all.content += p.content;
    all.calls.insert(all.calls.end(), p.calls.begin(), p.calls.end());
  }
  ToolCallStream::Piece rest = s.Finish();
  all.content += rest.content;
  all.calls.insert(all.calls.end(), rest.calls.begin(), rest.calls.end());
  return all;
}

TEST(ToolCallStreamTest, HermesStreamsContentThenWholeCalls) {
  const std::string text = "Thinking about it.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";
  for (size_t step : {1, 3, 7, 1000}) {
    int content_pieces = 0;
    ToolCallStream::Piece p = StreamInPieces(ToolChoiceMode::kAuto, ToolCallFormat::kHermes, text, step, &content_pieces);
    EXPECT_EQ(p.content, "Thinking about it.\n") << step;
    ASSERT_THAT(p.calls, SizeIs(2)) << step;  // the header, then the arguments
    EXPECT_EQ(p.calls[0].index, 0);
    EXPECT_EQ(p.calls[0].id, "call_0");
    EXPECT_EQ(p.calls[0].name, "f");
    EXPECT_EQ(p.calls[0].arguments, "");
    EXPECT_EQ(p.calls[1].id, "");
    EXPECT_EQ(p.calls[1].arguments, R"({"a":1})");
    if (step == 1) EXPECT_GT(content_pieces, 5);  // the content streamed before the call
  }
  // A partial marker that turns out to be text is sent.
  ToolCallStream::Piece p = StreamInPieces(ToolChoiceMode::kAuto, ToolCallFormat::kHermes, "a <tool but no call", 2);
  EXPECT_EQ(p.content, "a <tool but no call");
  EXPECT_THAT(p.calls, SizeIs(0));
}

TEST(ToolCallStreamTest, Llama3DecidesOnTheFirstBytes) {
  ToolCallStream::Piece calls = StreamInPieces(ToolChoiceMode::kAuto, ToolCallFormat::kLlama3,
                                               "  {\"name\": \"f\", \"parameters\": {}}", 2);
  EXPECT_EQ(calls.content, "");
  ASSERT_THAT(calls.calls, SizeIs(2));
  ToolCallStream::Piece text = StreamInPieces(ToolChoiceMode::kAuto, ToolCallFormat::kLlama3, "  Hello {x}", 2);
  EXPECT_EQ(text.content, "  Hello {x}");
  ToolCallStream::Piece bad = StreamInPieces(ToolChoiceMode::kAuto, ToolCallFormat::kLlama3, "{\"oops\": 1}", 2);
  EXPECT_EQ(bad.content, "{\"oops\": 1}");
  EXPECT_THAT(bad.calls, SizeIs(0));
}

TEST(ToolCallStreamTest, MistralWithAndWithoutItsMarker) {
  for (size_t step : {1, 5, 100}) {
    ToolCallStream::Piece marked = StreamInPieces(ToolChoiceMode::kAuto, ToolCallFormat::kMistral,
                                                  "Ok.[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}]", step);
    EXPECT_EQ(marked.content, "Ok.");
    ASSERT_THAT(marked.calls, SizeIs(2));
    ToolCallStream::Piece bare = StreamInPieces(ToolChoiceMode::kAuto, ToolCallFormat::kMistral,
                                                " [{\"name\": \"f\", \"arguments\": {\"a\": 2}}]", step);
    EXPECT_EQ(bare.content, "");
    ASSERT_THAT(bare.calls, SizeIs(2));
    EXPECT_EQ(bare.calls[1].arguments, R"({"a":2})");
    ToolCallStream::Piece text = StreamInPieces(ToolChoiceMode::kAuto, ToolCallFormat::kMistral, "[1] is text", step);
    EXPECT_EQ(text.content, "[1] is text");
    EXPECT_THAT(text.calls, SizeIs(0));
  }
}

TEST(ToolCallStreamTest, NamedStreamsArgumentsAndRequiredIsWhole) {
  ToolCallStream named(ToolChoiceMode::kNamed, ToolCallFormat::kHermes, "get", Ids());
  ToolCallStream::Piece first = named.Add("{\"a\"");
  ASSERT_THAT(first.calls, SizeIs(2));
  EXPECT_EQ(first.calls[0].id, "call_0");
  EXPECT_EQ(first.calls[0].name, "get");
  EXPECT_EQ(first.calls[1].arguments, "{\"a\"");
  ToolCallStream::Piece second = named.Add(": 1}");
  ASSERT_THAT(second.calls, SizeIs(1));
  EXPECT_EQ(second.calls[0].arguments, ": 1}");
  EXPECT_THAT(named.Finish().calls, SizeIs(0));
  EXPECT_TRUE(named.called());

  ToolCallStream::Piece req = StreamInPieces(
      ToolChoiceMode::kRequired, ToolCallFormat::kHermes,
      R"([{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}])", 4);
  ASSERT_THAT(req.calls, SizeIs(4));
  EXPECT_EQ(req.calls[2].index, 1);
  EXPECT_EQ(req.calls[2].name, "b");
  ToolCallStream::Piece cut = StreamInPieces(ToolChoiceMode::kRequired, ToolCallFormat::kHermes, R"([{"name": "a")", 4);
  EXPECT_EQ(cut.content, R"([{"name": "a")");  // max_tokens cut it: text, not a call
}

TEST(ToolCallStreamTest, WholeMergesTheDeltas) {
  ToolCallStream::Piece p = ToolCallStream::Whole(ToolChoiceMode::kAuto, ToolCallFormat::kMistral, "", Ids(),
                                                  "Ok [TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]");
  EXPECT_EQ(p.content, "Ok");
  ASSERT_THAT(p.calls, SizeIs(1));
  EXPECT_EQ(p.calls[0].id, "call_0");
  EXPECT_EQ(p.calls[0].arguments, "{}");
  ToolCallStream::Piece none = ToolCallStream::Whole(ToolChoiceMode::kAuto, ToolCallFormat::kNone, "", Ids(),
                                                     "<tool_call>{\"name\": \"f\"}</tool_call>");
  EXPECT_THAT(none.calls, SizeIs(0));
}

}  // namespace
}  // namespace infera::openai
