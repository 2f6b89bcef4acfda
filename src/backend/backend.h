// The backend interface: how infera runs a model without knowing the runtime.
//
// Three levels, each with its own lifetime and thread-safety:
//
//   Backend       one per runtime (pytorch_libtorch, add_sub, identity), process-wide.
//     └─ Load() → LoadedModel     one per loaded model version; owns weights/files.
//          └─ CreateInstance() → ModelInstance   one per execution context
//                                                 (instance_group count), owned by
//                                                 one scheduler worker thread.
//
// Each execution gets an ExecutionContext (execution_context.h): every request's
// parameters, cancellation token and deadline, and whether it is a warm-up. A model
// answers each request once (Execute: one batched call, one output set per request — the
// fast path) or, when its config says `model_transaction_policy { decoupled: true }` and
// its backend SupportsDecoupled(), any number of times through a ResponseSender per
// request (ExecuteDecoupled). A LoadedModel may offer capabilities besides tensors
// through typed queries (text_generator(), token_counter()); docs/request_path.md.
//
// Unloading a version is destroying its instances and then its LoadedModel. The
// scheduler and the frontends use only these three classes, so a new runtime (ONNX
// Runtime, TensorRT, OpenVINO) plugs in by implementing them and registering a
// Backend (see backend_registry.h) — nothing else changes.
//
// The model manager has already checked every request against the config before it
// reaches Execute(): input names, datatypes and shapes (with the batch dimension),
// and `reshape` has been applied. It also checks every output Execute() returns
// against the config, so a backend reports runtime failures, not protocol errors.
#ifndef INFERA_BACKEND_BACKEND_H_
#define INFERA_BACKEND_BACKEND_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "backend/execution_context.h"
#include "backend/load_timings.h"
#include "backend/response_sender.h"
#include "model_config.pb.h"

namespace infera {

class ServerMetrics;
class TextGenerator;
class TokenCounter;

// Everything a backend needs to load one version.
struct ModelLoadContext {
  // Validated configuration (generic checks done, defaults filled in). Outlives the
  // LoadedModel.
  const inference::ModelConfig* config = nullptr;
  int64_t version = 0;
  std::filesystem::path model_dir;    // <repository>/<model>
  std::filesystem::path version_dir;  // <repository>/<model>/<version>
  ServerMetrics* metrics = nullptr;   // Prometheus registry; null: no series. Outlives the LoadedModel.
  // Where Load() reports its own stages (LoadTimings::AddStage, e.g. "read",
  // "deserialise", "optimise"); null: nobody asked. Backends without stages ignore it.
  LoadTimings* timings = nullptr;
};

// Settings for one execution instance.
struct InstanceOptions {
  int index = 0;             // 0-based across all of the model's instances
  std::string name;          // "<model>_<index>", for logs
  int intra_op_threads = 1;  // threads one execution may use; >= 1
};

// One execution context of a loaded model.
//
// Not thread-safe: owned by one scheduler worker, which calls Execute() serially.
class ModelInstance {
 public:
  virtual ~ModelInstance() = default;

  // Runs the model once. `inputs` holds the request's inputs in config order (absent
  // optional inputs omitted), each with its config name; when max_batch_size > 0 every
  // input has a leading batch dimension (the rows of `context.requests()`, in order).
  // Returns every config output, in config order, named as in the config, with the
  // leading batch dimension when the model batches.
  // Errors: InvalidArgument only for what the request's inputs get wrong (the client's
  // fault: HTTP 400, counted as bad_request); a fault of the model itself (an exception,
  // or outputs whose count, type or dtype the config does not declare) is Internal
  // (500, counted as backend_error, which the canary judge rolls back on).
  // A decoupled model's instance is never called here (ExecuteDecoupled instead).
  virtual absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs,
                                                      const ExecutionContext& context) = 0;
  // One execution outside any request path (no request parameters, never cancelled,
  // not on the instance's worker thread: ExecutionContext::Warmup()): for load-time
  // probes, tests and benchmarks.
  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs) {
    return Execute(std::move(inputs), ExecutionContext::Warmup());
  }

  // One request of a decoupled model: its inputs (as for Execute, this request's rows
  // only), its context, and the sender its responses go to.
  struct DecoupledRequest {
    std::vector<Tensor> inputs;
    RequestContext context;
    ResponseSender sender;
  };
  // Decoupled models only (Backend::SupportsDecoupled): starts answering `requests` and
  // returns as soon as the work is handed off — it must not wait for the responses (no
  // worker thread is held per request in flight). Each sender may outlive the call.
  // Default: every request fails with Unimplemented.
  virtual void ExecuteDecoupled(std::vector<DecoupledRequest> requests) {
    for (DecoupledRequest& r : requests) {
      r.sender.Finish(absl::UnimplementedError("this model's instances do not answer decoupled requests"));
    }
  }
};

// One loaded version of a model.
//
// Thread-safe: CreateInstance() may be called from several threads.
class LoadedModel {
 public:
  virtual ~LoadedModel() = default;
  virtual absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(
      const InstanceOptions& options) = 0;
  // Ends work the model runs outside its instances (an LLM's OpenAI generations), so
  // that whoever waits on it lets go; called when a retiring version's drain time is
  // over. Default: there is none.
  virtual void CancelOutstandingWork() {}
  // Read-only facts the backend learned at load (e.g. a reduced precision's measured
  // speed-up and accuracy), as (key, value) pairs; the model config answer shows them
  // among its `parameters`. Default: none.
  virtual std::vector<std::pair<std::string, std::string>> ReportedParameters() const {
    return {};
  }
  // Typed capability queries (no dynamic_cast in the callers): the model's text generation
  // (an LLM: backend/text_generator.h) and its token counting (a tokenize model:
  // backend/token_counter.h); null when it has none. Valid as long as the model.
  virtual TextGenerator* text_generator() { return nullptr; }
  virtual const TokenCounter* token_counter() const { return nullptr; }
};

// One runtime.
//
// Thread-safe: models load in parallel.
class Backend {
 public:
  virtual ~Backend() = default;

  // The `backend:` name in config.pbtxt ("pytorch", "add_sub", "identity").
  virtual std::string_view name() const = 0;

  // Runtime-specific config checks beyond the generic ones (e.g. add_sub needs two
  // inputs and two outputs of one datatype). Errors name the field.
  virtual absl::Status ValidateConfig(const inference::ModelConfig& config) const = 0;

  // Loads one version. Errors name the file and what is wrong with it.
  virtual absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) = 0;

  // Whether the backend's instances implement ExecuteDecoupled (several responses per
  // request). A config with `model_transaction_policy { decoupled: true }` for a backend
  // that does not is refused at load.
  virtual bool SupportsDecoupled() const { return false; }
  // Whether every model of the backend is decoupled whatever its config says (an LLM:
  // its generations stream). The served config then says `decoupled: true`, as Triton's
  // clients read it to choose a streaming call. Implies SupportsDecoupled().
  virtual bool AlwaysDecoupled() const { return false; }

  // Whether an instance runs compute on intra-op threads (and so takes a share of the
  // cores in the thread budget). Built-in test backends do not.
  virtual bool UsesIntraOpThreads() const { return false; }

  // Whether an execution is so cheap (a copy, an add) that running it on the calling
  // I/O thread beats handing it to a worker thread and back. The scheduler then runs
  // requests inline when an instance is idle and nothing waits.
  virtual bool RunsInline() const { return false; }
};

}  // namespace infera

#endif  // INFERA_BACKEND_BACKEND_H_
