#include "llm/llm_backend.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "api/cancellation.h"
#include "api/sampling_params_json.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "llm/text_imports.h"
#include "llm/cpu_kernels.h"
#include "llm/llama_model_runner.h"
#include "llm/llm_metrics_series.h"
#include "llm/llm_model_options.h"
#include "llm/packed_matmul.h"

namespace infera::llm {
namespace {

int64_t PhysicalRamBytes() {
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGE_SIZE));
}

// One KServe batch's generations. Shared by every engine callback of the batch and by
// Execute(), so it lives until the last of them lets go. The first failure cancels the
// rest of the batch.
struct Batch {
  absl::Mutex mu;
  std::vector<std::string> texts ABSL_GUARDED_BY(mu);
  int pending ABSL_GUARDED_BY(mu) = 0;  // submitted and not finished
  absl::Status first_error ABSL_GUARDED_BY(mu);
  CancellationToken cancel;

  void Fail(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (first_error.ok()) first_error = std::move(status);
    cancel.Cancel();
  }
};

class LlmKServeInstance : public ModelInstance {
 public:
  LlmKServeInstance(const LlmModel& model, bool batched) : model_(model), batched_(batched) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    // (Blocks the worker until every generation of the batch ends; the decoupled
    // instance replaces this: docs/request_path.md.)
    const Tensor* text = nullptr;
    SamplingParams params;
    bool exclude_input = false;
    for (const Tensor& t : inputs) {
      if (t.name == "text_input") text = &t;
      if (t.name == "exclude_input_in_output" && !t.data.empty()) exclude_input = t.data.data()[0] != 0;
      if (t.name == "stream" && !t.data.empty() && t.data.data()[0] != 0) {
        return absl::InvalidArgumentError("stream=true needs a streaming transport; use POST /v1/completions with \"stream\": true");
      }
      if (t.name == "sampling_parameters") {
        ASSIGN_OR_RETURN(auto elements, SplitBytesElements(t.data.AsStringView()));
        if (!elements.empty() && !elements[0].empty()) {
          rapidjson::Document doc;
          RETURN_IF_ERROR(ParseJson(elements[0], "sampling_parameters", doc));
          if (!doc.IsObject()) return absl::InvalidArgumentError("sampling_parameters must be a JSON object");
          RETURN_IF_ERROR(ParseSamplingFields(doc, params, nullptr));
        }
      }
    }
    if (!text) return absl::InvalidArgumentError("input 'text_input' is required");
    ASSIGN_OR_RETURN(auto prompts, SplitBytesElements(text->data.AsStringView()));
    // One failed prompt fails the batch: the others are cancelled, and every submitted
    // generation is waited for before returning.
    auto batch = std::make_shared<Batch>();
    {
      absl::MutexLock lock(&batch->mu);
      batch->texts.resize(prompts.size());
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
      GenerateRequest request;
      request.prompt_token_ids = model_.tokenizer().Encode(prompts[i], true);
      request.sampling = params;
      request.cancellation = std::shared_ptr<const CancellationToken>(batch, &batch->cancel);
      absl::MutexLock lock(&batch->mu);
      if (!batch->first_error.ok()) break;
      ++batch->pending;
      // The callback runs on the engine thread, never inside AddRequest: the lock is free.
      absl::Status added = model_.engine().AddRequest(std::move(request), [batch, i](RequestOutput out) {
        absl::MutexLock lock(&batch->mu);
        batch->texts[i] += out.text;
        if (out.finish_reason == FinishReason::kNone) return;
        --batch->pending;
        if (out.finish_reason == FinishReason::kError) batch->Fail(out.error);
        if (out.finish_reason == FinishReason::kAbort) batch->Fail(absl::CancelledError("generation aborted"));
      });
      if (!added.ok()) {
        --batch->pending;
        batch->Fail(std::move(added));
      }
    }
    std::string data;
    {
      absl::MutexLock lock(&batch->mu);
      batch->mu.Await(absl::Condition(
          +[](Batch* b) ABSL_NO_THREAD_SAFETY_ANALYSIS { return b->pending == 0; }, batch.get()));
      if (!batch->first_error.ok()) return batch->first_error;
      for (size_t i = 0; i < prompts.size(); ++i) {
        AppendBytesElement(data, exclude_input ? batch->texts[i] : StrCat(prompts[i], batch->texts[i]));
      }
    }
    Tensor out;
    out.name = "text_output";
    out.dtype = DataType::kBytes;
    out.shape = batched_ ? Shape{static_cast<int64_t>(prompts.size()), 1} : Shape{1};
    out.data = Buffer::FromString(std::move(data));
    return std::vector<Tensor>{std::move(out)};
  }

 private:
  const LlmModel& model_;
  const bool batched_;
};

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
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, Tokenizer::Load(context.version_dir));
  end_stage("tokenizer");
  const int threads = options.num_threads > 0 ? options.num_threads
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ASSIGN_OR_RETURN(std::unique_ptr<LlamaModelRunner> runner, LlamaModelRunner::Load(context.version_dir, options,
                                                                                         threads));
  end_stage("weights");
  const LlamaConfig& mc = runner->config();

  EngineOptions engine;
  engine.block_size = options.block_size;
  engine.enable_prefix_caching = options.enable_prefix_caching;
  engine.max_waiting_requests = static_cast<size_t>(options.max_waiting_requests);
  SchedulerConfig& sc = engine.scheduler;
  sc.max_num_seqs = options.max_num_seqs;
  sc.max_num_batched_tokens = options.max_num_batched_tokens;
  sc.enable_chunked_prefill = options.enable_chunked_prefill;
  sc.policy = options.policy;
  sc.max_model_len = options.max_model_len.value_or(mc.max_position_embeddings);
  if (mc.sliding_window > 0 && sc.max_model_len > mc.sliding_window) {
    INFERA_LOG(WARNING) << "model '" << config.name() << "': max_model_len capped at the sliding window "
                        << mc.sliding_window << " (sliding-window attention is not implemented)";
    sc.max_model_len = mc.sliding_window;
  }
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
                   << ", max_num_seqs " << sc.max_num_seqs << ", " << threads << " threads";
  int instances = 0;
  for (const auto& g : config.instance_group()) instances += g.count();
  if (config.input_size() > 0 && instances < sc.max_num_seqs) {
    INFERA_LOG(WARNING) << "model '" << config.name() << "': KServe infer runs at most " << instances
                        << " requests at once (instance_group count) but max_num_seqs is " << sc.max_num_seqs
                        << "; set instance_group count to " << sc.max_num_seqs << " to batch KServe requests fully";
  }
  absl::StatusOr<ChatTemplate> chat = ChatTemplate::Detect(tokenizer->chat_template(), tokenizer->bos_token(),
                                                           tokenizer->eos_token());
  // The prompt worker's queue is bounded like the engine's waiting queue.
  auto model = std::make_unique<LlmModel>(config.name(), std::move(tokenizer), std::move(chat),
                                          config.max_batch_size() > 0,
                                          static_cast<size_t>(options.max_waiting_requests));
  stage_start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto llm_engine, LlmEngine::Create(std::move(engine), std::move(runner), &model->tokenizer()));
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
  return std::make_unique<LlmKServeInstance>(*this, batched_);
}

GenerationMetrics LlmModel::Metrics() const {
  GenerationMetrics metrics = engine_->Metrics();
  metrics.max_num_seqs = engine_->options().scheduler.max_num_seqs;
  return metrics;
}

absl::StatusOr<GenerateRequest> LlmModel::Prepare(GenerationRequest& request, std::string* echo_text) const {
  GenerateRequest generate;
  if (request.messages) {
    if (!chat_template_.ok()) return absl::InvalidArgumentError(chat_template_.status().message());
    ASSIGN_OR_RETURN(std::string prompt, chat_template_->Render(*request.messages, request.add_generation_prompt));
    // The template already holds the BOS text where the family wants it.
    generate.prompt_token_ids = tokenizer_->Encode(prompt, /*add_special_tokens=*/false);
  } else if (request.prompt_text) {
    generate.prompt_token_ids = tokenizer_->Encode(*request.prompt_text, /*add_special_tokens=*/true);
    if (request.echo) *echo_text = std::move(*request.prompt_text);
  } else {
    generate.prompt_token_ids = std::move(request.prompt_ids);
    if (request.echo) *echo_text = tokenizer_->Decode(generate.prompt_token_ids);
  }
  const int64_t n = static_cast<int64_t>(generate.prompt_token_ids.size());
  if (n >= max_model_len()) {
    return absl::InvalidArgumentError(StrCat("This model's maximum context length is ", max_model_len(),
                                             " tokens (max_model_len). However, the prompt has ", n,
                                             " tokens, which leaves no room for a completion. Please reduce the "
                                             "prompt."));
  }
  generate.sampling = std::move(request.sampling);
  if (!request.max_tokens_set) generate.sampling.max_tokens = std::max<int64_t>(1, max_model_len() - n);
  generate.priority = request.priority;
  generate.cancellation = std::move(request.cancellation);
  generate.arrival_time = request.arrival_time;
  return generate;
}

void LlmModel::Generate(GenerationRequest request, GenerationCallbacks callbacks) {
  struct Work {
    GenerationRequest request;
    GenerationAdmitted admitted;
    GenerationOutputCallback output;
  };
  auto work = std::make_shared<Work>(
      Work{std::move(request), std::move(callbacks.admitted), std::move(callbacks.output)});
  absl::Status queued = prompt_worker_.Post([this, work](bool stopped) {
    if (stopped) return work->admitted(absl::UnavailableError(StrCat("model '", name_, "' is being unloaded")), "");
    const auto& cancellation = work->request.cancellation;
    if (cancellation && cancellation->IsCancelled()) return work->admitted(absl::CancelledError("request cancelled"), "");
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
