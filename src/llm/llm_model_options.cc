#include "llm/llm_model_options.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string>

#include "common/checked_math.h"
#include "common/status.h"
#include "api/sampling_params.h"
#include "common/str_cat.h"

namespace infera::llm {
namespace {

absl::Status Bad(std::string_view key, std::string_view value, std::string_view want) {
  return absl::InvalidArgumentError(StrCat("parameter ", key, ": '", value, "' is not ", want));
}

// Bounds of the engine's parameters: past these a value is a typo, and it would size
// per-sequence or per-token state (docs/lifecycle.md, "Configuration bounds").
constexpr int32_t kMaxNumSeqs = 4096;
constexpr int64_t kMaxBatchedTokens = int64_t{1} << 20;
constexpr int64_t kMaxModelLen = kMaxMaxTokens;  // sampling_params.h: max_tokens fits any context
constexpr int32_t kMaxBlockSize = 1024;
constexpr int64_t kMaxWaitingRequests = int64_t{1} << 20;
// Each draft token is computed every step whether accepted or not: past a handful the
// step costs more than acceptance saves (vLLM's examples use 2-8).
constexpr int32_t kMaxSpeculativeTokens = 16;
constexpr int32_t kMaxNgramLookup = 64;

template <typename T>
absl::Status ParseInt(std::string_view key, std::string_view v, T min, T max, T& out);

// A draft model's directory: relative to the version directory and lexically inside it
// (symlinks are resolved and checked at load: draft_model_loader.h).
absl::Status CheckDraftModelDir(const std::string& dir) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("parameter speculative_model: '", dir, "' ", why));
  };
  if (dir.empty()) return bad("is empty (\"[ngram]\", or a draft model's directory relative to the version directory)");
  if (dir.size() > 4096) return bad("is longer than 4096 bytes");
  if (dir.find('\0') != std::string::npos) return bad("contains a NUL byte");
  if (dir[0] == '[') return bad("is not a proposer infera knows (\"[ngram]\", or a draft model's directory)");
  const std::filesystem::path path(dir);
  if (path.is_absolute() || dir[0] == '/') return bad("is an absolute path; name a directory relative to the model's version directory");
  for (const auto& part : path) {
    if (part == "..") return bad("leaves the model's version directory (\"..\")");
  }
  return absl::OkStatus();
}

// speculative_model, num_speculative_tokens, ngram_prompt_lookup_max/min: read together,
// since each one's validity depends on the others.
absl::Status ParseSpeculative(const inference::ModelConfig& config, SpeculativeConfig& out) {
  const auto& params = config.parameters();
  auto get = [&](const char* key) -> const std::string* {
    auto it = params.find(key);
    return it == params.end() ? nullptr : &it->second.string_value();
  };
  const std::string* model = get("speculative_model");
  const std::string* num = get("num_speculative_tokens");
  const std::string* max_n = get("ngram_prompt_lookup_max");
  const std::string* min_n = get("ngram_prompt_lookup_min");
  if (model == nullptr) {
    for (const char* key : {"num_speculative_tokens", "ngram_prompt_lookup_max", "ngram_prompt_lookup_min"}) {
      if (get(key)) return absl::InvalidArgumentError(StrCat("parameter ", key, " needs speculative_model"));
    }
    return absl::OkStatus();
  }
  const bool ngram = *model == "[ngram]";
  if (!ngram) RETURN_IF_ERROR(CheckDraftModelDir(*model));
  if (num == nullptr) {
    return absl::InvalidArgumentError("parameter num_speculative_tokens is required with speculative_model");
  }
  RETURN_IF_ERROR(ParseInt<int32_t>("num_speculative_tokens", *num, 1, kMaxSpeculativeTokens,
                                    out.num_speculative_tokens));
  if (max_n) RETURN_IF_ERROR(ParseInt<int32_t>("ngram_prompt_lookup_max", *max_n, 1, kMaxNgramLookup,
                                               out.ngram_prompt_lookup_max));
  if (min_n) RETURN_IF_ERROR(ParseInt<int32_t>("ngram_prompt_lookup_min", *min_n, 1, out.ngram_prompt_lookup_max,
                                               out.ngram_prompt_lookup_min));
  if (out.ngram_prompt_lookup_min > out.ngram_prompt_lookup_max) {
    return absl::InvalidArgumentError(StrCat("parameter ngram_prompt_lookup_min: ", out.ngram_prompt_lookup_min,
                                             " is more than ngram_prompt_lookup_max ", out.ngram_prompt_lookup_max));
  }
  if (!ngram && (max_n || min_n)) {
    return absl::InvalidArgumentError(StrCat("parameter ", max_n ? "ngram_prompt_lookup_max" : "ngram_prompt_lookup_min",
                                             " needs speculative_model \"[ngram]\" (this one names a draft model)"));
  }
  out.method = ngram ? SpeculativeConfig::Method::kNgram : SpeculativeConfig::Method::kDraftModel;
  if (!ngram) out.draft_model_dir = *model;
  return absl::OkStatus();
}

template <typename T>
absl::Status ParseInt(std::string_view key, std::string_view v, T min, T max, T& out) {
  T parsed{};
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
  if (ec != std::errc() || end != v.data() + v.size() || parsed < min || parsed > max) {
    return Bad(key, v, StrCat("an integer in [", min, ", ", max, "]"));
  }
  out = parsed;
  return absl::OkStatus();
}

absl::Status ParseBool(std::string_view key, std::string_view v, bool& out) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") out = true;
  else if (v == "false" || v == "0" || v == "no" || v == "off") out = false;
  else return Bad(key, v, "a boolean");
  return absl::OkStatus();
}

}  // namespace

std::optional<int64_t> ParseByteSize(std::string_view text) {
  int64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || number < 0) return std::nullopt;
  if (end == text.data()) return std::nullopt;  // no digits
  std::string_view unit(end, text.data() + text.size() - end);
  int64_t scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KiB" || unit == "KB") scale = int64_t{1} << 10;
  else if (unit == "M" || unit == "MiB" || unit == "MB") scale = int64_t{1} << 20;
  else if (unit == "G" || unit == "GiB" || unit == "GB") scale = int64_t{1} << 30;
  else return std::nullopt;
  // "9999999999GiB" would wrap: checked.
  return CheckedMul(number, scale);
}

absl::StatusOr<LlmModelOptions> LlmModelOptions::FromConfig(const inference::ModelConfig& config,
                                                             const MachineLimits& machine) {
  LlmModelOptions o;
  for (const auto& [key, param] : config.parameters()) {
    const std::string& v = param.string_value();
    if (key == "max_num_seqs") {
      RETURN_IF_ERROR(ParseInt<int32_t>(key, v, 1, kMaxNumSeqs, o.max_num_seqs));
    } else if (key == "max_num_batched_tokens") {
      RETURN_IF_ERROR(ParseInt<int64_t>(key, v, 1, kMaxBatchedTokens, o.max_num_batched_tokens));
    } else if (key == "max_model_len") {
      int64_t len = 0;
      RETURN_IF_ERROR(ParseInt<int64_t>(key, v, 2, kMaxModelLen, len));
      o.max_model_len = len;
    } else if (key == "block_size") {
      RETURN_IF_ERROR(ParseInt<int32_t>(key, v, 1, kMaxBlockSize, o.block_size));
    } else if (key == "kv_cache_memory_bytes") {
      auto bytes = ParseByteSize(v);
      if (!bytes || *bytes <= 0) return Bad(key, v, "a byte size such as 536870912 or 512MiB");
      // The KV cache is allocated at load: more than the machine has would abort it.
      const int64_t limit = static_cast<int64_t>(0.95 * static_cast<double>(machine.physical_memory_bytes));
      if (machine.physical_memory_bytes > 0 && *bytes > limit) {
        return Bad(key, v, StrCat("at most 95% of this machine's memory (", limit, " bytes)"));
      }
      o.kv_cache_memory_bytes = bytes;
    } else if (key == "kv_cache_memory_fraction") {
      char* end = nullptr;
      const double f = std::strtod(v.c_str(), &end);
      if (end != v.c_str() + v.size() || !(f > 0 && f <= 0.95)) return Bad(key, v, "a fraction in (0, 0.95]");
      o.kv_cache_memory_fraction = f;
    } else if (key == "enable_prefix_caching") {
      RETURN_IF_ERROR(ParseBool(key, v, o.enable_prefix_caching));
    } else if (key == "use_mmap") {
      RETURN_IF_ERROR(ParseBool(key, v, o.use_mmap));
    } else if (key == "enable_chunked_prefill") {
      RETURN_IF_ERROR(ParseBool(key, v, o.enable_chunked_prefill));
    } else if (key == "scheduling_policy") {
      if (v == "fcfs") o.policy = SchedulingPolicy::kFcfs;
      else if (v == "priority") o.policy = SchedulingPolicy::kPriority;
      else return Bad(key, v, "fcfs or priority");
    } else if (key == "num_threads") {
      // More threads than cores only contend; 100000 made the first request hang.
      RETURN_IF_ERROR(ParseInt<int>(key, v, 0, machine.MaxThreads(), o.num_threads));
    } else if (key == "max_waiting_requests") {
      RETURN_IF_ERROR(ParseInt<int64_t>(key, v, 1, kMaxWaitingRequests, o.max_waiting_requests));
    } else if (key == "matmul_kernel") {
      if (v == "packed") o.matmul_kernel = MatmulKernel::kPacked;
      else if (v == "blas") o.matmul_kernel = MatmulKernel::kBlas;
      else return Bad(key, v, "packed or blas");
    } else if (key == "quantization") {
      if (v == "none") o.quantization = WeightQuantization::kNone;
      else if (v == "int8") o.quantization = WeightQuantization::kInt8;
      else if (v == "int4") o.quantization = WeightQuantization::kInt4;
      else return Bad(key, v, "none, int8 or int4");
    } else if (key == "kv_cache_dtype") {
      const std::optional<KvCacheDtype> dtype = ParseKvCacheDtype(v);
      if (!dtype) return Bad(key, v, "fp32, bf16 or fp16");
      o.kv_cache_dtype = *dtype;
    }
  }
  RETURN_IF_ERROR(ParseSpeculative(config, o.speculative));
  if (o.quantization != WeightQuantization::kNone && o.matmul_kernel != MatmulKernel::kPacked) {
    return absl::InvalidArgumentError("parameter quantization: int8 and int4 need matmul_kernel packed (blas is fp32)");
  }
  return o;
}

int64_t LlmModelOptions::ModelLen(const LlamaConfig& model) const {
  if (max_model_len) return *max_model_len;
  if (model.rope_scaling.type == "longrope") {
    return std::min(model.max_position_embeddings, model.rope_scaling.original_max_position_embeddings);
  }
  if (model.rope_scaling.type == "yarn") {  // vLLM's: the original length times the factor
    return static_cast<int64_t>(static_cast<double>(model.rope_scaling.original_max_position_embeddings) *
                                model.rope_scaling.factor);
  }
  return model.max_position_embeddings;
}

int64_t LlmModelOptions::KvCacheBytes(int64_t ram) const {
  if (kv_cache_memory_bytes) return *kv_cache_memory_bytes;
  if (kv_cache_memory_fraction) return static_cast<int64_t>(*kv_cache_memory_fraction * static_cast<double>(ram));
  return std::min<int64_t>(ram / 10, int64_t{2} << 30);
}

}  // namespace infera::llm
