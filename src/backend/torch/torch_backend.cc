#include "backend/torch/torch_backend.h"

#include "backend/torch/torch_model.h"
#include "backend/torch/torch_options.h"
#include "common/status.h"

namespace infera {
namespace {

// Stateless: every model's state lives in its LoadedModel.
class TorchBackend final : public Backend {
 public:
  std::string_view name() const override { return kTorchBackendName; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    return ValidateTorchConfig(config);
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    if (context.config == nullptr) {
      return absl::InvalidArgumentError("pytorch backend: Load() without a config");
    }
    RETURN_IF_ERROR(ValidateTorchConfig(*context.config));
    ASSIGN_OR_RETURN(TorchModelOptions options, ParseTorchModelOptions(*context.config));
    return LoadTorchModel(context, options);
  }

  bool UsesIntraOpThreads() const override { return true; }
};

}  // namespace

std::unique_ptr<Backend> CreateTorchBackend() { return std::make_unique<TorchBackend>(); }

}  // namespace infera
