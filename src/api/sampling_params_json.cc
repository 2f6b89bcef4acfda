#include "api/sampling_params_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

constexpr int64_t kMaxTopK = int64_t{1} << 24;
constexpr size_t kMaxStopTokenIds = 1024;
constexpr size_t kMaxLogitBias = 1024;

absl::Status Field(std::string_view name, std::string_view rule) {
  return absl::InvalidArgumentError(StrCat("'", name, "' ", rule));
}

// The member `key` of `obj`; null when absent or JSON null.
const rapidjson::Value* Member(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

absl::Status GetNumber(const rapidjson::Value& obj, const char* key, double& out) {
  const rapidjson::Value* v = Member(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsNumber()) return Field(key, "must be a number");
  // The JSON reader refuses NaN and Infinity; a number past the double range is an
  // error there too. Checked again so no caller depends on it.
  if (!std::isfinite(v->GetDouble())) return Field(key, "must be a finite number");
  out = v->GetDouble();
  return absl::OkStatus();
}

absl::Status GetInteger(const rapidjson::Value& obj, const char* key, int64_t& out, bool* set = nullptr) {
  const rapidjson::Value* v = Member(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsInt64()) return Field(key, "must be an integer (a 64-bit one, without a fraction)");
  out = v->GetInt64();
  if (set) *set = true;
  return absl::OkStatus();
}

absl::Status GetFlag(const rapidjson::Value& obj, const char* key, bool& out) {
  const rapidjson::Value* v = Member(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsBool()) return Field(key, "must be a boolean");
  out = v->GetBool();
  return absl::OkStatus();
}

std::string_view View(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

absl::Status ParseStops(const rapidjson::Value& obj, SamplingParams& p) {
  if (const rapidjson::Value* stop = Member(obj, "stop")) {
    if (stop->IsString()) {
      p.stop.emplace_back(View(*stop));
    } else if (stop->IsArray()) {
      for (const auto& s : stop->GetArray()) {
        if (!s.IsString()) return Field("stop", "must be a string or a list of strings");
        p.stop.emplace_back(View(s));
      }
    } else {
      return Field("stop", "must be a string or a list of strings");
    }
  }
  if (const rapidjson::Value* ids = Member(obj, "stop_token_ids")) {
    if (!ids->IsArray()) return Field("stop_token_ids", "must be a list of integers");
    for (const auto& id : ids->GetArray()) {
      if (!id.IsInt()) return Field("stop_token_ids", "must be a list of integers");
      p.stop_token_ids.push_back(id.GetInt());
    }
    if (p.stop_token_ids.size() > kMaxStopTokenIds) {
      return Field("stop_token_ids", StrCat("takes at most ", kMaxStopTokenIds, " ids"));
    }
  }
  return absl::OkStatus();
}

// {"<token id>": bias, ...}: ids as decimal strings (OpenAI's form), biases clamped to
// [-100, 100] as vLLM does. Whether the ids are in the vocabulary is the engine's check.
absl::Status ParseLogitBias(const rapidjson::Value& obj, SamplingParams& p) {
  const rapidjson::Value* bias = Member(obj, "logit_bias");
  if (!bias) return absl::OkStatus();
  if (!bias->IsObject()) return Field("logit_bias", "must be an object of token ids to numbers");
  if (bias->MemberCount() > kMaxLogitBias) {
    return Field("logit_bias", StrCat("takes at most ", kMaxLogitBias, " token ids"));
  }
  std::map<int32_t, float> by_id;  // a repeated id: the last value, as a JSON object's reader keeps
  for (auto it = bias->MemberBegin(); it != bias->MemberEnd(); ++it) {
    const std::string_view key = View(it->name);
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

absl::Status ParseChoices(const rapidjson::Value& obj, int* n) {
  int64_t num = 1;
  RETURN_IF_ERROR(GetInteger(obj, "n", num));
  if (!n && num != 1) return Field("n", "must be 1 (one choice per request here)");
  if (num < 1 || num > kMaxChoicesPerPrompt) return Field("n", StrCat("must be in [1, ", kMaxChoicesPerPrompt, "]"));
  int64_t best_of = num;
  bool best_of_set = false;
  RETURN_IF_ERROR(GetInteger(obj, "best_of", best_of, &best_of_set));
  if (best_of_set && best_of != num) {
    return Field("best_of", "must equal n when given (infera returns every candidate; it does not rank them)");
  }
  if (n) *n = static_cast<int>(num);
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseSamplingFields(const rapidjson::Value& obj, SamplingParams& p, bool* max_tokens_set, int* n,
                                 bool max_tokens_default_from_context) {
  RETURN_IF_ERROR(GetNumber(obj, "temperature", p.temperature));
  RETURN_IF_ERROR(GetNumber(obj, "top_p", p.top_p));
  RETURN_IF_ERROR(GetInteger(obj, "top_k", p.top_k));
  RETURN_IF_ERROR(GetNumber(obj, "min_p", p.min_p));
  RETURN_IF_ERROR(GetNumber(obj, "presence_penalty", p.presence_penalty));
  RETURN_IF_ERROR(GetNumber(obj, "frequency_penalty", p.frequency_penalty));
  RETURN_IF_ERROR(GetNumber(obj, "repetition_penalty", p.repetition_penalty));
  RETURN_IF_ERROR(GetInteger(obj, "max_tokens", p.max_tokens, max_tokens_set));
  RETURN_IF_ERROR(GetInteger(obj, "max_completion_tokens", p.max_tokens, max_tokens_set));
  if (p.max_tokens > kMaxMaxTokens) return Field("max_tokens", StrCat("must be at most ", kMaxMaxTokens));
  if (p.top_k > kMaxTopK) return Field("top_k", StrCat("must be at most ", kMaxTopK));
  RETURN_IF_ERROR(GetFlag(obj, "ignore_eos", p.ignore_eos));
  RETURN_IF_ERROR(GetFlag(obj, "include_stop_str_in_output", p.include_stop_str_in_output));
  RETURN_IF_ERROR(GetFlag(obj, "skip_special_tokens", p.skip_special_tokens));
  if (const rapidjson::Value* seed = Member(obj, "seed")) {
    if (!seed->IsInt64()) return Field("seed", "must be an integer (a 64-bit one, without a fraction)");
    p.seed = static_cast<uint64_t>(seed->GetInt64());
  }
  RETURN_IF_ERROR(GetInteger(obj, "min_tokens", p.min_tokens));
  RETURN_IF_ERROR(ParseLogitBias(obj, p));
  RETURN_IF_ERROR(ParseStops(obj, p));
  RETURN_IF_ERROR(ParseChoices(obj, n));
  if (max_tokens_default_from_context && max_tokens_set != nullptr && !*max_tokens_set) {
    // min_tokens is checked against that default when the request reaches the engine
    // (LlmEngine::AddRequest validates again).
    SamplingParams unbounded = p;
    unbounded.max_tokens = kMaxMaxTokens;
    return unbounded.Validate();
  }
  return p.Validate();
}

}  // namespace infera
