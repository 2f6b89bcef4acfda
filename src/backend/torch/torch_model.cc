// LibTorch first: torch_tensor.h only forward-declares at::Tensor.
#include <ATen/Parallel.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include "backend/torch/torch_model.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/torch/io_binding.h"
#include "backend/torch/torch_tensor.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

// The line of a LibTorch message worth showing a client: the last "...Error: ..." line
// of a TorchScript traceback, else the first line.
std::string Summarize(std::string_view message) {
  std::string_view first, error_line;
  size_t start = 0;
  while (start < message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string_view::npos) end = message.size();
    const std::string_view line = message.substr(start, end - start);
    if (!line.empty() && first.empty()) first = line;
    const size_t colon = line.find(": ");
    if (colon != std::string_view::npos && colon >= 5 &&
        line.substr(colon - 5, 5) == "Error" && line.find(' ') > colon) {
      error_line = line;
    }
    start = end + 1;
  }
  return std::string(error_line.empty() ? first : error_line);
}

// Runs `fn` (returning Status or StatusOr), turning any exception into `code` with
// `what` prefixed. The full message goes to the verbose log.
template <typename Fn>
auto CatchAll(absl::StatusCode code, std::string_view what, Fn&& fn) -> decltype(fn()) {
  std::string message;
  try {
    return fn();
  } catch (const c10::Error& e) {
    message = e.what_without_backtrace();
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown exception";
  }
  INFERA_LOG(VERBOSE) << what << ": " << message;
  return absl::Status(code, StrCat(what, ": ", Summarize(message)));
}

// Loads `path` onto the CPU, in eval mode, optimised when asked. `optimized` (may be
// null) reports whether optimize_for_inference was applied.
absl::StatusOr<torch::jit::Module> LoadModule(const std::filesystem::path& path,
                                              const TorchModelOptions& options,
                                              bool* optimized) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(StrCat("model file '", path.string(), "' does not exist"));
  }
  torch::jit::Module module;
  absl::Status loaded = CatchAll(absl::StatusCode::kInvalidArgument,
                                 StrCat("cannot load TorchScript model file '", path.string(), "'"),
                                 [&] {
                                   module = torch::jit::load(path.string(), torch::kCPU);
                                   module.eval();
                                   return absl::OkStatus();
                                 });
  if (!loaded.ok() && loaded.message().find("constants.pkl") != std::string_view::npos) {
    // The usual mistake: a zip written by torch.save(), not torch.jit.save().
    return absl::InvalidArgumentError(StrCat(
        loaded.message(), " (written by torch.save()? The pytorch backend needs "
        "torch.jit.save() of a traced or scripted module)"));
  }
  RETURN_IF_ERROR(loaded);
  if (optimized) *optimized = false;
  if (!options.optimize_for_inference) return module;
  // freeze() clones, so a failure part-way leaves `module` usable.
  absl::StatusOr<torch::jit::Module> frozen =
      CatchAll(absl::StatusCode::kInternal, "freeze + optimize_for_inference failed",
               [&]() -> absl::StatusOr<torch::jit::Module> {
                 torch::jit::Module out = torch::jit::freeze(module);
                 return torch::jit::optimize_for_inference(out);
               });
  if (!frozen.ok()) {
    INFERA_LOG(WARNING) << "pytorch: " << path.string() << ": " << frozen.status().message()
                        << "; serving the plain module (OPTIMIZE_FOR_INFERENCE: false "
                           "silences this)";
    return module;
  }
  if (optimized) *optimized = true;
  return *std::move(frozen);
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
};

class TorchInstance final : public ModelInstance {
 public:
  TorchInstance(std::shared_ptr<const ModelState> state, torch::jit::Module module, int threads)
      : state_(std::move(state)), module_(std::move(module)), threads_(threads) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs) override {
    return CatchAll(absl::StatusCode::kInternal, "model execution failed",
                    [&] { return ExecuteUnguarded(inputs); });
  }

 private:
  absl::StatusOr<std::vector<Tensor>> ExecuteUnguarded(const std::vector<Tensor>& inputs);
  absl::StatusOr<std::vector<c10::IValue>> BuildArguments(const std::vector<Tensor>& inputs);
  absl::StatusOr<std::vector<Tensor>> CollectOutputs(const c10::IValue& result);

  const std::shared_ptr<const ModelState> state_;
  torch::jit::Module module_;
  const int threads_;
};

absl::StatusOr<std::vector<Tensor>> TorchInstance::ExecuteUnguarded(
    const std::vector<Tensor>& inputs) {
  // The intra-op budget is per calling thread (OpenMP ICV). get_num_threads() runs
  // ATen's lazy per-thread initialisation first; setting before it would be undone by
  // it (it re-applies the process-wide last value set by any thread).
  if (at::get_num_threads() != threads_) at::set_num_threads(threads_);
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
    ASSIGN_OR_RETURN(Tensor tensor,
                     FromTorchTensor(config.name(), state.output_types[i],
                                     inference::DataType_Name(config.data_type()),
                                     value.toTensor()));
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
    return std::make_unique<TorchInstance>(state_, std::move(module), threads);
  }

 private:
  const std::shared_ptr<const ModelState> state_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LoadedModel>> LoadTorchModel(const ModelLoadContext& context,
                                                            const TorchModelOptions& options) {
  auto state = std::make_shared<ModelState>();
  state->config = *context.config;
  state->options = options;
  state->path = context.version_dir / options.model_filename;
  bool optimized = false;
  ASSIGN_OR_RETURN(state->module, LoadModule(state->path, options, &optimized));

  std::vector<ForwardArgument> arguments;
  RETURN_IF_ERROR(CatchAll(absl::StatusCode::kInvalidArgument,
                           StrCat("cannot read forward() of '", state->path.string(), "'"),
                           [&] { return InspectForward(state->module, &arguments,
                                                       &state->fallback); }));
  ASSIGN_OR_RETURN(state->inputs, BindInputs(state->config, arguments));
  ASSIGN_OR_RETURN(state->outputs, BindOutputs(state->config));
  for (int i = 0; i < state->config.input_size(); ++i) {
    state->input_index[state->config.input(i).name()] = i;
  }
  for (const inference::ModelOutput& output : state->config.output()) {
    state->output_types.push_back(FromConfigDataType(output.data_type()));
  }
  if (!options.ignored_keys.empty()) {
    INFERA_LOG(WARNING) << "pytorch: model '" << state->config.name()
                        << "': ignoring parameters not used by this backend: "
                        << StrJoin(options.ignored_keys, ", ");
  }
  INFERA_LOG(INFO) << "pytorch: loaded " << state->path.string() << " (inputs bound by "
                   << (state->inputs.by_index ? "index" : "name") << " to forward"
                   << DescribeArguments(arguments) << ", optimize_for_inference "
                   << (optimized ? "applied" : options.optimize_for_inference ? "failed" : "off")
                   << ")";
  return std::make_unique<TorchLoadedModel>(std::move(state));
}

}  // namespace infera
