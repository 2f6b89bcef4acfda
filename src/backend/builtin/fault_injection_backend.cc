// fault_injection: the identity model with a configurable execution delay and failure
// rate, for overload, timeout, drain and canary tests.
//
//   parameters { key: "delay_ms"     value { string_value: "20" } }   per execution
//   parameters { key: "failure_rate" value { string_value: "0.5" } }  0..1, seeded
//   parameters { key: "delay_ms@2"   value { string_value: "50" } }   override for version 2
// (the @version overrides let one config make a canary version slow or failing).
#include <charconv>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "backend/builtin/builtin_backends.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

absl::StatusOr<double> NumberParameter(const inference::ModelConfig& config, std::string_view key,
                                       double min, double max, int64_t version = 0) {
  std::optional<std::string> text;
  if (version > 0) text = ConfigParameter(config, StrCat(key, "@", version));
  if (!text) text = ConfigParameter(config, key);
  if (!text) return 0.0;
  double value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  // "nan" parses and passes both bounds; delay_ms * 1000 would then be cast to an integer.
  if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(value) || value < min ||
      value > max) {
    return absl::InvalidArgumentError(StrCat("fault_injection: parameters[", key, "] '", *text,
                                             "' is not a number in [", min, ", ", max, "]"));
  }
  return value;
}

class FaultInjectionInstance : public ModelInstance {
 public:
  FaultInjectionInstance(const inference::ModelConfig& config, double delay_ms, double failure_rate,
                         int seed)
      : delay_(std::chrono::microseconds(static_cast<int64_t>(delay_ms * 1000))),
        failure_rate_(failure_rate),
        rng_(seed) {
    for (const auto& output : config.output()) output_names_.push_back(output.name());
  }

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    if (failure_rate_ > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < failure_rate_) {
      return absl::InternalError("fault_injection: injected failure");
    }
    for (size_t i = 0; i < inputs.size() && i < output_names_.size(); ++i) {
      inputs[i].name = output_names_[i];
    }
    return inputs;
  }

 private:
  std::chrono::microseconds delay_;
  double failure_rate_;
  std::mt19937 rng_;
  std::vector<std::string> output_names_;
};

class FaultInjectionModel : public LoadedModel {
 public:
  FaultInjectionModel(const inference::ModelConfig& config, double delay_ms, double failure_rate)
      : config_(config), delay_ms_(delay_ms), failure_rate_(failure_rate) {}
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions& options) override {
    return std::make_unique<FaultInjectionInstance>(config_, delay_ms_, failure_rate_, options.index + 1);
  }

 private:
  const inference::ModelConfig& config_;
  double delay_ms_;
  double failure_rate_;
};

class FaultInjectionBackend : public Backend {
 public:
  std::string_view name() const override { return "fault_injection"; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    RETURN_IF_ERROR(identity_->ValidateConfig(config));
    RETURN_IF_ERROR(NumberParameter(config, "delay_ms", 0, 60000).status());
    return NumberParameter(config, "failure_rate", 0, 1).status();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    ASSIGN_OR_RETURN(double delay_ms, NumberParameter(*context.config, "delay_ms", 0, 60000, context.version));
    ASSIGN_OR_RETURN(double failure_rate,
                     NumberParameter(*context.config, "failure_rate", 0, 1, context.version));
    return std::make_unique<FaultInjectionModel>(*context.config, delay_ms, failure_rate);
  }

 private:
  std::unique_ptr<Backend> identity_ = CreateIdentityBackend();
};

}  // namespace

std::unique_ptr<Backend> CreateFaultInjectionBackend() {
  return std::make_unique<FaultInjectionBackend>();
}

}  // namespace infera
