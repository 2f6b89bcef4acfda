// EnsembleScheduler: runs an ensemble's requests as a DAG of step-model requests.
//
// The ensemble is a ModelVersion with no backend instance whose Scheduler is this class
// instead of a DynamicBatcher (manager/model_version.h: ModelVersion::CreateComposite).
// Per request:
//
//   Enqueue(request) → resolve every step's model version (a handle each, held until the
//   last step has finished) → tensor table seeded with the request's inputs → each step
//   whose inputs all exist is sent to its model's Infer (its own queue, batcher and
//   instances) → on completion its outputs join the table (by reference: a Tensor's
//   Buffer is shared, never copied) and newly ready steps start → when every step is
//   done the ensemble's outputs are answered.
//
// Independent steps run in parallel (each start is an enqueue on another model). There
// is no thread here: completions run on the step model's worker (or on the thread that
// started the step, when the step answers synchronously).
//
// Each step request carries its nesting depth (InferRequest::ensemble_depth: one more
// than the ensemble request's); a request at kMaxEnsembleDepth fails with
// FailedPrecondition before any step starts, so ensembles that reach themselves (a graph
// the load-time checks of ensemble_nesting.h refuse) still cannot recurse without end.
//
// Each step request carries the ensemble request's parameters (as Triton passes them),
// with `timeout` replaced by what is left of the ensemble's timeout when the step
// starts (a step that would start past it fails with DeadlineExceeded), and a
// cancellation token that is cancelled when the client's token is or when the request
// fails. The first step error ends the request with that error, its message prefixed
// with the step ("ensemble 'e' step 1 (model 'b'): ..."), and cancels the other steps.
//
// Thread-safe.
#ifndef INFERA_ENSEMBLE_ENSEMBLE_SCHEDULER_H_
#define INFERA_ENSEMBLE_ENSEMBLE_SCHEDULER_H_

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/infer_request.h"
#include "ensemble/ensemble_plan.h"
#include "scheduling/scheduler.h"

namespace infera {

// One step model's version, resolved for one ensemble request.
struct StepModel {
  // Keeps the version alive (and counted, so a reload drains after it) while the
  // ensemble request uses it: the step's ModelHandle.
  std::shared_ptr<void> handle;
  const inference::ModelConfig* config = nullptr;  // valid while `handle` lives
  // The version's Infer (a step model answers once: callback called exactly once, final).
  std::function<void(InferRequest, InferCallback)> infer;
};

// Resolves a step model at request time: `version`, or the newest ready one. NotFound /
// Unavailable when it does not serve.
using StepResolver =
    std::function<absl::StatusOr<StepModel>(const std::string& name, std::optional<int64_t> version)>;

class EnsembleScheduler : public Scheduler {
 public:
  // Builds the plan against the step models `resolver` serves now (they must be loaded
  // before the ensemble). Errors name the step.
  static absl::StatusOr<std::unique_ptr<EnsembleScheduler>> Create(const inference::ModelConfig& config,
                                                                   StepResolver resolver);
  ~EnsembleScheduler() override;

  // The request's outputs are every ensemble output in config order; the caller selects.
  void Enqueue(std::unique_ptr<ScheduledRequest> request) override;
  size_t QueueDepth() const override { return 0; }  // nothing waits here; steps queue
  Load CumulativeLoad() const override { return {}; }
  // Rejects new requests and waits until every running request's steps have finished;
  // at `deadline` the requests still running are cancelled (their queued steps dropped).
  void Shutdown(absl::Time deadline) override;
  using Scheduler::Shutdown;

  const EnsemblePlan& plan() const { return plan_; }
  // Ensemble requests whose steps have not all finished.
  int64_t Active() const;

 private:
  class Run;
  EnsembleScheduler(EnsemblePlan plan, StepResolver resolver);
  void RunFinished(CancellationToken* token);

  const EnsemblePlan plan_;
  const StepResolver resolver_;
  mutable absl::Mutex mu_;
  int64_t active_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The cancellation tokens of the requests running now (each alive while it runs).
  std::set<CancellationToken*> running_ ABSL_GUARDED_BY(mu_);
};

}  // namespace infera

#endif  // INFERA_ENSEMBLE_ENSEMBLE_SCHEDULER_H_
