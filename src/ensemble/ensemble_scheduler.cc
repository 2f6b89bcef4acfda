#include "ensemble/ensemble_scheduler.h"

#include <chrono>
#include <limits>
#include <utility>
#include <vector>

#include "api/parameters.h"
#include "common/str_cat.h"
#include "repository/config_limits.h"
#include "scheduling/request_queue.h"

namespace infera {
namespace {

using SteadyClock = std::chrono::steady_clock;

absl::Status Prefixed(const absl::Status& status, const std::string& prefix) {
  return absl::Status(status.code(), StrCat(prefix, ": ", status.message()));
}

}  // namespace

// One ensemble request in flight. Shared by the step callbacks; the last one to finish
// tells the scheduler (Shutdown waits for that).
class EnsembleScheduler::Run : public std::enable_shared_from_this<Run> {
 public:
  Run(EnsembleScheduler& owner, std::unique_ptr<ScheduledRequest> request, std::vector<StepModel> models,
      std::optional<SteadyClock::time_point> deadline)
      : owner_(owner),
        plan_(owner.plan_),
        request_(std::move(request)),
        models_(std::move(models)),
        deadline_(deadline),
        cancel_(std::make_shared<CancellationToken>(request_->request.cancellation)),
        waiting_(plan_.steps.size()) {
    for (size_t s = 0; s < plan_.steps.size(); ++s) waiting_[s] = plan_.steps[s].num_distinct_inputs;
  }

  CancellationToken* cancel_token() const { return cancel_.get(); }

  // Seeds the table with the request's inputs and starts the steps that are ready.
  void Start() {
    std::vector<int> ready = plan_.initial_steps;
    {
      absl::MutexLock lock(&mu_);
      for (Tensor& input : request_->request.inputs) {
        std::string name = input.name;
        Produce(name, std::move(input), ready);
      }
      outstanding_ = static_cast<int>(ready.size());
    }
    StartSteps(ready);
  }

 private:
  // Adds `tensor` to the table; appends steps it made ready.
  void Produce(const std::string& name, Tensor tensor, std::vector<int>& ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    tensors_[name] = std::move(tensor);
    auto it = plan_.consumers.find(name);
    if (it == plan_.consumers.end()) return;
    for (int s : it->second) {
      if (--waiting_[s] == 0) ready.push_back(s);
    }
  }

  void StartSteps(const std::vector<int>& steps) {
    for (int s : steps) StartStep(s);
  }

  void StartStep(int s) {
    const EnsembleStep& step = plan_.steps[s];
    InferRequest request;
    request.model_name = step.model_name;
    request.model_version = step.model_version;
    request.id = request_->request.id;
    request.parameters = request_->request.parameters;
    request.arrival_time = SteadyClock::now();
    request.cancellation = cancel_;
    request.ensemble_depth = request_->request.ensemble_depth + 1;
    request.token_meter = request_->request.token_meter;  // an LLM step spends the client's tokens
    if (deadline_) {
      const auto left = std::chrono::duration_cast<std::chrono::microseconds>(*deadline_ - request.arrival_time);
      if (left.count() <= 0) {
        StepDone(s, absl::DeadlineExceededError("the request's timeout expired before the step started"));
        return;
      }
      request.parameters["timeout"] = static_cast<int64_t>(left.count());
    }
    bool failed;
    {
      absl::MutexLock lock(&mu_);
      failed = failed_;
      for (const auto& [step_input, tensor] : step.inputs) {
        Tensor t = tensors_.at(tensor);  // shares the Buffer: no copy of the data
        t.name = step_input;
        request.inputs.push_back(std::move(t));
      }
    }
    if (failed || cancel_->IsCancelled()) {
      StepDone(s, absl::CancelledError("the request was cancelled"));
      return;
    }
    models_[s].infer(std::move(request), [self = shared_from_this(), s](absl::StatusOr<InferResponse> result,
                                                                       ResponseDelivery delivery) {
      if (!delivery.final) {
        // Steps are models that answer once (the step resolver refuses decoupled ones);
        // anything else would leave the step's table entries ambiguous.
        self->StepDone(s, absl::InternalError("the step model sent several responses"));
        return;
      }
      if (!result.ok()) {
        self->StepDone(s, result.status());
      } else {
        self->StepDone(s, std::move(result->outputs));
      }
    });
  }

  void StepDone(int s, absl::StatusOr<std::vector<Tensor>> outputs) {
    std::vector<int> ready;
    bool answer = false, finished = false;
    absl::StatusOr<InferResponse> result = absl::UnknownError("unset");
    {
      absl::MutexLock lock(&mu_);
      --outstanding_;
      if (!outputs.ok()) {
        if (!failed_) {
          failed_ = true;
          answer = true;
          result = Prefixed(outputs.status(), StepLabel(plan_, s));
        }
      } else if (!failed_) {
        const EnsembleStep& step = plan_.steps[s];
        for (Tensor& out : *outputs) {
          for (const auto& [step_output, tensor] : step.outputs) {
            if (out.name == step_output) {
              out.name = tensor;
              Produce(tensor, std::move(out), ready);
              break;
            }
          }
        }
        ++completed_;
        outstanding_ += static_cast<int>(ready.size());
        if (completed_ == static_cast<int>(plan_.steps.size())) {
          answer = true;
          result = Response();
        }
      }
      finished = outstanding_ == 0 && (failed_ || answer);
    }
    if (answer && !result.ok()) cancel_->Cancel();  // the other steps: nobody waits for them
    if (!ready.empty()) StartSteps(ready);
    if (answer) request_->callback(std::move(result), ResponseDelivery{});
    if (finished) owner_.RunFinished(cancel_.get());
  }

  InferResponse Response() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    InferResponse response;
    response.id = request_->request.id;
    for (const std::string& name : plan_.outputs) {
      Tensor t = tensors_.at(name);
      response.outputs.push_back(std::move(t));
    }
    return response;
  }

  EnsembleScheduler& owner_;
  const EnsemblePlan& plan_;
  const std::unique_ptr<ScheduledRequest> request_;
  const std::vector<StepModel> models_;  // the step versions' handles, for the run's life
  const std::optional<SteadyClock::time_point> deadline_;
  const std::shared_ptr<CancellationToken> cancel_;

  absl::Mutex mu_;
  std::map<std::string, Tensor> tensors_ ABSL_GUARDED_BY(mu_);
  std::vector<int> waiting_ ABSL_GUARDED_BY(mu_);  // inputs each step still waits for
  int outstanding_ ABSL_GUARDED_BY(mu_) = 0;       // steps started and not finished
  int completed_ ABSL_GUARDED_BY(mu_) = 0;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
};

EnsembleScheduler::EnsembleScheduler(EnsemblePlan plan, StepResolver resolver)
    : plan_(std::move(plan)), resolver_(std::move(resolver)) {}

EnsembleScheduler::~EnsembleScheduler() { Shutdown(); }

absl::StatusOr<std::unique_ptr<EnsembleScheduler>> EnsembleScheduler::Create(const inference::ModelConfig& config,
                                                                             StepResolver resolver) {
  std::vector<StepModel> held;  // the configs stay valid while the plan is built
  auto lookup = [&](const std::string& name,
                    std::optional<int64_t> version) -> absl::StatusOr<const inference::ModelConfig*> {
    absl::StatusOr<StepModel> model = resolver(name, version);
    if (!model.ok()) return model.status();
    held.push_back(std::move(*model));
    return held.back().config;
  };
  held.reserve(config.ensemble_scheduling().step_size());
  absl::StatusOr<EnsemblePlan> plan = BuildEnsemblePlan(config, lookup);
  if (!plan.ok()) return plan.status();
  return std::unique_ptr<EnsembleScheduler>(new EnsembleScheduler(std::move(*plan), std::move(resolver)));
}

void EnsembleScheduler::Enqueue(std::unique_ptr<ScheduledRequest> request) {
  // Loads keep nesting within the bound (ensemble_nesting.h); this holds even if a graph
  // changed under a load's check: an error, never a recursion without end.
  if (request->request.ensemble_depth >= kMaxEnsembleDepth) {
    request->callback(absl::FailedPreconditionError(
        StrCat("ensemble '", plan_.name, "' is nested more than ", kMaxEnsembleDepth,
               " ensembles deep (the step models form a cycle or too long a chain)")),
        ResponseDelivery{});
    return;
  }
  if (absl::Status bad = RequestQueue::CheckParameterTypes(request->request.parameters); !bad.ok()) {
    request->callback(std::move(bad), ResponseDelivery{});
    return;
  }
  std::optional<SteadyClock::time_point> deadline;
  if (auto timeout = GetIntParameter(request->request.parameters, "timeout")) {
    if (*timeout < 0 || static_cast<uint64_t>(*timeout) > kMaxTimeoutMicros) {
      request->callback(absl::InvalidArgumentError(
                            StrCat("parameter 'timeout' ", *timeout, " (µs) must be 0 to ", kMaxTimeoutMicros)),
                        ResponseDelivery{});
      return;
    }
    if (*timeout > 0) deadline = request->request.arrival_time + std::chrono::microseconds(*timeout);
  }
  std::vector<StepModel> models;
  models.reserve(plan_.steps.size());
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    absl::StatusOr<StepModel> model = resolver_(plan_.steps[s].model_name, plan_.steps[s].model_version);
    if (!model.ok()) {
      request->callback(Prefixed(model.status(), StepLabel(plan_, static_cast<int>(s))), ResponseDelivery{});
      return;
    }
    models.push_back(std::move(*model));
  }
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      request->callback(absl::UnavailableError(StrCat("ensemble '", plan_.name, "' is shutting down")),
                        ResponseDelivery{});
      return;
    }
    ++active_;
  }
  auto run = std::make_shared<Run>(*this, std::move(request), std::move(models), deadline);
  {
    absl::MutexLock lock(&mu_);
    running_.insert(run->cancel_token());
  }
  run->Start();
}

void EnsembleScheduler::RunFinished(CancellationToken* token) {
  absl::MutexLock lock(&mu_);
  running_.erase(token);
  --active_;
}

int64_t EnsembleScheduler::Active() const {
  absl::MutexLock lock(&mu_);
  return active_;
}

void EnsembleScheduler::Shutdown(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  const absl::Condition idle(+[](int64_t* active) { return *active == 0; }, &active_);
  if (mu_.AwaitWithDeadline(idle, deadline)) return;
  // Past the deadline: cancel what still runs — queued steps are dropped by their models,
  // running ones finish — and wait for that.
  for (CancellationToken* token : running_) token->Cancel();
  mu_.Await(idle);
}

}  // namespace infera
