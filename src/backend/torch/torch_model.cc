// LibTorch first: torch_tensor.h only forward-declares at::Tensor.
#include <ATen/Parallel.h>
#include <torch/script.h>

#include "backend/torch/torch_model.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/torch/io_binding.h"
#include "backend/torch/precision_figures.h"
#include "backend/torch/precision_probe.h"
#include "backend/torch/torch_errors.h"
#include "backend/torch/torch_module_loader.h"
#include "backend/torch/torch_pinning.h"
#include "backend/torch/torch_precision.h"
#include "backend/torch/torch_tensor.h"
#include "common/cpu_placement.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

// Everything the instances of one version share. Immutable after LoadTorchModel.
struct ModelState {
  inference::ModelConfig config;
  TorchModelOptions options;
  std::filesystem::path path;
  torch::jit::Module module;
  InputBinding inputs;
  OutputBinding outputs;
  std::map<std::string, int, std::less<>> input_index;  // config input name -> index
  // Per forward() argument, the value used when no input feeds it: its default, None
  // for Optional[Tensor], or nullopt when it is required.
  std::vector<std::optional<c10::IValue>> fallback;
  std::vector<DataType> output_types;  // per config output
  // bf16/fp16: the dtype floating inputs are cast to (outputs are cast back to the
  // config's dtype); nullopt: no casts.
  std::optional<at::ScalarType> compute_dtype;
  // Load-time facts for the config answer (LoadedModel::ReportedParameters).
  std::vector<std::pair<std::string, std::string>> reported;
};

std::optional<at::ScalarType> TorchFloatType(DataType type) {
  switch (type) {
    case DataType::kFp16: return at::kHalf;
    case DataType::kBf16: return at::kBFloat16;
    case DataType::kFp32: return at::kFloat;
    case DataType::kFp64: return at::kDouble;
    default: return std::nullopt;
  }
}

class TorchInstance final : public ModelInstance {
 public:
  TorchInstance(std::shared_ptr<const ModelState> state, torch::jit::Module module, int threads,
                std::string name = "", std::unique_ptr<CpuLease> cpus = nullptr)
      : state_(std::move(state)), module_(std::move(module)), threads_(threads), name_(std::move(name)),
        cpus_(std::move(cpus)) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& context) override {
    return CatchTorchErrors(absl::StatusCode::kInternal, "model execution failed",
                    [&] { return ExecuteUnguarded(inputs, context.is_warmup()); });
  }

 private:
  // `warmup`: not on the scheduler's worker (ExecutionContext::is_warmup).
  absl::StatusOr<std::vector<Tensor>> ExecuteUnguarded(const std::vector<Tensor>& inputs, bool warmup);
  absl::StatusOr<std::vector<c10::IValue>> BuildArguments(const std::vector<Tensor>& inputs);
  absl::StatusOr<std::vector<Tensor>> CollectOutputs(const c10::IValue& result);

  // --cpu-placement pinned: pins the worker and its intra-op team to cpus_ (once).
  void PinWorkerThreads();

  const std::shared_ptr<const ModelState> state_;
  torch::jit::Module module_;
  const int threads_;
  const std::string name_;
  // --cpu-placement pinned: this instance's CPUs, one per intra-op thread (null: none).
  // The first execution that is not a warm-up (ExecutionContext::is_warmup: the loader's
  // warm-up runs and probes) is on the scheduler's worker and pins that thread.
  const std::unique_ptr<CpuLease> cpus_;
  bool pinned_ = false;
};

void TorchInstance::PinWorkerThreads() {
  pinned_ = true;
  absl::StatusOr<std::string> pinned = PinIntraOpThreads(cpus_->cpus(), threads_);
  if (pinned.ok()) {
    INFERA_LOG(INFO) << "cpu placement: pinned instance " << name_ << ": " << *pinned;
  } else {
    INFERA_LOG(WARNING) << "cpu placement: instance " << name_ << " runs unpinned: " << pinned.status().message();
  }
}

absl::StatusOr<std::vector<Tensor>> TorchInstance::ExecuteUnguarded(
    const std::vector<Tensor>& inputs, bool warmup) {
  // The intra-op budget is per calling thread (OpenMP ICV). get_num_threads() runs
  // ATen's lazy per-thread initialisation first; setting before it would be undone by
  // it (it re-applies the process-wide last value set by any thread).
  if (at::get_num_threads() != threads_) at::set_num_threads(threads_);
  // The first execution on the scheduler's worker pins that thread (warm-ups and probes
  // run on a loader thread).
  if (cpus_ != nullptr && !pinned_ && !warmup) PinWorkerThreads();
  // A thread-local flag, so it is set around every call on the worker thread.
  torch::jit::GraphOptimizerEnabledGuard executor_optimize(
      !state_->options.disable_optimized_execution);
  std::optional<c10::InferenceMode> inference_mode;
  std::optional<torch::NoGradGuard> no_grad;
  if (state_->options.inference_mode) {
    inference_mode.emplace();
  } else {
    no_grad.emplace();
  }
  ASSIGN_OR_RETURN(std::vector<c10::IValue> arguments, BuildArguments(inputs));
  const c10::IValue result = module_.forward(std::move(arguments));
  return CollectOutputs(result);
}

absl::StatusOr<std::vector<c10::IValue>> TorchInstance::BuildArguments(
    const std::vector<Tensor>& inputs) {
  const ModelState& state = *state_;
  std::vector<std::optional<c10::IValue>> slots(state.fallback.size());
  for (const Tensor& input : inputs) {
    auto it = state.input_index.find(input.name);
    if (it == state.input_index.end()) {
      return absl::InvalidArgumentError(StrCat("unexpected input '", input.name, "'"));
    }
    ASSIGN_OR_RETURN(at::Tensor tensor, ToTorchTensor(input));
    // The model boundary of a reduced precision: floating inputs only (ids stay int64).
    if (state.compute_dtype && tensor.is_floating_point() &&
        tensor.scalar_type() != *state.compute_dtype) {
      tensor = tensor.dim() == 4
                   ? tensor.to(*state.compute_dtype, /*non_blocking=*/false, /*copy=*/false,
                               at::MemoryFormat::ChannelsLast)
                   : tensor.to(*state.compute_dtype);
    }
    slots[state.inputs.position[it->second]] = std::move(tensor);
  }
  std::vector<c10::IValue> arguments;
  arguments.reserve(slots.size());
  for (size_t a = 0; a < slots.size(); ++a) {
    if (!slots[a]) slots[a] = state.fallback[a];
    if (!slots[a]) {
      std::string fed_by;
      for (size_t i = 0; i < state.inputs.position.size(); ++i) {
        if (state.inputs.position[i] == static_cast<int>(a)) {
          fed_by = state.config.input(static_cast<int>(i)).name();
        }
      }
      return absl::InvalidArgumentError(StrCat("input '", fed_by, "' is missing and forward() "
                                               "argument ", a, " has no default"));
    }
    arguments.push_back(*std::move(slots[a]));
  }
  return arguments;
}

absl::StatusOr<std::vector<Tensor>> TorchInstance::CollectOutputs(const c10::IValue& result) {
  const ModelState& state = *state_;
  std::vector<c10::IValue> values;
  if (result.isTensor()) {
    values.push_back(result);
  } else if (result.isTuple()) {
    const auto& elements = result.toTupleRef().elements();
    values.assign(elements.begin(), elements.end());
  } else if (result.isList()) {
    for (const c10::IValue& element : result.toListRef()) values.push_back(element);
  } else {
    return absl::InternalError(StrCat("forward() returned a ", result.tagKind(),
                                      "; the pytorch backend needs a Tensor or a "
                                      "tuple/list of Tensors"));
  }
  RETURN_IF_ERROR(CheckReturnedCount(state.outputs, state.config, values.size()));
  std::vector<Tensor> outputs;
  outputs.reserve(state.outputs.index.size());
  for (size_t i = 0; i < state.outputs.index.size(); ++i) {
    const inference::ModelOutput& config = state.config.output(static_cast<int>(i));
    const c10::IValue& value = values[state.outputs.index[i]];
    if (!value.isTensor()) {
      return absl::InternalError(StrCat("output '", config.name(), "': returned value ",
                                        state.outputs.index[i], " is a ", value.tagKind(),
                                        ", not a Tensor"));
    }
    at::Tensor result_tensor = value.toTensor();
    // Back to the declared dtype, so clients see no change; only what the model computes
    // in the reduced dtype is cast (any other mismatch stays the model's fault).
    const std::optional<at::ScalarType> declared = TorchFloatType(state.output_types[i]);
    if (state.compute_dtype && declared && result_tensor.defined() &&
        result_tensor.scalar_type() == *state.compute_dtype && *declared != *state.compute_dtype) {
      result_tensor = result_tensor.to(*declared);
    }
    ASSIGN_OR_RETURN(Tensor tensor,
                     FromTorchTensor(config.name(), state.output_types[i],
                                     inference::DataType_Name(config.data_type()),
                                     std::move(result_tensor)));
    outputs.push_back(std::move(tensor));
  }
  return outputs;
}

// forward()'s arguments (self excluded) and their fallback values.
absl::Status InspectForward(const torch::jit::Module& module, std::vector<ForwardArgument>* args,
                            std::vector<std::optional<c10::IValue>>* fallback) {
  c10::optional<torch::jit::Method> forward = module.find_method("forward");
  if (!forward) return absl::InvalidArgumentError("the module has no forward() method");
  const auto& schema_arguments = forward->function().getSchema().arguments();
  for (size_t a = 1; a < schema_arguments.size(); ++a) {
    const c10::Argument& argument = schema_arguments[a];
    ForwardArgument out;
    out.name = argument.name();
    out.has_default = argument.default_value().has_value();
    out.accepts_tensor = c10::TensorType::get()->isSubtypeOf(*argument.type());
    std::optional<c10::IValue> value;
    if (argument.default_value()) {
      value = *argument.default_value();
    } else if (argument.type()->kind() == c10::OptionalType::Kind) {
      value = c10::IValue();  // None
      out.has_default = true;
    }
    args->push_back(std::move(out));
    fallback->push_back(std::move(value));
  }
  return absl::OkStatus();
}

class TorchLoadedModel final : public LoadedModel {
 public:
  explicit TorchLoadedModel(std::shared_ptr<const ModelState> state) : state_(std::move(state)) {}

  std::vector<std::pair<std::string, std::string>> ReportedParameters() const override {
    return state_->reported;
  }

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(
      const InstanceOptions& options) override {
    const int threads = state_->options.intra_op_threads > 0 ? state_->options.intra_op_threads
                                                             : std::max(1, options.intra_op_threads);
    torch::jit::Module module = state_->module;  // a handle: shares the weights
    if (!state_->options.share_weights && options.index > 0) {
      ASSIGN_OR_RETURN(module, LoadModule(state_->path, state_->options, nullptr));
    }
    INFERA_LOG(VERBOSE) << "pytorch: instance " << options.name << " uses " << threads
                        << " intra-op thread(s)"
                        << (state_->options.share_weights ? ", shared weights" : "");
    std::unique_ptr<CpuLease> cpus;
    if (std::shared_ptr<CpuPlacement> placement = ProcessCpuPlacement()) {
      cpus = placement->Reserve(options.name, threads);
    }
    return std::make_unique<TorchInstance>(state_, std::move(module), threads, options.name, std::move(cpus));
  }

 private:
  const std::shared_ptr<const ModelState> state_;
};

// Loads the file at `options.precision` and binds it to the config. `arguments` (may be
// null) receives forward()'s arguments, for the log; `timings` (may be null) the load stages.
absl::StatusOr<std::shared_ptr<ModelState>> BuildState(const ModelLoadContext& context,
                                                       const TorchModelOptions& options,
                                                       LoadFacts* facts,
                                                       std::vector<ForwardArgument>* arguments,
                                                       LoadTimings* timings) {
  auto state = std::make_shared<ModelState>();
  state->config = *context.config;
  state->options = options;
  state->path = context.version_dir / options.model_filename;
  ASSIGN_OR_RETURN(state->module, LoadModule(state->path, options, facts, timings));
  if (options.precision == Precision::kBf16) state->compute_dtype = at::kBFloat16;
  if (options.precision == Precision::kFp16) state->compute_dtype = at::kHalf;

  std::vector<ForwardArgument> ignored;
  if (arguments == nullptr) arguments = &ignored;
  RETURN_IF_ERROR(CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                           StrCat("cannot read forward() of '", state->path.string(), "'"),
                           [&] { return InspectForward(state->module, arguments,
                                                       &state->fallback); }));
  ASSIGN_OR_RETURN(state->inputs, BindInputs(state->config, *arguments));
  ASSIGN_OR_RETURN(state->outputs, BindOutputs(state->config));
  for (int i = 0; i < state->config.input_size(); ++i) {
    state->input_index[state->config.input(i).name()] = i;
  }
  for (const inference::ModelOutput& output : state->config.output()) {
    state->output_types.push_back(FromConfigDataType(output.data_type()));
  }
  return state;
}

std::string Number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

// The load-time probe of a reduced precision (docs/optimisation.md): a trial run (a
// missing kernel fails the load here, not at the first request), the measured speed-up
// over fp32 and, with VALIDATE_PRECISION, the accuracy figures and their floors. Fills
// `state->reported`.
absl::Status ProbePrecision(const ModelLoadContext& context, const LoadFacts& facts,
                            const std::shared_ptr<ModelState>& state) {
  const TorchModelOptions& options = state->options;
  const std::string precision(PrecisionName(options.precision));
  const std::string model = state->config.name();
  TorchModelOptions fp32_options = options;
  fp32_options.precision = Precision::kFp32;
  ASSIGN_OR_RETURN(std::shared_ptr<ModelState> reference,
                   BuildState(context, fp32_options, nullptr, nullptr, nullptr));
  // One thread: the figure compares the two precisions, not the instance's budget.
  TorchInstance fp32(reference, reference->module, 1);
  TorchInstance reduced(state, state->module, 1);
  const int64_t id_bound = SmallestEmbeddingRows(reference->module);
  const std::vector<Tensor> sample = ValidationBatches(state->config, id_bound, 1).front();

  auto& reported = state->reported;
  reported.emplace_back("infera.precision", precision);
  if (facts.quantized_layers >= 0) {
    reported.emplace_back("infera.precision.quantized_layers", std::to_string(facts.quantized_layers));
    if (facts.quantized_layers == 0) {
      INFERA_LOG(WARNING) << "pytorch: model '" << model << "': PRECISION int8_dynamic "
                          << "quantised 0 Linear layers (no aten::linear with a constant fp32 "
                          << "weight); the model computes in fp32";
    }
  }
  if (options.precision != Precision::kFp32) {
    absl::Status trial = reduced.Execute(sample, ExecutionContext::Warmup()).status();
    if (!trial.ok()) {
      return absl::Status(trial.code(), StrCat(
          "PRECISION ", precision, ": a trial run failed: ", trial.message(),
          options.precision == Precision::kFp16 ? " (LibTorch 1.13 lacks many fp16 CPU "
                                                  "kernels; try PRECISION bf16)" : ""));
    }
    ASSIGN_OR_RETURN(double speedup, MeasureSpeedup(sample, fp32, reduced));
    reported.emplace_back("infera.precision.speedup", Number(speedup));
    INFERA_LOG(INFO) << "pytorch: model '" << model << "': PRECISION " << precision
                     << " measured speed-up over fp32 at load: " << Number(speedup)
                     << "x (batch 1, 1 thread, median of <= 5 runs)";
    if (speedup < 0.9) {
      // E.g. bf16 on a CPU without AVX512-BF16/AMX: ATen's portable kernels are correct
      // but far slower than fp32.
      INFERA_LOG(WARNING) << "pytorch: model '" << model << "': PRECISION " << precision
                          << " ran slower than fp32 on this CPU at load (" << Number(speedup)
                          << "x); fp32 may serve it faster (docs/optimisation.md)";
    }
  }
  if (!options.validate_precision) return absl::OkStatus();
  ASSIGN_OR_RETURN(PrecisionFigures figures,
                   ComparePrecision(ValidationBatches(state->config, id_bound), fp32, reduced));
  reported.emplace_back("infera.precision.max_abs_error", Number(figures.max_abs_error));
  reported.emplace_back("infera.precision.cosine", Number(figures.cosine));
  if (figures.top1_agreement) {
    reported.emplace_back("infera.precision.top1_agreement", Number(*figures.top1_agreement));
  }
  INFERA_LOG(INFO) << "pytorch: model '" << model << "': PRECISION " << precision
                   << " validated against fp32: " << DescribeFigures(figures);
  return CheckPrecisionFloors(figures, options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoadedModel>> LoadTorchModel(const ModelLoadContext& context,
                                                            const TorchModelOptions& options) {
  LoadFacts facts;
  std::vector<ForwardArgument> arguments;
  ASSIGN_OR_RETURN(std::shared_ptr<ModelState> state,
                   BuildState(context, options, &facts, &arguments, context.timings));
  if (!options.ignored_keys.empty()) {
    INFERA_LOG(WARNING) << "pytorch: model '" << state->config.name()
                        << "': ignoring parameters not used by this backend: "
                        << StrJoin(options.ignored_keys, ", ");
  }
  if (options.precision != Precision::kFp32 || options.validate_precision) {
    const auto probe_start = std::chrono::steady_clock::now();
    absl::Status probed = ProbePrecision(context, facts, state);
    if (context.timings != nullptr) {
      context.timings->AddStage("precision probe", std::chrono::steady_clock::now() - probe_start);
    }
    RETURN_IF_ERROR(probed);
  }
  INFERA_LOG(INFO) << "pytorch: loaded " << state->path.string() << " (inputs bound by "
                   << (state->inputs.by_index ? "index" : "name") << " to forward"
                   << DescribeArguments(arguments) << ", optimize_for_inference "
                   << (facts.optimized ? "applied"
                       : options.optimize_for_inference ? "failed" : "off")
                   << ", " << (facts.simple_executor ? "simple" : "profiling")
                   << " graph executor, precision " << PrecisionName(options.precision) << ")";
  return std::make_unique<TorchLoadedModel>(std::move(state));
}

}  // namespace infera
