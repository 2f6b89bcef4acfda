// GGUF model files for the `llm` backend: which file of a version directory is the model
// (FindGgufModelFile), and the LlamaConfig a GGUF file's metadata describes
// (LlamaConfigFromGguf). docs/llm.md, "GGUF models".
//
// Architectures (`general.architecture`): llama (Llama 2/3, and Mistral, which GGUF files
// call llama), qwen2, qwen3, phi3, gemma2, gemma3. Hyper-parameters come from the
// `<arch>.*` keys (block_count, embedding_length, feed_forward_length,
// attention.head_count(_kv), attention.key_length / value_length,
// attention.layer_norm_rms_epsilon, rope.freq_base, rope.dimension_count,
// rope.scaling.type / factor / original_context_length / attn_factor, context_length,
// attention.sliding_window, logit soft-capping); the vocabulary size from the token_embd
// tensor. A key the engine cannot honour (partial rotary dimensions, rope scaling other
// than none / linear / yarn, yarn_log_multiplier, value length != key length) or another
// architecture is an InvalidArgument naming it.
//
// Thread-safe (pure functions).
#ifndef INFERA_LLM_GGUF_LLAMA_CONFIG_H_
#define INFERA_LLM_GGUF_LLAMA_CONFIG_H_

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gguf/gguf_file.h"
#include "llm/llama_config.h"

namespace infera::llm {

// The GGUF model of `version_dir`: the file named `default_model_filename` when it ends in
// ".gguf", else the only *.gguf file there; nullopt when there is none (the Hugging Face
// files are the model). Two or more *.gguf files without a naming default_model_filename,
// or a named file that is missing, is an InvalidArgument naming them.
absl::StatusOr<std::optional<std::filesystem::path>> FindGgufModelFile(const std::filesystem::path& version_dir,
                                                                        const std::string& default_model_filename);

// The per-frequency rope factor tensors, llama.cpp's names: rope_freqs (Llama 3.1's
// llama3 scaling) and Phi-3's longrope short / long factors.
inline constexpr std::string_view kRopeFreqsTensor = "rope_freqs.weight";
inline constexpr std::string_view kRopeFactorsShortTensor = "rope_factors_short.weight";
inline constexpr std::string_view kRopeFactorsLongTensor = "rope_factors_long.weight";

// The architecture of `file`. Errors name the file and the key.
absl::StatusOr<LlamaConfig> LlamaConfigFromGguf(const gguf::GgufFile& file);

// Whether the architecture's GGUF converter stores attn_q / attn_k rows permuted for
// interleaved (GPT-J style) RoPE: llama only.
inline bool GgufQkPermuted(const LlamaConfig& c) { return c.model_type == "llama" || c.model_type == "mistral"; }

}  // namespace infera::llm

#endif  // INFERA_LLM_GGUF_LLAMA_CONFIG_H_
