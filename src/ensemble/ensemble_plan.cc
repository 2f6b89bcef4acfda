#include "ensemble/ensemble_plan.h"

#include <deque>
#include <set>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

// What one side of a tensor declares: where it comes from, its datatype, full shape.
struct TensorSpec {
  std::string where;  // "ensemble input 'X'", "step 1 (model 'b') output 'Y'"
  inference::DataType dtype = inference::TYPE_INVALID;
  std::vector<int64_t> shape;  // -1: any
};

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += StrCat(i ? ", " : "", shape[i]);
  return out + "]";
}

// The shape the ensemble compares: without the batch dimension when the ensemble
// batches, else the full shape (a batching model's has a leading -1).
std::vector<int64_t> ComparedShape(const google::protobuf::RepeatedField<int64_t>& dims, bool model_batches,
                                   bool ensemble_batches) {
  std::vector<int64_t> shape;
  if (model_batches && !ensemble_batches) shape.push_back(-1);
  shape.insert(shape.end(), dims.begin(), dims.end());
  return shape;
}

absl::Status CheckAgree(const std::string& prefix, const std::string& tensor, const TensorSpec& producer,
                        const TensorSpec& consumer) {
  bool agree = producer.dtype == consumer.dtype && producer.shape.size() == consumer.shape.size();
  for (size_t d = 0; agree && d < producer.shape.size(); ++d) {
    agree = producer.shape[d] < 0 || consumer.shape[d] < 0 || producer.shape[d] == consumer.shape[d];
  }
  if (agree) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat(prefix, ": tensor '", tensor, "' is ", inference::DataType_Name(producer.dtype), " ",
             ShapeText(producer.shape), " from ", producer.where, " but ", consumer.where, " expects ",
             inference::DataType_Name(consumer.dtype), " ", ShapeText(consumer.shape)));
}

// The graph alone: producers, consumers, cycles.
absl::Status BuildGraph(const inference::ModelConfig& ensemble, EnsemblePlan& plan) {
  const std::string who = StrCat("ensemble '", ensemble.name(), "'");
  std::map<std::string, int> producer;  // tensor -> step, -1 for an ensemble input
  for (const auto& input : ensemble.input()) {
    if (input.optional()) {
      return absl::InvalidArgumentError(
          StrCat(who, ": input '", input.name(), "' is optional; ensemble inputs must be required"));
    }
    producer[input.name()] = -1;
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (const auto& [step_output, tensor] : plan.steps[s].outputs) {
      auto [it, inserted] = producer.emplace(tensor, static_cast<int>(s));
      if (!inserted) {
        return absl::InvalidArgumentError(StrCat(
            StepLabel(plan, static_cast<int>(s)), ": output '", step_output, "' writes tensor '", tensor,
            "', which ",
            it->second < 0 ? std::string("is an ensemble input") : StrCat("step ", it->second, " already produces"),
            " (each tensor is produced once)"));
      }
    }
  }
  std::set<std::string> used;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    std::set<std::string> distinct;
    for (const auto& [step_input, tensor] : plan.steps[s].inputs) {
      if (!producer.count(tensor)) {
        return absl::InvalidArgumentError(StrCat(StepLabel(plan, static_cast<int>(s)), ": input '", step_input,
                                                 "' reads tensor '", tensor,
                                                 "', which no step and no ensemble input produces"));
      }
      if (distinct.insert(tensor).second) plan.consumers[tensor].push_back(static_cast<int>(s));
      used.insert(tensor);
    }
    plan.steps[s].num_distinct_inputs = static_cast<int>(distinct.size());
    if (distinct.empty()) plan.initial_steps.push_back(static_cast<int>(s));
  }
  for (const auto& output : ensemble.output()) {
    if (!producer.count(output.name()) || producer[output.name()] < 0) {
      return absl::InvalidArgumentError(
          StrCat(who, ": output '", output.name(), "' is not produced by any step"));
    }
    plan.outputs.push_back(output.name());
  }
  for (const auto& input : ensemble.input()) {
    if (!used.count(input.name())) {
      return absl::InvalidArgumentError(StrCat(who, ": input '", input.name(), "' is not used by any step"));
    }
  }
  // Kahn's algorithm from the ensemble inputs: steps never reached are on a cycle.
  std::vector<int> waiting(plan.steps.size());
  std::deque<int> ready;
  for (size_t s = 0; s < plan.steps.size(); ++s) waiting[s] = plan.steps[s].num_distinct_inputs;
  auto produce = [&](const std::string& tensor) {
    auto it = plan.consumers.find(tensor);
    if (it == plan.consumers.end()) return;
    for (int s : it->second) {
      if (--waiting[s] == 0) ready.push_back(s);
    }
  };
  for (const auto& input : ensemble.input()) produce(input.name());
  for (int s : plan.initial_steps) ready.push_back(s);
  size_t done = 0;
  while (!ready.empty()) {
    const int s = ready.front();
    ready.pop_front();
    ++done;
    for (const auto& [step_output, tensor] : plan.steps[s].outputs) produce(tensor);
  }
  if (done != plan.steps.size()) {
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      if (waiting[s] > 0) {
        return absl::InvalidArgumentError(StrCat(StepLabel(plan, static_cast<int>(s)),
                                                 ": is on a cycle (its inputs depend on its own outputs)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string StepLabel(const EnsemblePlan& plan, int step) {
  return StrCat("ensemble '", plan.name, "' step ", step, " (model '", plan.steps[step].model_name, "')");
}

absl::StatusOr<EnsemblePlan> BuildEnsemblePlan(const inference::ModelConfig& ensemble,
                                               const StepConfigLookup& step_config) {
  EnsemblePlan plan;
  plan.name = ensemble.name();
  for (const auto& step : ensemble.ensemble_scheduling().step()) {
    EnsembleStep s;
    s.model_name = step.model_name();
    // -1, and 0 (proto3 unset; Triton never serves a version 0): newest ready version.
    if (step.model_version() > 0) s.model_version = step.model_version();
    s.inputs.assign(step.input_map().begin(), step.input_map().end());
    s.outputs.assign(step.output_map().begin(), step.output_map().end());
    std::sort(s.inputs.begin(), s.inputs.end());
    std::sort(s.outputs.begin(), s.outputs.end());
    plan.steps.push_back(std::move(s));
  }
  RETURN_IF_ERROR(BuildGraph(ensemble, plan));

  // Against the step models' configs.
  const bool ensemble_batches = ensemble.max_batch_size() > 0;
  std::map<std::string, TensorSpec> produced;
  std::vector<std::pair<std::string, TensorSpec>> consumed;
  for (const auto& input : ensemble.input()) {
    produced[input.name()] = {StrCat("ensemble input '", input.name(), "'"), input.data_type(),
                              ComparedShape(input.dims(), ensemble_batches, ensemble_batches)};
  }
  for (const auto& output : ensemble.output()) {
    consumed.push_back({output.name(), {StrCat("ensemble output '", output.name(), "'"), output.data_type(),
                                        ComparedShape(output.dims(), ensemble_batches, ensemble_batches)}});
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const int s = static_cast<int>(i);
    const EnsembleStep& step = plan.steps[s];
    const std::string label = StepLabel(plan, s);
    absl::StatusOr<const inference::ModelConfig*> found = step_config(step.model_name, step.model_version);
    // A step that does not serve makes the config unusable now: the load is refused
    // (InvalidArgument, 400), whatever the lookup's own code.
    if (!found.ok()) return absl::InvalidArgumentError(StrCat(label, ": ", found.status().message()));
    const inference::ModelConfig& config = **found;
    const bool step_batches = config.max_batch_size() > 0;
    if (ensemble_batches && (!step_batches || config.max_batch_size() < ensemble.max_batch_size())) {
      return absl::InvalidArgumentError(StrCat(label, ": max_batch_size ", config.max_batch_size(),
                                               " is less than the ensemble's ", ensemble.max_batch_size(),
                                               " (a batching ensemble needs batching steps)"));
    }
    std::set<std::string> mapped;
    for (const auto& [step_input, tensor] : step.inputs) {
      const inference::ModelInput* spec = nullptr;
      for (const auto& in : config.input()) {
        if (in.name() == step_input) spec = &in;
      }
      if (spec == nullptr) {
        return absl::InvalidArgumentError(StrCat(label, ": input_map key '", step_input, "' is not an input of model '",
                                                 step.model_name, "'"));
      }
      mapped.insert(step_input);
      consumed.push_back({tensor, {StrCat(label, " input '", step_input, "'"), spec->data_type(),
                                   ComparedShape(spec->dims(), step_batches, ensemble_batches)}});
    }
    for (const auto& in : config.input()) {
      if (!in.optional() && !mapped.count(in.name())) {
        return absl::InvalidArgumentError(StrCat(label, ": input '", in.name(), "' is not mapped (input_map)"));
      }
    }
    for (const auto& [step_output, tensor] : step.outputs) {
      const inference::ModelOutput* spec = nullptr;
      for (const auto& out : config.output()) {
        if (out.name() == step_output) spec = &out;
      }
      if (spec == nullptr) {
        return absl::InvalidArgumentError(StrCat(label, ": output_map key '", step_output,
                                                 "' is not an output of model '", step.model_name, "'"));
      }
      produced[tensor] = {StrCat(label, " output '", step_output, "'"), spec->data_type(),
                          ComparedShape(spec->dims(), step_batches, ensemble_batches)};
    }
  }
  for (const auto& [tensor, consumer] : consumed) {
    RETURN_IF_ERROR(CheckAgree(StrCat("ensemble '", plan.name, "'"), tensor, produced.at(tensor), consumer));
  }
  return plan;
}

}  // namespace infera
