#include "llm/llm_backend.h"

#include <unistd.h>

#include <ctime>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "llm/json_util.h"
#include "llm/llama_model_runner.h"
#include "llm/llm_metrics_series.h"
#include "llm/llm_model_options.h"
#include "llm/openai_protocol.h"
#include "llm/packed_matmul.h"

namespace infera::llm {
namespace {

int64_t PhysicalRamBytes() {
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGE_SIZE));
}

// Waits for one generation's outputs.
struct Collector {
  absl::Mutex mu;
  std::string text ABSL_GUARDED_BY(mu);
  bool done ABSL_GUARDED_BY(mu) = false;
  absl::Status status ABSL_GUARDED_BY(mu);
};

class LlmKServeInstance : public ModelInstance {
 public:
  LlmKServeInstance(const LlmModel& model, bool batched) : model_(model), batched_(batched) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs) override {
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
    std::vector<std::unique_ptr<Collector>> collectors;
    for (std::string_view prompt : prompts) {
      auto c = std::make_unique<Collector>();
      GenerateRequest request;
      request.prompt_token_ids = model_.tokenizer().Encode(prompt, true);
      request.sampling = params;
      Collector* raw = c.get();
      absl::Status added = model_.engine().AddRequest(std::move(request), [raw](RequestOutput out) {
        absl::MutexLock lock(&raw->mu);
        raw->text += out.text;
        if (out.finish_reason != FinishReason::kNone) {
          raw->done = true;
          if (out.finish_reason == FinishReason::kError) raw->status = out.error;
          if (out.finish_reason == FinishReason::kAbort) raw->status = absl::CancelledError("generation aborted");
        }
      });
      if (!added.ok()) {
        absl::MutexLock lock(&raw->mu);
        raw->done = true;
        raw->status = added;
      }
      collectors.push_back(std::move(c));
    }
    std::string data;
    for (size_t i = 0; i < collectors.size(); ++i) {
      Collector& c = *collectors[i];
      absl::MutexLock lock(&c.mu);
      c.mu.Await(absl::Condition(&c.done));
      if (!c.status.ok()) return c.status;
      AppendBytesElement(data, exclude_input ? c.text : StrCat(prompts[i], c.text));
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
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, Tokenizer::Load(context.version_dir));
  const int threads = options.num_threads > 0 ? options.num_threads
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ASSIGN_OR_RETURN(std::unique_ptr<LlamaModelRunner> runner, LlamaModelRunner::Load(context.version_dir, threads,
                                                                                         options.matmul_kernel));
  const LlamaConfig& mc = runner->config();

  EngineOptions engine;
  engine.block_size = options.block_size;
  engine.enable_prefix_caching = options.enable_prefix_caching;
  engine.max_waiting_requests = static_cast<size_t>(options.max_waiting_requests);
  if (context.metrics) engine.metrics_series = LlmMetricsSeries::Acquire(context.metrics, config.name());
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
  for (int64_t id : mc.eos_token_ids) {
    if (std::find(sc.eos_token_ids.begin(), sc.eos_token_ids.end(), id) == sc.eos_token_ids.end()) {
      sc.eos_token_ids.push_back(static_cast<int32_t>(id));
    }
  }
  const int64_t kv_bytes = options.KvCacheBytes(PhysicalRamBytes());
  const int64_t block_bytes = runner->kv_bytes_per_token() * options.block_size;
  engine.num_blocks = static_cast<int32_t>(std::min<int64_t>(kv_bytes / block_bytes, 1 << 30));
  RETURN_IF_ERROR(runner->AllocateKvCache(engine.num_blocks, engine.block_size));
  INFERA_LOG(INFO) << "model '" << config.name() << "': " << mc.model_type << ", " << mc.num_layers << " layers x "
                   << mc.hidden_size << ", " << runner->num_parameters() / 1e6 << " M parameters ("
                   << mc.torch_dtype << " on disk; " << runner->weight_bytes() / (1 << 20) << " MiB in memory, "
                   << (options.matmul_kernel == MatmulKernel::kPacked ? StrCat("packed matmul (", PackedMatmulIsa(), ")")
                                                                      : std::string("OpenBLAS matmul"))
                   << "); KV cache " << engine.num_blocks << " blocks x " << engine.block_size << " tokens ("
                   << engine.num_blocks * block_bytes / (1 << 20) << " MiB); max_model_len " << sc.max_model_len
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
  auto model = std::make_unique<LlmModel>(config.name(), std::move(tokenizer), std::move(chat),
                                          config.max_batch_size() > 0);
  ASSIGN_OR_RETURN(auto llm_engine, LlmEngine::Create(std::move(engine), std::move(runner), &model->tokenizer()));
  model->set_engine(std::move(llm_engine));
  return model;
}

}  // namespace

LlmModel::LlmModel(std::string name, std::unique_ptr<Tokenizer> tokenizer, absl::StatusOr<ChatTemplate> chat_template,
                   bool batched)
    : name_(std::move(name)),
      batched_(batched),
      tokenizer_(std::move(tokenizer)),
      chat_template_(std::move(chat_template)),
      created_(static_cast<int64_t>(std::time(nullptr))) {}

LlmModel::~LlmModel() {
  if (engine_) engine_->Shutdown();
}

absl::StatusOr<std::unique_ptr<ModelInstance>> LlmModel::CreateInstance(const InstanceOptions&) {
  return std::make_unique<LlmKServeInstance>(*this, batched_);
}

std::unique_ptr<Backend> CreateLlmBackend() { return std::make_unique<LlmBackend>(); }

}  // namespace infera::llm
