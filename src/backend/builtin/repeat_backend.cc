// repeat: a decoupled test model, Triton's repeat_int32 (qa/L0_decoupled) — one request,
// many responses. Config (the `repeat_int32` model of the test repositories):
//
//   backend: "repeat"  max_batch_size: 0
//   model_transaction_policy { decoupled: true }                          required
//   input  IN    TYPE_INT32  [ -1 ]   the values, one response each
//   input  DELAY TYPE_UINT32 [ -1 ]   optional: ms before each response; one value for
//                                     every response, or one per element of IN
//   input  WAIT  TYPE_UINT32 [ 1 ]    optional: ms after the last response, before the
//                                     final flag
//   output OUT   TYPE_INT32  [ 1 ]    IN[i]
//   output IDX   TYPE_UINT32 [ 1 ]    i
//
// A request gets one response (OUT, IDX) per element of IN, in order, then the final flag
// without a response (Triton's empty final response). The responses are sent from the
// loaded model's RepeatResponder thread (repeat_responder.h), never from the scheduler's
// worker: ExecuteDecoupled only hands the request over. Every step first asks the sender
// IsStopped() (client gone, deadline, unload), so a cancelled request sends nothing more.
// CancelOutstandingWork() and the model's destruction end what is left and join the thread.
#include <cstring>

#include "backend/builtin/builtin_backends.h"
#include "backend/builtin/repeat_responder.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

template <typename T>
std::vector<T> Elements(const Tensor& tensor) {
  std::vector<T> values(tensor.data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), tensor.data.data(), values.size() * sizeof(T));
  return values;
}

class RepeatInstance : public ModelInstance {
 public:
  RepeatInstance(const inference::ModelConfig& config, RepeatResponder* responder)
      : config_(config), responder_(responder) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor>, const ExecutionContext&) override {
    return absl::InternalError("repeat is decoupled: its requests go to ExecuteDecoupled");
  }

  void ExecuteDecoupled(std::vector<DecoupledRequest> requests) override {
    for (DecoupledRequest& request : requests) {
      RepeatJob job{std::move(request.sender), request.context, {}, {}, 0};
      // Inputs arrive by config name, already checked against the config (datatypes,
      // shapes); absent optional inputs are omitted.
      for (const Tensor& input : request.inputs) {
        if (input.name == "IN") job.values = Elements<int32_t>(input);
        if (input.name == "DELAY") job.delays_ms = Elements<uint32_t>(input);
        if (input.name == "WAIT") {
          std::vector<uint32_t> wait = Elements<uint32_t>(input);
          job.wait_ms = wait.empty() ? 0 : wait[0];
        }
      }
      if (job.delays_ms.size() > 1 && job.delays_ms.size() != job.values.size()) {
        job.sender.Finish(absl::InvalidArgumentError(
            StrCat("model '", config_.name(), "': DELAY holds ", job.delays_ms.size(),
                   " values; send one, or one per element of IN (", job.values.size(), ")")));
        continue;
      }
      responder_->Add(std::move(job));
    }
  }

 private:
  const inference::ModelConfig& config_;
  RepeatResponder* const responder_;
};

class RepeatModel : public LoadedModel {
 public:
  explicit RepeatModel(const inference::ModelConfig& config) : config_(config), responder_(config.name()) {}

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<RepeatInstance>(config_, &responder_);
  }
  void CancelOutstandingWork() override { responder_.CancelAll(); }

 private:
  const inference::ModelConfig& config_;
  RepeatResponder responder_;  // its thread is joined before the config reference dies
};

absl::Status CheckTensor(std::string_view kind, const std::string& name, inference::DataType actual,
                         inference::DataType expected, const google::protobuf::RepeatedField<int64_t>& dims,
                         int64_t expected_dim) {
  if (actual != expected || dims.size() != 1 || dims[0] != expected_dim) {
    return absl::InvalidArgumentError(StrCat("repeat: ", kind, " '", name, "' must be ",
                                             inference::DataType_Name(expected), " [", expected_dim, "]"));
  }
  return absl::OkStatus();
}

class RepeatBackend : public Backend {
 public:
  std::string_view name() const override { return "repeat"; }
  bool SupportsDecoupled() const override { return true; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    if (!config.model_transaction_policy().decoupled()) {
      return absl::InvalidArgumentError("repeat: the model is decoupled; set model_transaction_policy { decoupled: true }");
    }
    if (config.max_batch_size() != 0) return absl::InvalidArgumentError("repeat: max_batch_size must be 0");
    bool has_in = false;
    for (const inference::ModelInput& input : config.input()) {
      if (input.name() == "IN") {
        has_in = true;
        if (input.optional()) return absl::InvalidArgumentError("repeat: input 'IN' cannot be optional");
        RETURN_IF_ERROR(CheckTensor("input", "IN", input.data_type(), inference::TYPE_INT32, input.dims(), -1));
      } else if (input.name() == "DELAY") {
        RETURN_IF_ERROR(CheckTensor("input", "DELAY", input.data_type(), inference::TYPE_UINT32, input.dims(), -1));
      } else if (input.name() == "WAIT") {
        RETURN_IF_ERROR(CheckTensor("input", "WAIT", input.data_type(), inference::TYPE_UINT32, input.dims(), 1));
      } else {
        return absl::InvalidArgumentError(
            StrCat("repeat: unknown input '", input.name(), "' (the inputs are IN, DELAY and WAIT)"));
      }
    }
    if (!has_in) return absl::InvalidArgumentError("repeat: needs input 'IN' (TYPE_INT32 [-1])");
    if (config.output_size() != 2) return absl::InvalidArgumentError("repeat: needs exactly the outputs OUT and IDX");
    for (const inference::ModelOutput& output : config.output()) {
      if (output.name() == "OUT") {
        RETURN_IF_ERROR(CheckTensor("output", "OUT", output.data_type(), inference::TYPE_INT32, output.dims(), 1));
      } else if (output.name() == "IDX") {
        RETURN_IF_ERROR(CheckTensor("output", "IDX", output.data_type(), inference::TYPE_UINT32, output.dims(), 1));
      } else {
        return absl::InvalidArgumentError(
            StrCat("repeat: unknown output '", output.name(), "' (the outputs are OUT and IDX)"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    return std::make_unique<RepeatModel>(*context.config);
  }
};

}  // namespace

std::unique_ptr<Backend> CreateRepeatBackend() { return std::make_unique<RepeatBackend>(); }

}  // namespace infera
