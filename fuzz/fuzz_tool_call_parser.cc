// Fuzz target: tool calls read back from model output (openai/tool_call_parser.h), whole
// and streamed.
//
// Input: byte 0 picks the format (bits 0-1: none, Hermes, Llama-3, Mistral) and the
// tool_choice mode (bits 2-3: auto, required, named, none); byte 1 the streaming step
// (1 to 64 bytes); the rest is the model's output.
// Invariants beyond "no crash": streaming the output in pieces gives the same calls
// (names and arguments) as reading it whole, and the same content up to the whitespace
// the whole answer trims; an output read as no calls comes back as content unchanged;
// every call's arguments are JSON text (parsed again).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/json_reader.h"
#include "openai/tool_call_parser.h"

namespace {

using infera::openai::ToolCallStream;

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  using infera::ToolCallFormat;
  using infera::openai::ToolChoiceMode;
  const ToolCallFormat format = static_cast<ToolCallFormat>(data[0] & 3);
  const ToolChoiceMode modes[] = {ToolChoiceMode::kAuto, ToolChoiceMode::kRequired, ToolChoiceMode::kNamed,
                                  ToolChoiceMode::kNone};
  const ToolChoiceMode mode = modes[(data[0] >> 2) & 3];
  const size_t step = 1 + data[1] % 64;
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  auto ids = [] { return std::string("call_x"); };

  ToolCallStream::Piece whole = ToolCallStream::Whole(mode, format, "named", ids, text);
  ToolCallStream stream(mode, format, "named", ids);
  ToolCallStream::Piece streamed;
  auto take = [&](ToolCallStream::Piece p) {
    streamed.content += p.content;
    for (auto& d : p.calls) {
      if (!streamed.calls.empty() && streamed.calls.back().index == d.index) streamed.calls.back().arguments += d.arguments;
      else streamed.calls.push_back(std::move(d));
    }
  };
  for (size_t at = 0; at < text.size(); at += step) take(stream.Add(text.substr(at, step)));
  take(stream.Finish());

  if (whole.calls.size() != streamed.calls.size()) std::abort();
  for (size_t i = 0; i < whole.calls.size(); ++i) {
    if (whole.calls[i].name != streamed.calls[i].name || whole.calls[i].arguments != streamed.calls[i].arguments) {
      std::abort();
    }
    if (mode != ToolChoiceMode::kNamed) {  // a named call's arguments are the raw output
      rapidjson::Document doc;
      if (!infera::ReadJson(whole.calls[i].arguments, "arguments", doc).ok()) std::abort();
    }
  }
  if (whole.calls.empty()) {
    if (whole.content != text || streamed.content != text) std::abort();
  } else if (Trim(streamed.content) != whole.content) {
    std::abort();
  }
  return 0;
}
