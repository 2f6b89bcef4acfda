// LoadDraftModel: opens the draft model that `speculative_model: "<dir>"` names, for
// speculative decoding with a draft model (draft_model_proposer.h,
// docs/speculative_decoding.md).
//
// The directory is relative to the model's version directory (llm_model_options.cc
// refuses absolute paths and ".."); after symlinks it must still lie inside the model's
// directory (the version directory's parent), so a config cannot make the server read
// another model's or the system's files. It holds a Llama-family Hugging Face model
// (config.json, safetensors) loaded like the target (same matmul kernel and weight
// quantization, `num_threads` threads), whose vocabulary must be the target's: the same
// size, and — when the draft has its own tokenizer.json — the same bytes for every id.
// Every failure is InvalidArgument naming the parameter and what differs.
//
// Thread-safe (no shared state); runs on the loading thread.
#ifndef INFERA_LLM_DRAFT_MODEL_LOADER_H_
#define INFERA_LLM_DRAFT_MODEL_LOADER_H_

#include <filesystem>
#include <memory>

#include "absl/status/statusor.h"
#include "llm/llama_model_runner.h"
#include "llm/llm_model_options.h"
#include "llm/text_imports.h"

namespace infera::llm {

// `target_vocab_size`: the target runner's (logits width).
absl::StatusOr<std::unique_ptr<LlamaModelRunner>> LoadDraftModel(const std::filesystem::path& version_dir,
                                                                 const LlmModelOptions& options,
                                                                 const Tokenizer& target_tokenizer,
                                                                 int64_t target_vocab_size, int num_threads);

}  // namespace infera::llm

#endif  // INFERA_LLM_DRAFT_MODEL_LOADER_H_
