// Fuzz target: ensemble configs (ensemble/ensemble_plan.h): a config.pbtxt text is
// parsed and validated (repository/model_config_loader.h), then its plan is built
// against three fixed step models: a unary FP32 [4] model "u" (IN -> OUT, batching 8),
// a binary one "b" (A, B -> OUT), and a non-batching "n" (IN [-1] -> OUT [-1]).
// Any outcome but a crash, a hang or a sanitizer report is fine; a plan that builds
// must be a DAG whose every step has its inputs counted.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "ensemble/ensemble_plan.h"
#include "repository/model_config_loader.h"

namespace {

const std::map<std::string, inference::ModelConfig>& Steps() {
  static const auto* steps = [] {
    auto* m = new std::map<std::string, inference::ModelConfig>;
    auto make = [&](const std::string& name, int mbs, std::vector<std::string> inputs, int64_t dim) {
      inference::ModelConfig c;
      c.set_name(name);
      c.set_max_batch_size(mbs);
      for (const auto& in : inputs) {
        auto* t = c.add_input();
        t->set_name(in);
        t->set_data_type(inference::TYPE_FP32);
        t->add_dims(dim);
      }
      auto* out = c.add_output();
      out->set_name("OUT");
      out->set_data_type(inference::TYPE_FP32);
      out->add_dims(dim);
      (*m)[name] = c;
    };
    make("u", 8, {"IN"}, 4);
    make("b", 8, {"A", "B"}, 4);
    make("n", 0, {"IN"}, -1);
    return m;
  }();
  return *steps;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = infera::ParseModelConfig(text, "fuzz/config.pbtxt");
  if (!config.ok()) return 0;
  if (!infera::ValidateModelConfig("fuzz/config.pbtxt", "model", *config).ok()) return 0;
  if (config->platform() != "ensemble") return 0;
  auto plan = infera::BuildEnsemblePlan(
      *config, [](const std::string& name, std::optional<int64_t>) -> absl::StatusOr<const inference::ModelConfig*> {
        auto it = Steps().find(name);
        if (it == Steps().end()) return absl::NotFoundError("unknown");
        return &it->second;
      });
  if (!plan.ok()) return 0;
  for (const auto& step : plan->steps) {
    if (step.num_distinct_inputs < 0 || step.num_distinct_inputs > static_cast<int>(step.inputs.size())) std::abort();
  }
  return 0;
}
