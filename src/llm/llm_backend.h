// The `llm` backend: a Llama-family model from a Hugging Face folder, served by an
// LlmEngine, in the same model repository as every other model.
//
//   <repo>/<name>/config.pbtxt     backend: "llm", engine options as `parameters`
//                                  (llm_model_options.h); optional KServe tensors below
//   <repo>/<name>/1/               config.json, model.safetensors (or sharded + index),
//                                  tokenizer.json, tokenizer_config.json,
//                                  generation_config.json (optional)
//
// Generations reach it through ModelVersion::Generate and the TextGenerator capability
// (backend/text_generator.h, LoadedModel::text_generator()): prompts are rendered and
// tokenised on the version's prompt worker, never on an I/O thread. KServe infer uses Triton's vLLM-backend tensors: input `text_input` (BYTES),
// optional `sampling_parameters` (BYTES, a JSON object of vLLM sampling fields),
// `exclude_input_in_output` (BOOL), `stream` (BOOL, must be false over HTTP); output
// `text_output` (BYTES). Each instance blocks one scheduler worker per request while the
// engine generates, so KServe concurrency is the instance count: set instance_group
// count to max_num_seqs (the backend warns when it is lower).
//
// Thread-safe.
#ifndef INFERA_LLM_LLM_BACKEND_H_
#define INFERA_LLM_LLM_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backend/backend.h"
#include "llm/chat_template.h"
#include "llm/llm_engine.h"
#include "llm/prompt_worker.h"
#include "backend/text_generator.h"
#include "llm/text_imports.h"

namespace infera::llm {

inline constexpr std::string_view kLlmBackendName = "llm";

std::unique_ptr<Backend> CreateLlmBackend();

// One loaded LLM version: tokenizer, engine (which owns the model runner), chat
// template and the prompt worker. Thread-safe.
class LlmModel : public LoadedModel, public TextGenerator {
 public:
  // `batched`: the config's max_batch_size > 0 (KServe tensors carry a batch dimension).
  // `max_queued_prompts` bounds the prompt worker's queue.
  LlmModel(std::string name, std::unique_ptr<Tokenizer> tokenizer, absl::StatusOr<ChatTemplate> chat_template,
           bool batched, size_t max_queued_prompts = 1024);
  // Stops the prompt worker (queued prompts are refused), then the engine.
  ~LlmModel() override;

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions& options) override;
  // Refuses queued prompts and aborts every generation (their callbacks get kAbort).
  void CancelOutstandingWork() override;

  TextGenerator* text_generator() override { return this; }

  // TextGenerator.
  const std::string& name() const override { return name_; }
  int64_t max_model_len() const override { return engine_->options().scheduler.max_model_len; }
  int64_t created_unix_seconds() const override { return created_; }
  std::string_view TokenBytes(int32_t id) const override { return tokenizer_->TokenBytes(id); }
  GenerationMetrics Metrics() const override;
  void Generate(GenerationRequest request, GenerationCallbacks callbacks) override;

  LlmEngine& engine() const { return *engine_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // The detected chat template, or why there is none.
  const absl::StatusOr<ChatTemplate>& chat_template() const { return chat_template_; }

  void set_engine(std::unique_ptr<LlmEngine> engine) { engine_ = std::move(engine); }

 private:
  // On the prompt worker: render, tokenise (up to the prompt's budget), apply the
  // max_tokens default.
  absl::StatusOr<GenerateRequest> Prepare(GenerationRequest& request, std::string* echo_text) const;
  // InvalidArgument when the prompt's size alone shows it passes its budget
  // (prompt_length.h); no rendering or tokenising, so it runs on the caller's thread.
  absl::Status CheckPromptLength(const GenerationRequest& request) const;

  const std::string name_;
  const bool batched_;
  std::unique_ptr<Tokenizer> tokenizer_;  // declared before the engine: outlives it
  absl::StatusOr<ChatTemplate> chat_template_;
  std::unique_ptr<LlmEngine> engine_;
  PromptWorker prompt_worker_;  // declared after the engine: stopped first (its tasks queue on it)
  const int64_t created_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLM_BACKEND_H_
