#include "backend/builtin/builtin_backends.h"
#include "common/str_cat.h"

namespace infera {
namespace {

class IdentityInstance : public ModelInstance {
 public:
  explicit IdentityInstance(const inference::ModelConfig& config) {
    for (const auto& output : config.output()) output_names_.push_back(output.name());
  }

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    if (inputs.size() != output_names_.size()) {
      return absl::InvalidArgumentError(StrCat("identity needs all ", output_names_.size(),
                                               " inputs, got ", inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i].name = output_names_[i];
    return inputs;  // same bytes, renamed: no copy
  }

 private:
  std::vector<std::string> output_names_;
};

class IdentityModel : public LoadedModel {
 public:
  explicit IdentityModel(const inference::ModelConfig& config) : config_(config) {}
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<IdentityInstance>(config_);
  }

 private:
  const inference::ModelConfig& config_;
};

class IdentityBackend : public Backend {
 public:
  std::string_view name() const override { return "identity"; }
  bool RunsInline() const override { return true; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    if (config.input_size() == 0 || config.input_size() != config.output_size()) {
      return absl::InvalidArgumentError(
          StrCat("identity: needs as many outputs as inputs (at least one); config has ",
                 config.input_size(), " inputs and ", config.output_size(), " outputs"));
    }
    for (int i = 0; i < config.input_size(); ++i) {
      const auto& in = config.input(i);
      const auto& out = config.output(i);
      if (in.data_type() != out.data_type()) {
        return absl::InvalidArgumentError(
            StrCat("identity: output[", i, "] '", out.name(), "' must have the data_type of input[",
                   i, "] '", in.name(), "'"));
      }
      if (in.optional()) {
        return absl::InvalidArgumentError(
            StrCat("identity: input[", i, "] '", in.name(), "' cannot be optional"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    return std::make_unique<IdentityModel>(*context.config);
  }
};

}  // namespace

std::unique_ptr<Backend> CreateIdentityBackend() { return std::make_unique<IdentityBackend>(); }

}  // namespace infera
