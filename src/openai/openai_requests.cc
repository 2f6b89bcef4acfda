#include "openai/openai_requests.h"

#include <cstdint>

#include "common/status.h"
#include "common/str_cat.h"
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

absl::StatusOr<std::vector<ChatMessage>> ParseMessages(const rapidjson::Value& doc) {
  const rapidjson::Value* messages = FindMember(doc, "messages");
  if (!messages || !messages->IsArray() || messages->Empty()) return Field("messages", "must be a non-empty list");
  std::vector<ChatMessage> parsed;
  for (const auto& m : messages->GetArray()) {
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
  return r;
}

}  // namespace infera::openai
