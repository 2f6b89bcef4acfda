#include "llm/llm_backend.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <optional>
#include <thread>

#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "llm/text_imports.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_tokenizer.h"
#include "llm/cpu_kernels.h"
#include "llm/gguf_llama_config.h"
#include "llm/draft_model_loader.h"
#include "llm/llama_model_runner.h"
#include "llm/llm_metrics_series.h"
#include "llm/llm_tensor_instance.h"
#include "llm/llm_model_options.h"
#include "llm/packed_matmul.h"
#include "llm/prompt_length.h"

namespace infera::llm {
namespace {

int64_t PhysicalRamBytes() {
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGE_SIZE));
}

class LlmBackend : public Backend {
 public:
  std::string_view name() const override { return kLlmBackendName; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    RETURN_IF_ERROR(LlmModelOptions::FromConfig(config).status());
    for (const auto& input : config.input()) {
      const bool is_string = input.data_type() == inference::TYPE_STRING;
      const bool is_bool = input.data_type() == inference::TYPE_BOOL;
      if ((input.name() == "text_input" || input.name() == "sampling_parameters") && is_string) continue;
      if ((input.name() == "exclude_input_in_output" || input.name() == "stream") && is_bool) continue;
      return absl::InvalidArgumentError(StrCat(
          "input '", input.name(), "': the llm backend takes text_input (TYPE_STRING), optional "
          "sampling_parameters (TYPE_STRING), exclude_input_in_output and stream (TYPE_BOOL)"));
    }
    for (const auto& output : config.output()) {
      if (output.name() != "text_output" || output.data_type() != inference::TYPE_STRING) {
        return absl::InvalidArgumentError(StrCat("output '", output.name(),
                                                 "': the llm backend produces text_output (TYPE_STRING)"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override;

  // Generations stream: a request may be answered by many responses, and none holds a
  // worker thread (llm_tensor_instance.h).
  bool SupportsDecoupled() const override { return true; }
  bool AlwaysDecoupled() const override { return true; }
};

absl::StatusOr<std::unique_ptr<LoadedModel>> LlmBackend::Load(const ModelLoadContext& context) {
  const inference::ModelConfig& config = *context.config;
  ASSIGN_OR_RETURN(LlmModelOptions options, LlmModelOptions::FromConfig(config));
  // Load stages for the start-up log (docs/cold_start.md): tokenizer, weights, kv_cache.
  auto stage_start = std::chrono::steady_clock::now();
  auto end_stage = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    if (context.timings != nullptr) context.timings->AddStage(name, now - stage_start);
    stage_start = now;
  };
  // A GGUF file in the version directory is the model (docs/llm.md, "GGUF models").
  ASSIGN_OR_RETURN(std::optional<std::filesystem::path> gguf_path,
                   FindGgufModelFile(context.version_dir, config.default_model_filename()));
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<gguf::GgufFile> gguf_file;
  if (gguf_path) {
    ASSIGN_OR_RETURN(gguf_file, gguf::GgufFile::Open(*gguf_path));
    ASSIGN_OR_RETURN(tokenizer, gguf::LoadGgufTokenizer(gguf_file->metadata(), gguf_file->where()));
  } else {
    ASSIGN_OR_RETURN(tokenizer, Tokenizer::Load(context.version_dir));
  }
  end_stage("tokenizer");
  const int threads = options.num_threads > 0 ? options.num_threads
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  gguf_file.reset();  // the runner maps the file again for its tensors
  std::unique_ptr<LlamaModelRunner> runner;
  if (gguf_path) {
    if (options.speculative.method == SpeculativeConfig::Method::kDraftModel) {
      return absl::InvalidArgumentError("a GGUF model cannot use a draft model (speculative decoding) yet");
    }
    ASSIGN_OR_RETURN(runner, LlamaModelRunner::LoadGguf(*gguf_path, options, threads));
    if (runner->vocab_size() < tokenizer->vocab_size()) {
      return absl::InvalidArgumentError(StrCat(gguf_path->string(), ": token_embd has ", runner->vocab_size(),
                                               " rows but the tokenizer has ", tokenizer->vocab_size(), " tokens"));
    }
  } else {
    ASSIGN_OR_RETURN(runner, LlamaModelRunner::Load(context.version_dir, options, threads));
  }
  end_stage("weights");
  const LlamaConfig& mc = runner->config();

  EngineOptions engine;
  engine.block_size = options.block_size;
  engine.enable_prefix_caching = options.enable_prefix_caching;
  engine.max_waiting_requests = static_cast<size_t>(options.max_waiting_requests);
  engine.speculative = options.speculative;
  SchedulerConfig& sc = engine.scheduler;
  sc.max_num_seqs = options.max_num_seqs;
  sc.max_num_batched_tokens = options.max_num_batched_tokens;
  sc.enable_chunked_prefill = options.enable_chunked_prefill;
  sc.policy = options.policy;
  sc.max_model_len = options.ModelLen(mc);  // the length longrope's regime was chosen for
  sc.eos_token_ids = tokenizer->eos_token_ids();
  if (context.metrics) {
    engine.metrics_series = LlmMetricsSeries::Acquire(context.metrics, config.name(), sc.max_model_len);
  }
  for (int64_t id : mc.eos_token_ids) {
    if (std::find(sc.eos_token_ids.begin(), sc.eos_token_ids.end(), id) == sc.eos_token_ids.end()) {
      sc.eos_token_ids.push_back(static_cast<int32_t>(id));
    }
  }
  const int64_t kv_bytes = options.KvCacheBytes(PhysicalRamBytes());
  // Element size included: a 16-bit cache holds twice the tokens of the same budget.
  const int64_t block_bytes = runner->kv_bytes_per_token(options.kv_cache_dtype) * options.block_size;
  engine.num_blocks = static_cast<int32_t>(std::min<int64_t>(kv_bytes / block_bytes, 1 << 30));
  stage_start = std::chrono::steady_clock::now();  // the engine options above are not a stage
  RETURN_IF_ERROR(runner->AllocateKvCache(engine.num_blocks, engine.block_size, options.kv_cache_dtype));
  end_stage("kv_cache");
  std::unique_ptr<DraftModelProposer> draft;
  if (options.speculative.method == SpeculativeConfig::Method::kDraftModel) {
    // Its own cache, as many tokens as the target's (the draft is smaller per token), so
    // whatever the target holds the draft can hold too.
    ASSIGN_OR_RETURN(std::unique_ptr<LlamaModelRunner> draft_runner,
                     LoadDraftModel(context.version_dir, options, *tokenizer, runner->vocab_size(), threads));
    RETURN_IF_ERROR(draft_runner->AllocateKvCache(engine.num_blocks, engine.block_size, options.kv_cache_dtype));
    INFERA_LOG(INFO) << "model '" << config.name() << "': draft model '" << options.speculative.draft_model_dir
                     << "': " << draft_runner->config().num_layers << " layers x " << draft_runner->config().hidden_size
                     << ", " << draft_runner->num_parameters() / 1e6 << " M parameters, "
                     << options.speculative.num_speculative_tokens << " speculative tokens";
    draft = std::make_unique<DraftModelProposer>(std::move(draft_runner), engine.num_blocks, engine.block_size,
                                                 sc.max_model_len, sc.max_num_batched_tokens);
    end_stage("draft_model");
  }
  INFERA_LOG(INFO) << "model '" << config.name() << "': " << mc.model_type << ", " << mc.num_layers << " layers x "
                   << mc.hidden_size << ", " << runner->num_parameters() / 1e6 << " M parameters ("
                   << mc.torch_dtype << " on disk; " << static_cast<double>(runner->weight_bytes()) / (1 << 20)
                   << " MiB in memory, quantization " << WeightQuantizationName(options.quantization) << ", "
                   << (options.matmul_kernel == MatmulKernel::kPacked ? StrCat("packed matmul (", PackedMatmulIsa(), ")")
                                                                      : std::string("OpenBLAS matmul"))
                   << "); KV cache " << KvCacheDtypeName(options.kv_cache_dtype) << " " << engine.num_blocks
                   << " blocks x " << engine.block_size << " tokens = "
                   << static_cast<int64_t>(engine.num_blocks) * engine.block_size << " tokens ("
                   << static_cast<int64_t>(engine.num_blocks) * block_bytes / (1 << 20) << " MiB, attention "
                   << KvKernelIsaName(BestKvKernelIsa()) << "); max_model_len " << sc.max_model_len
                   << (mc.rope_scaling.type != "longrope"      ? ""
                       : mc.rope_scaling.use_long_factor ? " (longrope: long factors)"
                                                         : " (longrope: short factors)")
                   << ", max_num_seqs " << sc.max_num_seqs << ", " << threads << " threads";
  absl::StatusOr<ChatTemplate> chat = ChatTemplate::Detect(tokenizer->chat_template(), tokenizer->bos_token(),
                                                           tokenizer->eos_token(), tokenizer->chat_template_tool_use());
  // No template: /v1/completions still serves. A template that cannot be parsed: the load fails,
  // naming the line and the construct.
  if (!chat.ok() && !absl::IsFailedPrecondition(chat.status())) {
    return absl::InvalidArgumentError(StrCat("model '", config.name(), "': ", chat.status().message()));
  }
  // The prompt worker's queue is bounded like the engine's waiting queue.
  auto model = std::make_unique<LlmModel>(config.name(), std::move(tokenizer), std::move(chat),
                                          config.max_batch_size() > 0,
                                          static_cast<size_t>(options.max_waiting_requests));
  stage_start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto llm_engine, LlmEngine::Create(std::move(engine), std::move(runner), &model->tokenizer(),
                                                      std::move(draft)));
  model->set_engine(std::move(llm_engine));
  end_stage("engine");
  return model;
}

}  // namespace

LlmModel::LlmModel(std::string name, std::unique_ptr<Tokenizer> tokenizer, absl::StatusOr<ChatTemplate> chat_template,
                   bool batched, size_t max_queued_prompts)
    : name_(std::move(name)),
      batched_(batched),
      tokenizer_(std::move(tokenizer)),
      chat_template_(std::move(chat_template)),
      prompt_worker_(max_queued_prompts),
      created_(static_cast<int64_t>(std::time(nullptr))) {}

LlmModel::~LlmModel() { CancelOutstandingWork(); }

void LlmModel::CancelOutstandingWork() {
  prompt_worker_.Stop();
  if (engine_) engine_->Shutdown();
}

absl::StatusOr<std::unique_ptr<ModelInstance>> LlmModel::CreateInstance(const InstanceOptions&) {
  return std::make_unique<LlmTensorInstance>(*this, batched_);
}

GenerationMetrics LlmModel::Metrics() const {
  GenerationMetrics metrics = engine_->Metrics();
  metrics.max_num_seqs = engine_->options().scheduler.max_num_seqs;
  return metrics;
}

absl::Status LlmModel::CheckPromptLength(const GenerationRequest& request) const {
  const PromptLimit limit{max_model_len(), request.sampling.max_tokens, request.max_tokens_set};
  size_t bytes = 0;
  int64_t least = 0;
  if (request.messages) {
    // The template already holds the BOS text where the family wants it.
    bytes = ChatTemplate::MinRenderedBytes(*request.messages);
    least = LeastTextIds(*tokenizer_, bytes, /*add_special_tokens=*/false);
  } else if (request.prompt_text) {
    bytes = request.prompt_text->size();
    least = LeastTextIds(*tokenizer_, bytes, /*add_special_tokens=*/true);
  } else {
    least = static_cast<int64_t>(request.prompt_ids.size());
    if (least > limit.budget()) return PromptTooLong(limit, least, /*exact=*/true);
    return absl::OkStatus();
  }
  if (least > limit.budget()) return PromptTooLong(limit, least, /*exact=*/false, bytes, tokenizer_.get());
  return absl::OkStatus();
}

absl::StatusOr<GenerateRequest> LlmModel::Prepare(GenerationRequest& request, std::string* echo_text) const {
  GenerateRequest generate;
  const PromptLimit limit{max_model_len(), request.sampling.max_tokens, request.max_tokens_set};
  if (request.messages) {
    if (!chat_template_.ok()) return absl::InvalidArgumentError(chat_template_.status().message());
    ASSIGN_OR_RETURN(std::string prompt, chat_template_->Render(*request.messages, request.add_generation_prompt,
                                                                             request.tools));
    // The template already holds the BOS text where the family wants it.
    ASSIGN_OR_RETURN(generate.prompt_token_ids, TokenizePrompt(*tokenizer_, prompt, false, limit));
  } else if (request.prompt_text) {
    ASSIGN_OR_RETURN(generate.prompt_token_ids, TokenizePrompt(*tokenizer_, *request.prompt_text, true, limit));
    if (request.echo) *echo_text = std::move(*request.prompt_text);
  } else {
    RETURN_IF_ERROR(CheckPromptLength(request));  // before the echo's Decode
    generate.prompt_token_ids = std::move(request.prompt_ids);
    if (request.echo) *echo_text = tokenizer_->Decode(generate.prompt_token_ids);
  }
  const int64_t n = static_cast<int64_t>(generate.prompt_token_ids.size());  // < max_model_len (the budget)
  generate.sampling = std::move(request.sampling);
  if (!request.max_tokens_set) generate.sampling.max_tokens = std::max<int64_t>(1, max_model_len() - n);
  generate.priority = request.priority;
  generate.cancellation = std::move(request.cancellation);
  generate.deadline = request.deadline;
  generate.arrival_time = request.arrival_time;
  return generate;
}

void LlmModel::Generate(GenerationRequest request, GenerationCallbacks callbacks) {
  struct Work {
    GenerationRequest request;
    GenerationAdmitted admitted;
    GenerationOutputCallback output;
  };
  // A prompt whose size alone shows it cannot fit is refused here, on the caller's
  // thread, without queueing it behind other prompts or tokenising it.
  if (absl::Status fits = CheckPromptLength(request); !fits.ok()) return callbacks.admitted(std::move(fits), "");
  auto work = std::make_shared<Work>(
      Work{std::move(request), std::move(callbacks.admitted), std::move(callbacks.output)});
  absl::Status queued = prompt_worker_.Post([this, work](bool stopped) {
    if (stopped) return work->admitted(absl::UnavailableError(StrCat("model '", name_, "' is being unloaded")), "");
    const auto& cancellation = work->request.cancellation;
    if (cancellation && cancellation->IsCancelled()) return work->admitted(absl::CancelledError("request cancelled"), "");
    if (work->request.deadline && *work->request.deadline <= std::chrono::steady_clock::now()) {
      return work->admitted(absl::DeadlineExceededError("the request's deadline passed before its prompt was read"), "");
    }
    std::string echo;
    absl::StatusOr<GenerateRequest> generate = Prepare(work->request, &echo);
    if (!generate.ok()) return work->admitted(generate.status(), "");
    absl::Status added = engine_->AddRequest(std::move(*generate), std::move(work->output));
    work->admitted(added, added.ok() ? std::move(echo) : std::string());
  });
  if (!queued.ok()) work->admitted(queued, "");
}

std::unique_ptr<Backend> CreateLlmBackend() { return std::make_unique<LlmBackend>(); }

}  // namespace infera::llm
