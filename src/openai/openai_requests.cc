#include "openai/openai_requests.h"

#include <cstdint>

#include "common/status.h"
#include "common/json_reader.h"
#include "common/str_cat.h"
#include "openai/json_text.h"
#include "openai/output_constraint.h"
#include "text/json_util.h"

namespace infera::openai {
namespace {

using text::AsView;
using text::FindMember;
using text::GetString;

absl::Status Field(std::string_view name, std::string_view rule) {
  return absl::InvalidArgumentError(StrCat("'", name, "' ", rule));
}

absl::Status GetFlag(const rapidjson::Value& obj, const char* key, bool& out) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsBool()) return Field(key, "must be a boolean");
  out = v->GetBool();
  return absl::OkStatus();
}

absl::StatusOr<rapidjson::Document> ParseObject(std::string_view body) {
  rapidjson::Document doc;
  RETURN_IF_ERROR(text::ParseJson(body, "request body", doc));
  if (!doc.IsObject()) return absl::InvalidArgumentError("the request body must be a JSON object");
  return doc;
}

// The fields both endpoints share.
absl::Status ParseCommon(const rapidjson::Value& doc, std::string& model, bool& stream, bool& include_usage,
                         int& priority) {
  auto m = GetString(doc, "model");
  if (!m) return Field("model", "is required (a string)");
  model = *m;
  RETURN_IF_ERROR(GetFlag(doc, "stream", stream));
  if (const rapidjson::Value* so = FindMember(doc, "stream_options")) {
    if (!so->IsObject()) return Field("stream_options", "must be an object");
    RETURN_IF_ERROR(GetFlag(*so, "include_usage", include_usage));
  }
  if (const rapidjson::Value* p = FindMember(doc, "priority")) {
    if (!p->IsInt64()) return Field("priority", "must be an integer (a 64-bit one, without a fraction)");
    if (!p->IsInt()) return Field("priority", "must be a 32-bit integer");
    priority = p->GetInt();
  }
  return absl::OkStatus();
}

constexpr std::string_view kPromptRule =
    "must be a non-empty string, a non-empty list of token ids, or a list of those (a batch)";

// One prompt: a string or a non-empty list of ints.
absl::StatusOr<Prompt> ParseOnePrompt(const rapidjson::Value& v) {
  Prompt p;
  if (v.IsString()) {
    p.text = std::string(AsView(v));
    return p;
  }
  if (!v.IsArray() || v.Empty()) return Field("prompt", kPromptRule);
  for (const auto& id : v.GetArray()) {
    if (!id.IsInt()) return Field("prompt", StrCat(kPromptRule, "; token ids are integers"));
    p.ids.push_back(id.GetInt());
  }
  return p;
}

// `prompt`: one prompt, or a batch (a list of strings or of int lists).
absl::StatusOr<std::vector<Prompt>> ParsePrompts(const rapidjson::Value& doc) {
  const rapidjson::Value* prompt = FindMember(doc, "prompt");
  if (!prompt) return Field("prompt", StrCat("is required: it ", kPromptRule));
  std::vector<Prompt> prompts;
  const bool batch = prompt->IsArray() && !prompt->Empty() && ((*prompt)[0].IsString() || (*prompt)[0].IsArray());
  if (!batch) {
    ASSIGN_OR_RETURN(Prompt p, ParseOnePrompt(*prompt));
    prompts.push_back(std::move(p));
    return prompts;
  }
  if (prompt->Size() > static_cast<rapidjson::SizeType>(kMaxPrompts)) {
    return Field("prompt", StrCat("takes at most ", kMaxPrompts, " prompts per request"));
  }
  for (const auto& v : prompt->GetArray()) {
    if (!v.IsString() && !v.IsArray()) {
      return Field("prompt", StrCat(kPromptRule, "; batch items must all be strings or token-id lists"));
    }
    ASSIGN_OR_RETURN(Prompt p, ParseOnePrompt(v));
    prompts.push_back(std::move(p));
  }
  return prompts;
}

// One assistant tool call: {"id", "type": "function", "function": {"name", "arguments"}}
// (arguments: JSON text, as OpenAI sends it; an object is taken too).
absl::StatusOr<ChatToolCall> ParseToolCall(const rapidjson::Value& v, const std::string& at) {
  if (!v.IsObject()) return Field(at, "must be an object {\"id\", \"type\": \"function\", \"function\": {…}}");
  ChatToolCall call;
  const rapidjson::Value* id = FindMember(v, "id");
  if (id && !id->IsString()) return Field(StrCat(at, ".id"), "must be a string");
  if (id) call.id = AsView(*id);
  if (const rapidjson::Value* type = FindMember(v, "type"); type && (!type->IsString() || AsView(*type) != "function")) {
    return Field(StrCat(at, ".type"), "must be \"function\"");
  }
  const rapidjson::Value* f = FindMember(v, "function");
  if (!f || !f->IsObject()) return Field(StrCat(at, ".function"), "is required: {\"name\", \"arguments\"}");
  const rapidjson::Value* name = FindMember(*f, "name");
  if (!name || !name->IsString() || !IsValidToolName(AsView(*name))) {
    return Field(StrCat(at, ".function.name"), "must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -");
  }
  call.name = AsView(*name);
  const rapidjson::Value* args = FindMember(*f, "arguments");
  if (!args) {
    call.arguments = "{}";
  } else if (args->IsString()) {
    // Rendered into the prompt as JSON: it must be JSON.
    rapidjson::Document doc;
    if (!ReadJson(AsView(*args), "arguments", doc).ok()) {
      return Field(StrCat(at, ".function.arguments"), "must be JSON text (the call's arguments)");
    }
    call.arguments = JsonText(doc);
  } else if (args->IsObject()) {
    call.arguments = JsonText(*args);
  } else {
    return Field(StrCat(at, ".function.arguments"), "must be a string of JSON text");
  }
  return call;
}

absl::StatusOr<std::vector<ChatMessage>> ParseMessages(const rapidjson::Value& doc) {
  const rapidjson::Value* messages = FindMember(doc, "messages");
  if (!messages || !messages->IsArray() || messages->Empty()) return Field("messages", "must be a non-empty list");
  std::vector<ChatMessage> parsed;
  for (const auto& m : messages->GetArray()) {
    const std::string at = StrCat("messages[", parsed.size(), "]");
    ChatMessage msg;
    auto role = GetString(m, "role");
    if (!role) return Field("messages[].role", "is required");
    msg.role = *role;
    const rapidjson::Value* content = FindMember(m, "content");
    if (content && content->IsString()) {
      msg.content = AsView(*content);
    } else if (content && content->IsArray()) {
      for (const auto& part : content->GetArray()) {
        if (GetString(part, "type") != "text") return Field("messages[].content", "parts must be of type text");
        msg.content += GetString(part, "text").value_or("");
      }
    } else if (content) {
      return Field("messages[].content", "must be a string or a list of text parts");
    }
    if (const rapidjson::Value* calls = FindMember(m, "tool_calls")) {
      if (msg.role != "assistant") return Field(StrCat(at, ".tool_calls"), "is only for assistant messages");
      if (!calls->IsArray()) return Field(StrCat(at, ".tool_calls"), "must be a list");
      if (calls->Size() > kMaxToolCallsPerMessage) {
        return Field(StrCat(at, ".tool_calls"), StrCat("takes at most ", kMaxToolCallsPerMessage, " calls"));
      }
      for (const auto& c : calls->GetArray()) {
        ASSIGN_OR_RETURN(ChatToolCall call, ParseToolCall(c, StrCat(at, ".tool_calls[", msg.tool_calls.size(), "]")));
        msg.tool_calls.push_back(std::move(call));
      }
    }
    if (msg.role == "tool") {
      const rapidjson::Value* id = FindMember(m, "tool_call_id");
      if (!id || !id->IsString()) return Field(StrCat(at, ".tool_call_id"), "is required for a tool message (a string)");
      msg.tool_call_id = AsView(*id);
    }
    parsed.push_back(std::move(msg));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<CompletionRequest> ParseCompletionRequest(std::string_view body) {
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseObject(body));
  CompletionRequest r;
  RETURN_IF_ERROR(ParseCommon(doc, r.model, r.stream, r.include_usage, r.priority));
  ASSIGN_OR_RETURN(r.prompts, ParsePrompts(doc));
  RETURN_IF_ERROR(GetFlag(doc, "echo", r.echo));
  if (const rapidjson::Value* lp = FindMember(doc, "logprobs")) {
    if (!lp->IsInt() || lp->GetInt() < 0 || lp->GetInt() > kMaxTopLogprobs) {
      return Field("logprobs", StrCat("must be an integer in [0, ", kMaxTopLogprobs, "]"));
    }
    r.sampling.logprobs = true;
    r.sampling.top_logprobs = lp->GetInt();
  }
  RETURN_IF_ERROR(GetFlag(doc, "return_tokens_as_token_ids", r.return_tokens_as_token_ids));
  RETURN_IF_ERROR(ParseSamplingFields(doc, r.sampling, &r.max_tokens_set, &r.n));
  for (const char* chat_only : {"tools", "tool_choice"}) {
    if (FindMember(doc, chat_only)) return Field(chat_only, "is taken by /v1/chat/completions only");
  }
  RETURN_IF_ERROR(ParseOutputConstraint(doc, r.sampling));
  if (r.prompts.size() * r.n > static_cast<size_t>(kMaxChoices)) {
    return Field("n", StrCat("times the number of prompts (", r.prompts.size(), " x ", r.n, ") must be at most ",
                             kMaxChoices, " choices per request"));
  }
  return r;
}

absl::StatusOr<ChatRequest> ParseChatRequest(std::string_view body) {
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseObject(body));
  ChatRequest r;
  RETURN_IF_ERROR(ParseCommon(doc, r.model, r.stream, r.include_usage, r.priority));
  ASSIGN_OR_RETURN(r.messages, ParseMessages(doc));
  RETURN_IF_ERROR(GetFlag(doc, "add_generation_prompt", r.add_generation_prompt));
  if (FindMember(doc, "logprobs")) RETURN_IF_ERROR(GetFlag(doc, "logprobs", r.sampling.logprobs));
  if (const rapidjson::Value* top = FindMember(doc, "top_logprobs")) {
    if (!top->IsInt() || top->GetInt() < 0 || top->GetInt() > kMaxTopLogprobs) {
      return Field("top_logprobs", StrCat("must be an integer in [0, ", kMaxTopLogprobs, "]"));
    }
    if (!r.sampling.logprobs && top->GetInt() > 0) return Field("top_logprobs", "needs 'logprobs': true");
    r.sampling.top_logprobs = top->GetInt();
  }
  RETURN_IF_ERROR(GetFlag(doc, "return_tokens_as_token_ids", r.return_tokens_as_token_ids));
  // A chat's max_tokens not given is what the prompt leaves of the context (vLLM).
  RETURN_IF_ERROR(ParseSamplingFields(doc, r.sampling, &r.max_tokens_set, &r.n,
                                      /*max_tokens_default_from_context=*/true));
  RETURN_IF_ERROR(ParseOutputConstraint(doc, r.sampling));
  ASSIGN_OR_RETURN(r.tools, ParseChatTools(doc));
  const ToolChoiceMode mode = r.tools.choice.mode;
  if (mode == ToolChoiceMode::kRequired || mode == ToolChoiceMode::kNamed) {
    if (!r.sampling.grammar.empty()) {
      return Field("tool_choice", StrCat(mode == ToolChoiceMode::kRequired ? "required" : "naming a function",
                                         " constrains the output and cannot be combined with response_format "
                                         "or guided_* (one output constraint per request)"));
    }
    RETURN_IF_ERROR(ApplyToolChoice(r.tools, r.sampling));
  }
  return r;
}

}  // namespace infera::openai
