#include "api/sampling_params_json.h"

#include <string_view>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

constexpr int64_t kMaxTopK = int64_t{1} << 24;
constexpr size_t kMaxStopTokenIds = 1024;

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
  out = v->GetDouble();
  return absl::OkStatus();
}

absl::Status GetInteger(const rapidjson::Value& obj, const char* key, int64_t& out, bool* set = nullptr) {
  const rapidjson::Value* v = Member(obj, key);
  if (!v) return absl::OkStatus();
  if (!v->IsInt64()) return Field(key, "must be an integer");
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

absl::Status ParseSamplingFields(const rapidjson::Value& obj, SamplingParams& p, bool* max_tokens_set, int* n) {
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
    if (!seed->IsInt64()) return Field("seed", "must be an integer");
    p.seed = static_cast<uint64_t>(seed->GetInt64());
  }
  RETURN_IF_ERROR(ParseStops(obj, p));
  RETURN_IF_ERROR(ParseChoices(obj, n));
  return p.Validate();
}

}  // namespace infera
