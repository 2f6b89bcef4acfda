// LlmModelOptions: the `llm` backend's engine options, read from config.pbtxt
// `parameters` (string values, vLLM's names):
//
//   key                        default              meaning (bound)
//   max_num_seqs               16                   sequences in one batch (<= 4096)
//   max_num_batched_tokens     512                  tokens in one step (prefill chunks + decodes; <= 2^20)
//   max_model_len              max_position_embeddings   prompt + output limit (<= 2^24; ModelLen)
//   block_size                 16                   tokens per KV-cache block (<= 1024)
//   kv_cache_memory_bytes      (unset)              KV-cache budget: bytes, or with K/M/G/KiB/MiB/GiB
//                                                   (<= 95% of physical RAM)
//   kv_cache_memory_fraction   (unset)              …or this fraction of physical RAM
//                                                   (neither set: min(10% of RAM, 2 GiB))
//   enable_prefix_caching      true
//   enable_chunked_prefill     true
//   use_mmap                   false                GGUF weights: false copies the file onto huge
//                                                   pages (gguf::GgufResidency); true maps it
//   scheduling_policy          fcfs                 fcfs | priority
//   num_threads                0                    intra-op threads of the engine (0: all cores;
//                                                   <= 4 x cores)
//   max_waiting_requests       1024                 waiting-queue bound (429 beyond; <= 2^20)
//   matmul_kernel              packed               packed | blas: the projections' matmul
//                                                   (blas: the previous OpenBLAS path, for
//                                                   side-by-side benchmarks; fp32 weights)
//   quantization               none                 none | int8 | int4: weight-only quantisation
//                                                   at load (docs/llm.md, "Weight quantisation");
//                                                   int8/int4 need matmul_kernel packed
//   kv_cache_dtype             (kDefaultKvCacheDtype)  fp32 | bf16 | fp16: the KV cache's
//                                                   element type (16-bit: twice the tokens
//                                                   per byte; kv_cache_dtype.h)
//   speculative_model          (unset: off)         "[ngram]": speculative decoding by n-gram
//                                                   prompt lookup (docs/speculative_decoding.md);
//                                                   or a draft model's directory, relative to the
//                                                   version directory ("draft": <version>/draft/)
//   num_speculative_tokens     (required with it)   draft tokens per step (1..16)
//   ngram_prompt_lookup_max    4                    longest suffix looked up (1..64; [ngram] only)
//   ngram_prompt_lookup_min    1                    shortest suffix (1..ngram_prompt_lookup_max)
//
// Thread-safe (a value type).
#ifndef INFERA_LLM_LLM_MODEL_OPTIONS_H_
#define INFERA_LLM_LLM_MODEL_OPTIONS_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "llm/kv_cache_dtype.h"
#include "llm/llama_model_runner.h"
#include "llm/scheduler.h"
#include "llm/speculative_config.h"
#include "model_config.pb.h"
#include "repository/config_limits.h"

namespace infera::llm {

struct LlmModelOptions {
  int32_t max_num_seqs = 16;
  int64_t max_num_batched_tokens = 512;
  std::optional<int64_t> max_model_len;
  int32_t block_size = 16;
  std::optional<int64_t> kv_cache_memory_bytes;
  std::optional<double> kv_cache_memory_fraction;
  bool enable_prefix_caching = true;
  bool enable_chunked_prefill = true;
  bool use_mmap = false;
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  int num_threads = 0;
  int64_t max_waiting_requests = 1024;
  MatmulKernel matmul_kernel = MatmulKernel::kPacked;
  WeightQuantization quantization = WeightQuantization::kNone;
  KvCacheDtype kv_cache_dtype = kDefaultKvCacheDtype;
  SpeculativeConfig speculative;

  // InvalidArgument naming the parameter for a value that does not parse or is out of
  // range (the machine-dependent bounds against `machine`); unknown keys are ignored
  // (logged by the backend).
  static absl::StatusOr<LlmModelOptions> FromConfig(
      const inference::ModelConfig& config, const MachineLimits& machine = MachineLimits::Current());
  // The KV-cache budget in bytes given physical RAM.
  int64_t KvCacheBytes(int64_t physical_ram_bytes) const;
  // The context the model serves: max_model_len, else the model's
  // max_position_embeddings; for longrope without max_model_len its
  // original_max_position_embeddings (the short factors' range, where the output is
  // exactly Hugging Face's; a larger max_model_len selects the long factors:
  // LlamaConfig::SelectLongRopeRegime); for yarn the original length × factor (vLLM's).
  int64_t ModelLen(const LlamaConfig& model) const;
};

// "512MiB", "2G", "1048576" → bytes; nullopt when it does not parse or does not fit
// in int64_t.
std::optional<int64_t> ParseByteSize(std::string_view text);

}  // namespace infera::llm

#endif  // INFERA_LLM_LLM_MODEL_OPTIONS_H_
