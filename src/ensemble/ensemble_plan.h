// EnsemblePlan: an ensemble config (Triton's `platform: "ensemble"`) checked and turned
// into the DAG the EnsembleScheduler runs.
//
// BuildEnsemblePlan checks, with errors naming the step ("ensemble 'e' step 1 (model
// 'b'): ..."):
//   - the graph alone: every tensor is produced exactly once (an ensemble input or one
//     step output), every step input and ensemble output is produced, every ensemble
//     input is used, no cycle;
//   - against each step model's config (looked up through `step_config`): every
//     input_map key is an input of the step and every non-optional step input is mapped,
//     every output_map key is an output of the step, datatypes and dims agree between the
//     producer of a tensor and each consumer, and the batching rule: an ensemble with
//     max_batch_size > 0 needs steps with max_batch_size >= its own (dims are then
//     compared without the batch dimension); an ensemble with max_batch_size 0 compares
//     full shapes, a batching step's shape being [-1] + dims.
//
// Every error is InvalidArgument (the config is refused: 400 to a load request), a step
// model that does not serve included.
//
// Thread-safe (a value type, immutable once built).
#ifndef INFERA_ENSEMBLE_ENSEMBLE_PLAN_H_
#define INFERA_ENSEMBLE_ENSEMBLE_PLAN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model_config.pb.h"

namespace infera {

struct EnsembleStep {
  std::string model_name;
  std::optional<int64_t> model_version;  // unset: newest ready version
  // (step tensor name, ensemble tensor name), sorted by step tensor name.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::pair<std::string, std::string>> outputs;
  // Distinct ensemble tensors the step waits for.
  int num_distinct_inputs = 0;
};

struct EnsemblePlan {
  std::string name;
  std::vector<EnsembleStep> steps;
  // Ensemble tensor -> steps that consume it (each step once).
  std::map<std::string, std::vector<int>> consumers;
  // Steps with no input (they start at once).
  std::vector<int> initial_steps;
  // The ensemble's outputs, in config order.
  std::vector<std::string> outputs;
};

// The config of the step model `name`, version `version` (unset: newest ready), or the
// reason it is not available (NotFound, Unavailable).
using StepConfigLookup = std::function<absl::StatusOr<const inference::ModelConfig*>(
    const std::string& name, std::optional<int64_t> version)>;

// `ensemble` has passed ValidateModelConfig (step count and names bounded).
absl::StatusOr<EnsemblePlan> BuildEnsemblePlan(const inference::ModelConfig& ensemble,
                                               const StepConfigLookup& step_config);

// "ensemble 'e' step 2 (model 'b')": how errors name a step.
std::string StepLabel(const EnsemblePlan& plan, int step);

}  // namespace infera

#endif  // INFERA_ENSEMBLE_ENSEMBLE_PLAN_H_
