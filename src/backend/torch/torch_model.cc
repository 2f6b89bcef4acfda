// LibTorch first: torch_tensor.h only forward-declares at::Tensor.
#include <ATen/Parallel.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
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

// What LoadModule did, for the load log and the config answer.
struct LoadFacts {
  bool optimized = false;     // optimize_for_inference applied
  int quantized_layers = -1;  // int8_dynamic: Linear layers rewritten; else -1
  bool simple_executor = false;  // the methods run on LibTorch's simple graph executor
};

// GRAPH_EXECUTOR (torch_options.h): whether `module`'s methods get the simple executor.
// `auto` picks it for a frozen module: freezing and optimize_for_inference already ran
// the graph passes, and what the profiling executor adds — a profiled first run, then a
// second compilation — yields the same graph on CPU (measured for every demo model:
// docs/cold_start.md, "Second step"), only a slower first run and a second one that
// compiles.
bool UseSimpleExecutor(const TorchModelOptions& options, bool frozen) {
  switch (options.graph_executor) {
    case GraphExecutor::kSimple: return true;
    case GraphExecutor::kProfiling: return false;
    case GraphExecutor::kAuto: return frozen;
  }
  return false;
}

// Chooses the executor of each method of `module` (not of its submodules: a frozen
// forward() has them inlined, and an unfrozen one inlines their code into its own
// graph). LibTorch creates a method's executor at its first call, so this must run
// before any; a module that shares its methods with another (a copy of the handle)
// shares the choice.
absl::Status SetSimpleExecutor(torch::jit::Module& module) {
  return CatchTorchErrors(absl::StatusCode::kInternal, "choosing the graph executor failed", [&] {
    for (const torch::jit::Method& method : module.get_methods()) {
      torch::jit::toGraphFunction(method.function())
          ._set_initial_executor_execution_mode(torch::jit::ExecutorExecutionMode::SIMPLE);
    }
    return absl::OkStatus();
  });
}

// Converts a loaded module to `options.precision` (docs/optimisation.md): bf16/fp16
// weights before freezing (freeze turns parameters into graph constants, which .to()
// would miss); int8_dynamic freezes and rewrites Linear layers. A failure is an error:
// a module that cannot run at the asked precision must not serve as fp32.
absl::Status ApplyPrecision(const TorchModelOptions& options, torch::jit::Module& module,
                            LoadFacts* facts) {
  const std::string what = StrCat("PRECISION ", PrecisionName(options.precision));
  switch (options.precision) {
    case Precision::kFp32:
      return absl::OkStatus();
    case Precision::kBf16:
    case Precision::kFp16:
      return CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                      StrCat(what, ": converting the weights failed"), [&] {
                        module.to(options.precision == Precision::kBf16 ? at::kBFloat16
                                                                        : at::kHalf);
                        // oneDNN's reduced-precision convolutions want NHWC: 4-D
                        // weights (and inputs, at the boundary) go channels-last
                        // (docs/optimisation.md has the measurement).
                        torch::NoGradGuard no_grad;
                        for (at::Tensor parameter : module.parameters()) {
                          if (parameter.dim() == 4) {
                            parameter.set_data(
                                parameter.contiguous(at::MemoryFormat::ChannelsLast));
                          }
                        }
                        return absl::OkStatus();
                      });
    case Precision::kInt8Dynamic: {
      RETURN_IF_ERROR(SelectQuantizedEngine().status());
      RETURN_IF_ERROR(CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                               StrCat(what, ": torch::jit::freeze failed"), [&] {
                                 module = torch::jit::freeze(module);
                                 return absl::OkStatus();
                               }));
      ASSIGN_OR_RETURN(facts->quantized_layers, QuantizeLinearDynamic(module));
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

// A TorchScript file mapped into memory (read-only, pages populated up front), for
// torch::jit::load: reading the file and deserialising it are timed apart, and the
// bytes are not copied on the way (only into the tensors, as a file read would).
class MappedFile final : public caffe2::serialize::ReadAdapterInterface {
 public:
  // Null when the file cannot be opened or mapped (torch::jit::load(path) then says why).
  static std::shared_ptr<MappedFile> Open(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;
    struct stat st {};
    void* data = MAP_FAILED;
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      data = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    }
    ::close(fd);
    if (data == MAP_FAILED) return nullptr;
    return std::shared_ptr<MappedFile>(new MappedFile(static_cast<const char*>(data), static_cast<size_t>(st.st_size)));
  }
  ~MappedFile() override { ::munmap(const_cast<char*>(data_), size_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  size_t size() const override { return size_; }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (pos >= size_) return 0;
    n = std::min<size_t>(n, size_ - pos);
    std::memcpy(buf, data_ + pos, n);
    return n;
  }
  // TorchScript's format is a zip archive; anything else is loaded by name.
  bool IsZip() const { return size_ >= 4 && std::memcmp(data_, "PK\x03\x04", 4) == 0; }

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  const char* const data_;
  const size_t size_;
};

// LoadModule's "optimise" stage: the precision, then freeze + optimize_for_inference when
// asked (a failure there keeps the plain module, with a warning).
absl::StatusOr<torch::jit::Module> OptimiseModule(const std::filesystem::path& path,
                                                  const TorchModelOptions& options,
                                                  torch::jit::Module module, LoadFacts* facts) {
  RETURN_IF_ERROR(ApplyPrecision(options, module, facts));
  if (!options.optimize_for_inference) return module;
  const bool frozen_already = options.precision == Precision::kInt8Dynamic;
  // freeze() clones, so a failure part-way leaves `module` usable.
  absl::StatusOr<torch::jit::Module> frozen =
      CatchTorchErrors(absl::StatusCode::kInternal, "freeze + optimize_for_inference failed",
               [&]() -> absl::StatusOr<torch::jit::Module> {
                 torch::jit::Module out = frozen_already ? module : torch::jit::freeze(module);
                 return torch::jit::optimize_for_inference(out);
               });
  if (!frozen.ok()) {
    INFERA_LOG(WARNING) << "pytorch: " << path.string() << ": " << frozen.status().message()
                        << "; serving the plain module (OPTIMIZE_FOR_INFERENCE: false "
                           "silences this)";
    return module;
  }
  facts->optimized = true;
  return *std::move(frozen);
}

// Loads `path` onto the CPU, in eval mode, at the configured precision, optimised when
// asked; `facts` (may be null) reports what was done, `timings` (may be null) the
// stages: "read" (the file mapped into memory), "deserialise" (torch::jit::load from it),
// "optimise" (precision, freeze, optimize_for_inference).
absl::StatusOr<torch::jit::Module> LoadModule(const std::filesystem::path& path,
                                              const TorchModelOptions& options,
                                              LoadFacts* facts, LoadTimings* timings = nullptr) {
  LoadFacts ignored;
  if (facts == nullptr) facts = &ignored;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(StrCat("model file '", path.string(), "' does not exist"));
  }
  auto stage_start = std::chrono::steady_clock::now();
  auto end_stage = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    if (timings != nullptr) timings->AddStage(name, now - stage_start);
    stage_start = now;
  };
  std::shared_ptr<MappedFile> mapped = MappedFile::Open(path);
  // Only a zip archive (TorchScript's format) is deserialised from memory; anything
  // else goes to torch::jit::load(path) as before, which knows the other formats.
  const bool zip = mapped != nullptr && mapped->IsZip();
  end_stage("read");
  torch::jit::Module module;
  absl::Status loaded = CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                                 StrCat("cannot load TorchScript model file '", path.string(), "'"),
                                 [&] {
                                   if (zip) {
                                     module = torch::jit::load(mapped, torch::kCPU);
                                   } else {
                                     module = torch::jit::load(path.string(), torch::kCPU);
                                   }
                                   module.eval();
                                   return absl::OkStatus();
                                 });
  if (!loaded.ok() && zip) {
    // The error message of a bad archive is the one loading the file by name gives.
    loaded = CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                              StrCat("cannot load TorchScript model file '", path.string(), "'"), [&] {
                                module = torch::jit::load(path.string(), torch::kCPU);
                                module.eval();
                                return absl::OkStatus();
                              });
  }
  mapped.reset();
  end_stage("deserialise");
  if (!loaded.ok() && loaded.message().find("constants.pkl") != std::string_view::npos) {
    // The usual mistake: a zip written by torch.save(), not torch.jit.save().
    return absl::InvalidArgumentError(StrCat(
        loaded.message(), " (written by torch.save()? The pytorch backend needs "
        "torch.jit.save() of a traced or scripted module)"));
  }
  RETURN_IF_ERROR(loaded);
  absl::StatusOr<torch::jit::Module> optimised = OptimiseModule(path, options, std::move(module), facts);
  if (optimised.ok() &&
      UseSimpleExecutor(options, facts->optimized || options.precision == Precision::kInt8Dynamic)) {
    RETURN_IF_ERROR(SetSimpleExecutor(*optimised));
    facts->simple_executor = true;
  }
  end_stage("optimise");
  return optimised;
}

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
