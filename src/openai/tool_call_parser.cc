#include "openai/tool_call_parser.h"

#include <utility>

#include "common/json_reader.h"
#include "openai/json_text.h"
#include "text/json_util.h"

namespace infera::openai {
namespace {

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kMistralMarker = "[TOOL_CALLS]";
constexpr std::string_view kPythonTag = "<|python_tag|>";

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// One call object: {"name": string, <args_key>: value} (Llama-3 also takes
// "arguments"). Arguments are compact JSON; absent: {}.
std::optional<ChatToolCall> CallFromJson(const rapidjson::Value& v, std::string_view args_key) {
  if (!v.IsObject()) return std::nullopt;
  auto name = text::GetString(v, "name");
  if (!name || name->empty()) return std::nullopt;
  ChatToolCall call;
  call.name = std::move(*name);
  const rapidjson::Value* args = text::FindMember(v, args_key);
  if (!args && args_key == "parameters") args = text::FindMember(v, "arguments");
  call.arguments = args ? JsonText(*args) : "{}";
  return call;
}

std::optional<ChatToolCall> CallFromText(std::string_view json, std::string_view args_key) {
  rapidjson::Document doc;
  if (!ReadJson(json, "tool call", doc).ok()) return std::nullopt;
  return CallFromJson(doc, args_key);
}

// A JSON array of call objects.
std::optional<std::vector<ChatToolCall>> CallsFromArray(std::string_view json, std::string_view args_key) {
  rapidjson::Document doc;
  if (!ReadJson(json, "tool calls", doc).ok() || !doc.IsArray() || doc.Empty()) return std::nullopt;
  std::vector<ChatToolCall> calls;
  for (const auto& v : doc.GetArray()) {
    std::optional<ChatToolCall> call = CallFromJson(v, args_key);
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
  }
  return calls;
}

std::optional<std::vector<ChatToolCall>> ParseHermes(std::string_view text) {
  std::vector<ChatToolCall> calls;
  size_t at = text.find(kHermesOpen);
  while (at != std::string_view::npos) {
    const size_t body = at + kHermesOpen.size();
    const size_t close = text.find(kHermesClose, body);
    std::optional<ChatToolCall> call = CallFromText(Trim(text.substr(body, close == std::string_view::npos ? std::string_view::npos : close - body)), "arguments");
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
    if (close == std::string_view::npos) break;  // unterminated: the output's end
    at = text.find(kHermesOpen, close + kHermesClose.size());
  }
  return calls;
}

std::optional<std::vector<ChatToolCall>> ParseLlama3(std::string_view text) {
  text = Trim(text);
  if (text.starts_with(kPythonTag)) text = Trim(text.substr(kPythonTag.size()));
  std::vector<ChatToolCall> calls;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = JsonValueEnd(text, at);
    if (end == std::string_view::npos) return std::nullopt;
    std::optional<ChatToolCall> call = CallFromText(text.substr(at, end - at), "parameters");
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
    at = text.find_first_not_of(" \t\r\n", end);
    if (at == std::string_view::npos) break;
    if (text[at] != ';') return std::nullopt;
    at = text.find_first_not_of(" \t\r\n", at + 1);
    if (at == std::string_view::npos) break;
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

std::optional<std::vector<ChatToolCall>> ParseMistral(std::string_view text) {
  text = Trim(text);
  if (!text.starts_with("[")) return std::nullopt;
  const size_t end = JsonValueEnd(text, 0);
  if (end == std::string_view::npos) return std::nullopt;
  return CallsFromArray(text.substr(0, end), "arguments");
}

// The longest suffix of `s` that is a proper prefix of `marker`.
size_t PartialMarker(std::string_view s, std::string_view marker) {
  for (size_t n = std::min(s.size(), marker.size() - 1); n > 0; --n) {
    if (marker.starts_with(s.substr(s.size() - n))) return n;
  }
  return 0;
}

}  // namespace

size_t JsonValueEnd(std::string_view text, size_t start) {
  if (start >= text.size() || (text[start] != '{' && text[start] != '[')) return std::string_view::npos;
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

ParsedToolOutput ParseToolCalls(ToolCallFormat format, std::string_view text) {
  ParsedToolOutput out;
  std::optional<std::vector<ChatToolCall>> calls;
  std::string_view content;
  switch (format) {
    case ToolCallFormat::kNone: break;
    case ToolCallFormat::kHermes: {
      const size_t at = text.find(kHermesOpen);
      if (at == std::string_view::npos) break;
      content = text.substr(0, at);
      calls = ParseHermes(text.substr(at));
      break;
    }
    case ToolCallFormat::kLlama3: {
      const std::string_view t = Trim(text);
      if (t.starts_with("{") || t.starts_with(kPythonTag)) calls = ParseLlama3(t);
      break;
    }
    case ToolCallFormat::kMistral: {
      const size_t at = text.find(kMistralMarker);
      if (at != std::string_view::npos) {
        content = text.substr(0, at);
        calls = ParseMistral(text.substr(at + kMistralMarker.size()));
      } else if (Trim(text).starts_with("[")) {
        // [TOOL_CALLS] is a special token, left out of the text by skip_special_tokens
        // (the default): the output is then the calls' array itself.
        calls = ParseMistral(text);
      }
      break;
    }
  }
  if (!calls || calls->empty()) {
    out.content = std::string(text);
    return out;
  }
  out.content = std::string(Trim(content));
  out.calls = std::move(*calls);
  return out;
}

std::optional<std::vector<ChatToolCall>> ParseRequiredToolCalls(std::string_view text) {
  return CallsFromArray(Trim(text), "parameters");
}

ToolCallStream::ToolCallStream(ToolChoiceMode mode, ToolCallFormat format, std::string named_function,
                               std::function<std::string()> new_id)
    : mode_(mode == ToolChoiceMode::kAuto && format == ToolCallFormat::kNone ? ToolChoiceMode::kNone : mode),
      format_(format),
      named_(std::move(named_function)),
      new_id_(std::move(new_id)) {}

std::string_view ToolCallStream::Marker() const {
  return format_ == ToolCallFormat::kHermes ? kHermesOpen : format_ == ToolCallFormat::kMistral ? kMistralMarker : "";
}

void ToolCallStream::EmitCalls(const std::vector<ChatToolCall>& calls, Piece& piece) {
  for (const ChatToolCall& c : calls) {
    piece.calls.push_back({calls_, new_id_(), c.name, ""});
    piece.calls.push_back({calls_, "", "", c.arguments});
    ++calls_;
  }
}

ToolCallStream::Piece ToolCallStream::Add(std::string_view text) {
  Piece piece;
  switch (mode_) {
    case ToolChoiceMode::kNone:
      piece.content = std::string(text);
      return piece;
    case ToolChoiceMode::kNamed:
      if (calls_ == 0) {
        piece.calls.push_back({0, new_id_(), named_, ""});
        calls_ = 1;
      }
      if (!text.empty()) piece.calls.push_back({0, "", "", std::string(text)});
      return piece;
    case ToolChoiceMode::kRequired:
      held_ += text;
      return piece;
    case ToolChoiceMode::kAuto:
      break;
  }
  held_ += text;
  if (in_calls_) return piece;
  if (format_ == ToolCallFormat::kLlama3) {
    // The output is calls or content as a whole: decided on its first non-blank bytes.
    if (decided_) {
      piece.content = std::move(held_);
      held_.clear();
      return piece;
    }
    const std::string_view t = Trim(held_);
    if (t.empty() || (t.size() < kPythonTag.size() && kPythonTag.starts_with(t))) return piece;
    decided_ = true;
    in_calls_ = t.starts_with("{") || t.starts_with(kPythonTag);
    if (!in_calls_) {
      piece.content = std::move(held_);
      held_.clear();
    }
    return piece;
  }
  if (format_ == ToolCallFormat::kMistral && !decided_) {
    // Without its special token, a Mistral call is an output that begins with "[".
    const std::string_view t = Trim(held_);
    if (t.empty()) return piece;
    decided_ = true;
    if (t.starts_with("[")) {
      in_calls_ = true;
      return piece;
    }
  }
  const std::string_view marker = Marker();
  const size_t at = held_.find(marker);
  if (at != std::string::npos) {
    piece.content = held_.substr(0, at);
    held_.erase(0, at);
    in_calls_ = true;
    return piece;
  }
  const size_t keep = PartialMarker(held_, marker);
  piece.content = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return piece;
}

ToolCallStream::Piece ToolCallStream::Finish() {
  Piece piece;
  std::string held = std::move(held_);
  held_.clear();
  if (mode_ == ToolChoiceMode::kNamed) {
    if (calls_ == 0) piece = Add("");
    return piece;
  }
  if (mode_ == ToolChoiceMode::kRequired) {
    if (auto calls = ParseRequiredToolCalls(held)) EmitCalls(*calls, piece);
    else piece.content = std::move(held);  // e.g. cut short by max_tokens
    return piece;
  }
  if (!in_calls_) {
    piece.content = std::move(held);
    return piece;
  }
  ParsedToolOutput parsed = ParseToolCalls(format_, held);
  if (parsed.calls.empty()) {
    piece.content = std::move(held);
    return piece;
  }
  EmitCalls(parsed.calls, piece);
  return piece;
}

ToolCallStream::Piece ToolCallStream::Whole(ToolChoiceMode mode, ToolCallFormat format, std::string named_function,
                                            std::function<std::string()> new_id, std::string_view text) {
  ToolCallStream stream(mode, format, std::move(named_function), std::move(new_id));
  Piece all = stream.Add(text);
  Piece rest = stream.Finish();
  all.content += rest.content;
  all.calls.insert(all.calls.end(), rest.calls.begin(), rest.calls.end());
  Piece merged;
  merged.content = std::move(all.content);
  for (ToolCallDelta& d : all.calls) {
    if (!merged.calls.empty() && merged.calls.back().index == d.index) merged.calls.back().arguments += d.arguments;
    else merged.calls.push_back(std::move(d));
  }
  if (!merged.calls.empty()) merged.content = std::string(Trim(merged.content));
  return merged;
}

}  // namespace infera::openai
