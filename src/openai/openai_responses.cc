#include "openai/openai_responses.h"

#include <random>

#include "common/json_writer.h"
#include "common/str_cat.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::openai {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteUsage(Writer& w, const Usage& u) {
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Int64(u.prompt_tokens);
  w.Key("completion_tokens");
  w.Int64(u.completion_tokens);
  w.Key("total_tokens");
  w.Int64(u.prompt_tokens + u.completion_tokens);
  w.Key("prompt_tokens_details");
  w.StartObject();
  w.Key("cached_tokens");
  w.Int64(u.cached_tokens);
  w.EndObject();
  w.EndObject();
}

void WriteFinish(Writer& w, const ChoiceDelta& c) {
  w.Key("finish_reason");
  if (c.finish_reason && *c.finish_reason == FinishReason::kStop && c.finished_with_tool_calls) w.String("tool_calls");
  else if (c.finish_reason && *c.finish_reason != FinishReason::kNone) WriteString(w, FinishReasonName(*c.finish_reason));
  else w.Null();
}

void WriteHeader(Writer& w, std::string_view id, std::string_view object, int64_t created, std::string_view model) {
  w.Key("id");
  WriteString(w, id);
  w.Key("object");
  WriteString(w, object);
  w.Key("created");
  w.Int64(created);
  w.Key("model");
  WriteString(w, model);
}

// {token: logprob} per token. Tokens whose texts are equal (e.g. partial UTF-8 shown as
// U+FFFD) share a key: the most likely one keeps it.
void WriteTopLogprobsDicts(Writer& w, const std::vector<std::vector<TopToken>>& top) {
  w.StartArray();
  for (const auto& alternatives : top) {
    w.StartObject();
    for (size_t i = 0; i < alternatives.size(); ++i) {
      const TopToken& t = alternatives[i];
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = alternatives[j].token == t.token;
      if (seen) continue;
      WriteString(w, t.token);
      w.Double(t.logprob);
    }
    w.EndObject();
  }
  w.EndArray();
}

void WriteCompletionLogprobs(Writer& w, const ChoiceDelta& c) {
  w.Key("logprobs");
  if (c.logprobs.empty()) return w.Null(), void();
  w.StartObject();
  w.Key("tokens");
  w.StartArray();
  for (const auto& t : c.tokens) WriteString(w, t);
  w.EndArray();
  w.Key("token_logprobs");
  w.StartArray();
  for (float l : c.logprobs) w.Double(l);
  w.EndArray();
  w.Key("top_logprobs");
  if (c.top.empty()) w.Null();
  else WriteTopLogprobsDicts(w, c.top);
  w.Key("text_offset");
  w.StartArray();
  for (int64_t o : c.text_offsets) w.Int64(o);
  w.EndArray();
  w.EndObject();
}

void WriteBytes(Writer& w, std::string_view bytes) {
  w.Key("bytes");
  w.StartArray();
  for (unsigned char b : bytes) w.Int(b);
  w.EndArray();
}

void WriteChatLogprobs(Writer& w, const ChoiceDelta& c) {
  w.Key("logprobs");
  if (c.logprobs.empty()) return w.Null(), void();
  w.StartObject();
  w.Key("content");
  w.StartArray();
  for (size_t i = 0; i < c.logprobs.size(); ++i) {
    w.StartObject();
    w.Key("token");
    WriteString(w, i < c.tokens.size() ? c.tokens[i] : "");
    w.Key("logprob");
    w.Double(c.logprobs[i]);
    WriteBytes(w, i < c.token_bytes.size() ? c.token_bytes[i] : "");
    w.Key("top_logprobs");
    w.StartArray();
    if (i < c.top.size()) {
      for (const TopToken& t : c.top[i]) {
        w.StartObject();
        w.Key("token");
        WriteString(w, t.token);
        w.Key("logprob");
        w.Double(t.logprob);
        WriteBytes(w, t.bytes);
        w.EndObject();
      }
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteCompletionChoice(Writer& w, const ChoiceDelta& c) {
  w.StartObject();
  w.Key("index");
  w.Int(c.index);
  w.Key("text");
  WriteString(w, c.text);
  WriteCompletionLogprobs(w, c);
  WriteFinish(w, c);
  w.EndObject();
}

// tool_calls: [{index (chunks), id, type, function: {name, arguments}}]; a chunk's
// continuation carries only index and function.arguments.
void WriteToolCalls(Writer& w, const std::vector<ToolCallDelta>& calls, bool chunk) {
  w.Key("tool_calls");
  w.StartArray();
  for (const ToolCallDelta& t : calls) {
    w.StartObject();
    if (chunk) {
      w.Key("index");
      w.Int(t.index);
    }
    if (!chunk || !t.id.empty()) {
      w.Key("id");
      WriteString(w, t.id);
      w.Key("type");
      w.String("function");
    }
    w.Key("function");
    w.StartObject();
    if (!chunk || !t.id.empty()) {
      w.Key("name");
      WriteString(w, t.name);
    }
    w.Key("arguments");
    WriteString(w, t.arguments);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

// The chat choice, whole ("message") or as a streamed chunk ("delta"; the role only in
// the first chunk).
void WriteChatChoice(Writer& w, const ChoiceDelta& c, bool chunk, bool with_role) {
  w.StartObject();
  w.Key("index");
  w.Int(c.index);
  w.Key(chunk ? "delta" : "message");
  w.StartObject();
  if (with_role) {
    w.Key("role");
    w.String("assistant");
  }
  w.Key("content");
  if (c.text.empty() && !c.tool_calls.empty()) w.Null();
  else WriteString(w, c.text);
  if (!c.tool_calls.empty()) WriteToolCalls(w, c.tool_calls, chunk);
  w.EndObject();
  WriteChatLogprobs(w, c);
  WriteFinish(w, c);
  w.EndObject();
}

std::string Done(const rapidjson::StringBuffer& b) { return std::string(b.GetString(), b.GetSize()); }

}  // namespace

std::string NewResponseId(std::string_view prefix) {
  thread_local std::random_device device;  // the OS's CSPRNG (getrandom / rdrand)
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  for (int word = 0; word < 4; ++word) {
    uint32_t bits = device();
    for (int i = 0; i < 8; ++i, bits >>= 4) id.push_back(kHex[bits & 15]);
  }
  return id;
}

std::string CompletionJson(std::string_view id, int64_t created, std::string_view model,
                           const std::vector<ChoiceDelta>& choices, const Usage& usage) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  WriteHeader(w, id, "text_completion", created, model);
  w.Key("choices");
  w.StartArray();
  for (const ChoiceDelta& c : choices) WriteCompletionChoice(w, c);
  w.EndArray();
  WriteUsage(w, usage);
  w.EndObject();
  return Done(b);
}

std::string CompletionChunkJson(std::string_view id, int64_t created, std::string_view model,
                                const ChoiceDelta& c) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  WriteHeader(w, id, "text_completion", created, model);
  w.Key("choices");
  w.StartArray();
  WriteCompletionChoice(w, c);
  w.EndArray();
  w.EndObject();
  return Done(b);
}

std::string ChatJson(std::string_view id, int64_t created, std::string_view model,
                     const std::vector<ChoiceDelta>& choices, const Usage& usage) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  WriteHeader(w, id, "chat.completion", created, model);
  w.Key("choices");
  w.StartArray();
  for (const ChoiceDelta& c : choices) WriteChatChoice(w, c, /*chunk=*/false, /*with_role=*/true);
  w.EndArray();
  WriteUsage(w, usage);
  w.EndObject();
  return Done(b);
}

std::string ChatChunkJson(std::string_view id, int64_t created, std::string_view model,
                          const ChoiceDelta& c, bool first) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  WriteHeader(w, id, "chat.completion.chunk", created, model);
  w.Key("choices");
  w.StartArray();
  WriteChatChoice(w, c, /*chunk=*/true, /*with_role=*/first);
  w.EndArray();
  w.EndObject();
  return Done(b);
}

std::string UsageChunkJson(std::string_view id, int64_t created, std::string_view model,
                           std::string_view object, const Usage& usage) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  WriteHeader(w, id, object, created, model);
  w.Key("choices");
  w.StartArray();
  w.EndArray();
  WriteUsage(w, usage);
  w.EndObject();
  return Done(b);
}

std::string SseEvent(std::string_view json) { return StrCat("data: ", json, "\n\n"); }

}  // namespace infera::openai
