#include "llm/openai_protocol.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <random>

#include "common/json_writer.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "llm/text_imports.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::llm {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

absl::Status ParseSampling(const rapidjson::Value& obj, SamplingParams& p, bool* max_tokens_set, int* n,
                           bool default_from_context);

absl::Status Field(std::string_view name, std::string_view rule) {
  return absl::InvalidArgumentError(StrCat("'", name, "' ", rule));
}

// Bounds on integer fields, far above any real model's context or vocabulary, so that no
// later arithmetic (prompt length + max_tokens, top-k selection) can overflow.
constexpr int64_t kMaxTokensLimit = int64_t{1} << 24;
constexpr int64_t kMaxTopK = int64_t{1} << 24;
constexpr size_t kMaxStopTokenIds = 1024;
constexpr size_t kMaxLogitBias = 1024;

absl::Status GetNumber(const rapidjson::Value& obj, const char* key, double& out) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsNumber()) return Field(key, "must be a number");
  // The JSON reader refuses NaN and Infinity; a number past the double range is an
  // error there too. Checked again so no caller depends on it.
  if (!std::isfinite(v->GetDouble())) return Field(key, "must be a finite number");
  out = v->GetDouble();
  return absl::OkStatus();
}

absl::Status GetInteger(const rapidjson::Value& obj, const char* key, int64_t& out, bool* set = nullptr) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsInt64()) return Field(key, "must be an integer (a 64-bit one, without a fraction)");
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
    if (!so->IsObject()) return Field("stream_options", "must be an object");
    RETURN_IF_ERROR(GetFlag(*so, "include_usage", include_usage));
  }
  int64_t p = 0;
  RETURN_IF_ERROR(GetInteger(doc, "priority", p));
  if (p < INT32_MIN || p > INT32_MAX) return Field("priority", "must be a 32-bit integer");
  priority = static_cast<int>(p);
  return absl::OkStatus();
}

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
  if (c.top.empty()) {
    w.Null();
  } else {
    w.StartArray();
    for (const auto& alternatives : c.top) {
      // {token: logprob}. Tokens whose texts are equal (e.g. partial UTF-8 shown as
      // U+FFFD) share a key: the most likely one keeps it.
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

std::string Done(const rapidjson::StringBuffer& b) { return std::string(b.GetString(), b.GetSize()); }

// {"<token id>": bias, ...}: ids as decimal strings (OpenAI's form), biases clamped to
// [-100, 100] as vLLM does. Whether the ids are in the vocabulary is the engine's check.
absl::Status ParseLogitBias(const rapidjson::Value& obj, SamplingParams& p) {
  const rapidjson::Value* bias = FindMember(obj, "logit_bias");
  if (!bias) return absl::OkStatus();
  if (!bias->IsObject()) return Field("logit_bias", "must be an object of token ids to numbers");
  if (bias->MemberCount() > kMaxLogitBias) {
    return Field("logit_bias", StrCat("takes at most ", kMaxLogitBias, " token ids"));
  }
  std::map<int32_t, float> by_id;  // a repeated id: the last value, as a JSON object's reader keeps
  for (auto it = bias->MemberBegin(); it != bias->MemberEnd(); ++it) {
    const std::string_view key = AsView(it->name);
    int64_t id = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || ec != std::errc() || end != key.data() + key.size() || id < INT32_MIN || id > INT32_MAX) {
      return Field("logit_bias", StrCat("keys must be token ids (integers), got '", key, "'"));
    }
    if (!it->value.IsNumber() || !std::isfinite(it->value.GetDouble())) {
      return Field("logit_bias", StrCat("value of token id ", id, " must be a number"));
    }
    by_id[static_cast<int32_t>(id)] = static_cast<float>(std::clamp(it->value.GetDouble(), -100.0, 100.0));
  }
  p.logit_bias.assign(by_id.begin(), by_id.end());
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseSamplingFields(const rapidjson::Value& obj, SamplingParams& p, bool* max_tokens_set, int* n) {
  return ParseSampling(obj, p, max_tokens_set, n, /*default_from_context=*/false);
}

namespace {

// `default_from_context`: a max_tokens not given is what the prompt leaves of the
// context (chat), known only once the prompt is tokenised.
absl::Status ParseSampling(const rapidjson::Value& obj, SamplingParams& p, bool* max_tokens_set, int* n,
                           bool default_from_context) {
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
    if (!seed->IsInt64()) return Field("seed", "must be an integer (a 64-bit one, without a fraction)");
    p.seed = static_cast<uint64_t>(seed->GetInt64());
  }
  RETURN_IF_ERROR(GetInteger(obj, "min_tokens", p.min_tokens));
  RETURN_IF_ERROR(ParseLogitBias(obj, p));
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
  int64_t num = 1;
  RETURN_IF_ERROR(GetInteger(obj, "n", num));
  if (!n && num != 1) return Field("n", "must be 1 (one choice per request here)");
  if (num < 1 || num > kMaxN) return Field("n", StrCat("must be in [1, ", kMaxN, "]"));
  int64_t best_of = num;
  bool best_of_set = false;
  RETURN_IF_ERROR(GetInteger(obj, "best_of", best_of, &best_of_set));
  if (best_of_set && best_of != num) {
    return Field("best_of", "must equal n when given (infera returns every candidate; it does not rank them)");
  }
  if (n) *n = static_cast<int>(num);
  if (default_from_context && max_tokens_set != nullptr && !*max_tokens_set) {
    // min_tokens is checked against that default when the request reaches the engine
    // (LlmEngine::AddRequest validates again).
    SamplingParams unbounded = p;
    unbounded.max_tokens = kMaxMaxTokens;
    return unbounded.Validate();
  }
  return p.Validate();
}

}  // namespace

absl::StatusOr<CompletionRequest> ParseCompletionRequest(std::string_view body) {
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseObject(body));
  CompletionRequest r;
  RETURN_IF_ERROR(ParseCommon(doc, r.model, r.stream, r.include_usage, r.priority));
  const rapidjson::Value* prompt = FindMember(doc, "prompt");
  constexpr std::string_view kPromptRule =
      "must be a non-empty string, a non-empty list of token ids, or a list of those (a batch)";
  if (!prompt) return Field("prompt", StrCat("is required: it ", kPromptRule));
  // One prompt: a string or a list of ints. A batch: a list of strings or of int lists.
  auto one = [&](const rapidjson::Value& v) -> absl::StatusOr<Prompt> {
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
  };
  const bool batch = prompt->IsArray() && !prompt->Empty() && ((*prompt)[0].IsString() || (*prompt)[0].IsArray());
  if (batch) {
    if (prompt->Size() > static_cast<rapidjson::SizeType>(kMaxPrompts)) {
      return Field("prompt", StrCat("takes at most ", kMaxPrompts, " prompts per request"));
    }
    for (const auto& v : prompt->GetArray()) {
      if (!v.IsString() && !v.IsArray()) return Field("prompt", StrCat(kPromptRule, "; batch items must all be strings or token-id lists"));
      ASSIGN_OR_RETURN(Prompt p, one(v));
      r.prompts.push_back(std::move(p));
    }
  } else {
    ASSIGN_OR_RETURN(Prompt p, one(*prompt));
    r.prompts.push_back(std::move(p));
  }
  RETURN_IF_ERROR(GetFlag(doc, "echo", r.echo));
  if (const rapidjson::Value* lp = FindMember(doc, "logprobs"); lp && !lp->IsNull()) {
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
  if (const rapidjson::Value* lp = FindMember(doc, "logprobs"); lp && !lp->IsNull()) {
    RETURN_IF_ERROR(GetFlag(doc, "logprobs", r.sampling.logprobs));
  }
  if (const rapidjson::Value* top = FindMember(doc, "top_logprobs"); top && !top->IsNull()) {
    if (!top->IsInt() || top->GetInt() < 0 || top->GetInt() > kMaxTopLogprobs) {
      return Field("top_logprobs", StrCat("must be an integer in [0, ", kMaxTopLogprobs, "]"));
    }
    if (!r.sampling.logprobs && top->GetInt() > 0) return Field("top_logprobs", "needs 'logprobs': true");
    r.sampling.top_logprobs = top->GetInt();
  }
  RETURN_IF_ERROR(GetFlag(doc, "return_tokens_as_token_ids", r.return_tokens_as_token_ids));
  RETURN_IF_ERROR(ParseSampling(doc, r.sampling, &r.max_tokens_set, &r.n, /*default_from_context=*/true));
  return r;
}

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

namespace {
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
  WriteString(w, c.text);
  w.EndObject();
  WriteChatLogprobs(w, c);
  WriteFinish(w, c);
  w.EndObject();
}
}  // namespace

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
           : http_status == 503 ? "ServiceUnavailableError"
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
