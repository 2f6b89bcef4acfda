#include "llm/openai_protocol.h"

#include "common/status.h"
#include "common/str_cat.h"
#include "llm/text_imports.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::llm {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

absl::Status Field(std::string_view name, std::string_view rule) {
  return absl::InvalidArgumentError(StrCat("'", name, "' ", rule));
}

// Bounds on integer fields, far above any real model's context or vocabulary, so that no
// later arithmetic (prompt length + max_tokens, top-k selection) can overflow.
constexpr int64_t kMaxTokensLimit = int64_t{1} << 24;
constexpr int64_t kMaxTopK = int64_t{1} << 24;
constexpr size_t kMaxStopTokenIds = 1024;

absl::Status GetNumber(const rapidjson::Value& obj, const char* key, double& out) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsNumber()) return Field(key, "must be a number");
  out = v->GetDouble();
  return absl::OkStatus();
}

absl::Status GetInteger(const rapidjson::Value& obj, const char* key, int64_t& out, bool* set = nullptr) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsInt64()) return Field(key, "must be an integer");
  out = v->GetInt64();
  if (set) *set = true;
  return absl::OkStatus();
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
  RETURN_IF_ERROR(ParseJson(body, "request body", doc));
  if (!doc.IsObject()) return absl::InvalidArgumentError("the request body must be a JSON object");
  return doc;
}

absl::Status ParseCommon(const rapidjson::Value& doc, std::string& model, bool& stream,
                         bool& include_usage, int& priority) {
  auto m = GetString(doc, "model");
  if (!m) return Field("model", "is required (a string)");
  model = *m;
  RETURN_IF_ERROR(GetFlag(doc, "stream", stream));
  if (const rapidjson::Value* so = FindMember(doc, "stream_options")) {
    RETURN_IF_ERROR(GetFlag(*so, "include_usage", include_usage));
  }
  int64_t p = 0;
  RETURN_IF_ERROR(GetInteger(doc, "priority", p));
  if (p < INT32_MIN || p > INT32_MAX) return Field("priority", "must be a 32-bit integer");
  priority = static_cast<int>(p);
  return absl::OkStatus();
}

void WriteString(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

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
  if (c.finish_reason && *c.finish_reason != FinishReason::kNone) WriteString(w, FinishReasonName(*c.finish_reason));
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
  w.Null();
  w.EndObject();
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
    w.Key("top_logprobs");
    w.StartArray();
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string Done(const rapidjson::StringBuffer& b) { return std::string(b.GetString(), b.GetSize()); }

}  // namespace

absl::Status ParseSamplingFields(const rapidjson::Value& obj, SamplingParams& p, bool* max_tokens_set) {
  RETURN_IF_ERROR(GetNumber(obj, "temperature", p.temperature));
  RETURN_IF_ERROR(GetNumber(obj, "top_p", p.top_p));
  RETURN_IF_ERROR(GetInteger(obj, "top_k", p.top_k));
  RETURN_IF_ERROR(GetNumber(obj, "min_p", p.min_p));
  RETURN_IF_ERROR(GetNumber(obj, "presence_penalty", p.presence_penalty));
  RETURN_IF_ERROR(GetNumber(obj, "frequency_penalty", p.frequency_penalty));
  RETURN_IF_ERROR(GetNumber(obj, "repetition_penalty", p.repetition_penalty));
  RETURN_IF_ERROR(GetInteger(obj, "max_tokens", p.max_tokens, max_tokens_set));
  RETURN_IF_ERROR(GetInteger(obj, "max_completion_tokens", p.max_tokens, max_tokens_set));
  if (p.max_tokens > kMaxTokensLimit) return Field("max_tokens", StrCat("must be at most ", kMaxTokensLimit));
  if (p.top_k > kMaxTopK) return Field("top_k", StrCat("must be at most ", kMaxTopK));
  RETURN_IF_ERROR(GetFlag(obj, "ignore_eos", p.ignore_eos));
  RETURN_IF_ERROR(GetFlag(obj, "include_stop_str_in_output", p.include_stop_str_in_output));
  RETURN_IF_ERROR(GetFlag(obj, "skip_special_tokens", p.skip_special_tokens));
  if (const rapidjson::Value* seed = FindMember(obj, "seed")) {
    if (!seed->IsInt64()) return Field("seed", "must be an integer");
    p.seed = static_cast<uint64_t>(seed->GetInt64());
  }
  if (const rapidjson::Value* stop = FindMember(obj, "stop")) {
    if (stop->IsString()) {
      p.stop.emplace_back(AsView(*stop));
    } else if (stop->IsArray()) {
      for (const auto& s : stop->GetArray()) {
        if (!s.IsString()) return Field("stop", "must be a string or a list of strings");
        p.stop.emplace_back(AsView(s));
      }
    } else {
      return Field("stop", "must be a string or a list of strings");
    }
  }
  if (const rapidjson::Value* ids = FindMember(obj, "stop_token_ids")) {
    if (!ids->IsArray()) return Field("stop_token_ids", "must be a list of integers");
    for (const auto& id : ids->GetArray()) {
      if (!id.IsInt()) return Field("stop_token_ids", "must be a list of integers");
      p.stop_token_ids.push_back(id.GetInt());
    }
    if (p.stop_token_ids.size() > kMaxStopTokenIds) {
      return Field("stop_token_ids", StrCat("takes at most ", kMaxStopTokenIds, " ids"));
    }
  }
  int64_t n = 1;
  RETURN_IF_ERROR(GetInteger(obj, "n", n));
  if (n != 1) return Field("n", "must be 1 (one choice per request)");
  int64_t best_of = 1;
  RETURN_IF_ERROR(GetInteger(obj, "best_of", best_of));
  if (best_of != 1) return Field("best_of", "must be 1");
  return p.Validate();
}

absl::StatusOr<CompletionRequest> ParseCompletionRequest(std::string_view body) {
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseObject(body));
  CompletionRequest r;
  RETURN_IF_ERROR(ParseCommon(doc, r.model, r.stream, r.include_usage, r.priority));
  const rapidjson::Value* prompt = FindMember(doc, "prompt");
  if (prompt && prompt->IsArray() && prompt->Size() == 1 && ((*prompt)[0].IsString() || (*prompt)[0].IsArray())) {
    prompt = &(*prompt)[0];  // a batch of one
  }
  if (prompt && prompt->IsString()) {
    r.prompt_text = std::string(AsView(*prompt));
  } else if (prompt && prompt->IsArray() && prompt->Size() > 0) {
    for (const auto& id : prompt->GetArray()) {
      if (!id.IsInt()) return Field("prompt", "must be a string, or a list of token ids (integers)");
      r.prompt_ids.push_back(id.GetInt());
    }
  } else {
    return Field("prompt", "is required: a non-empty string or list of token ids (one prompt per request)");
  }
  RETURN_IF_ERROR(GetFlag(doc, "echo", r.echo));
  if (const rapidjson::Value* lp = FindMember(doc, "logprobs")) {
    if (!lp->IsInt() || lp->GetInt() < 0 || lp->GetInt() > 20) return Field("logprobs", "must be an integer in [0, 20]");
    r.sampling.logprobs = true;
  }
  RETURN_IF_ERROR(ParseSamplingFields(doc, r.sampling, &r.max_tokens_set));
  return r;
}

absl::StatusOr<ChatRequest> ParseChatRequest(std::string_view body) {
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseObject(body));
  ChatRequest r;
  RETURN_IF_ERROR(ParseCommon(doc, r.model, r.stream, r.include_usage, r.priority));
  const rapidjson::Value* messages = FindMember(doc, "messages");
  if (!messages || !messages->IsArray() || messages->Empty()) return Field("messages", "must be a non-empty list");
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
    r.messages.push_back(std::move(msg));
  }
  RETURN_IF_ERROR(GetFlag(doc, "add_generation_prompt", r.add_generation_prompt));
  RETURN_IF_ERROR(GetFlag(doc, "logprobs", r.sampling.logprobs));
  RETURN_IF_ERROR(ParseSamplingFields(doc, r.sampling, &r.max_tokens_set));
  return r;
}

namespace {
// The completion object, whole (with usage) or as one streamed chunk (usage null).
std::string CompletionObjectJson(std::string_view id, int64_t created, std::string_view model,
                                 const ChoiceDelta& c, const Usage* usage) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  WriteHeader(w, id, "text_completion", created, model);
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(0);
  w.Key("text");
  WriteString(w, c.text);
  WriteCompletionLogprobs(w, c);
  WriteFinish(w, c);
  w.EndObject();
  w.EndArray();
  if (usage) WriteUsage(w, *usage);
  w.EndObject();
  return Done(b);
}
}  // namespace

std::string CompletionJson(std::string_view id, int64_t created, std::string_view model,
                           const ChoiceDelta& c, const Usage& usage) {
  return CompletionObjectJson(id, created, model, c, &usage);
}

std::string CompletionChunkJson(std::string_view id, int64_t created, std::string_view model,
                                const ChoiceDelta& c) {
  return CompletionObjectJson(id, created, model, c, nullptr);
}

namespace {
// The chat completion object, whole ("message", with usage) or as one streamed chunk
// ("delta", usage null; the role only in the first chunk).
std::string ChatObjectJson(std::string_view id, int64_t created, std::string_view model,
                           const ChoiceDelta& c, bool chunk, bool with_role, const Usage* usage) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  WriteHeader(w, id, chunk ? "chat.completion.chunk" : "chat.completion", created, model);
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(0);
  w.Key(chunk ? "delta" : "message");
  w.StartObject();
  if (with_role) {
    w.Key("role");
    w.String("assistant");
  }
  w.Key("content");
  WriteString(w, c.text);
  w.EndObject();
  WriteChatLogprobs(w, c);
  WriteFinish(w, c);
  w.EndObject();
  w.EndArray();
  if (usage) WriteUsage(w, *usage);
  w.EndObject();
  return Done(b);
}
}  // namespace

std::string ChatJson(std::string_view id, int64_t created, std::string_view model,
                     const ChoiceDelta& c, const Usage& usage) {
  return ChatObjectJson(id, created, model, c, /*chunk=*/false, /*with_role=*/true, &usage);
}

std::string ChatChunkJson(std::string_view id, int64_t created, std::string_view model,
                          const ChoiceDelta& c, bool first) {
  return ChatObjectJson(id, created, model, c, /*chunk=*/true, /*with_role=*/first, nullptr);
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

std::string OpenAiErrorJson(int http_status, std::string_view message) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  w.Key("error");
  w.StartObject();
  w.Key("message");
  WriteString(w, SanitizeUtf8(message));  // messages may echo client bytes
  w.Key("type");
  w.String(http_status == 404   ? "NotFoundError"
           : http_status == 429 ? "RateLimitError"
           : http_status >= 500 ? "InternalServerError"
                                : "BadRequestError");
  w.Key("param");
  w.Null();
  w.Key("code");
  w.Int(http_status);
  w.EndObject();
  w.EndObject();
  return Done(b);
}

}  // namespace infera::llm
