#include "scheduling/sequence_batcher.h"

#include <algorithm>

#include "common/completion_batch.h"
#include "common/retry_after.h"
#include "common/str_cat.h"
#include "scheduling/sequence_batch_hold.h"
#include "scheduling/sequence_controls.h"
#include "scheduling/sequence_request.h"

namespace infera {
namespace {

void Reject(std::unique_ptr<ScheduledRequest> request, absl::Status status) {
  request->callback(std::move(status), ResponseDelivery{});
}

// Triton's check that the id's type suits the CORRID control.
absl::Status CheckCorrelationIdType(const SequenceBatchingOptions& options, const SequenceRequest& sequence) {
  if (options.correlation_id_dtype == DataType::kInvalid) return absl::OkStatus();
  const bool is_string = std::holds_alternative<std::string>(sequence.id);
  if (is_string == (options.correlation_id_dtype == DataType::kBytes)) return absl::OkStatus();
  std::string control_name;
  for (const SequenceControl& c : options.controls) {
    if (c.kind == SequenceControl::Kind::kCorrelationId) control_name = c.input_name;
  }
  return absl::InvalidArgumentError(StrCat("sequence batching control '", control_name, "' data-type is '",
                                           is_string ? "BYTES" : "UINT64", "', but model '", options.model_name,
                                           "' expects '", DataTypeName(options.correlation_id_dtype), "'"));
}

}  // namespace

SequenceBatcher::SequenceBatcher(SequenceBatchingOptions options, std::vector<std::unique_ptr<ModelInstance>> instances,
                                 BatchRunner runner, Clock* clock)
    : options_(std::move(options)),
      clock_(clock),
      instances_(std::move(instances)),
      runner_(std::move(runner)),
      slots_(options_.model_name, static_cast<int>(instances_.size()), options_.slots_per_instance,
             options_.max_backlog_requests, options_.max_idle,
             options_.strategy == SequenceBatchingOptions::Strategy::kOldest, options_.max_batch_rows) {
  for (size_t i = 0; i < instances_.size(); ++i) work_available_.push_back(std::make_unique<absl::CondVar>());
  absl::MutexLock lock(&shutdown_mu_);
  for (size_t i = 0; i < instances_.size(); ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

SequenceBatcher::~SequenceBatcher() { Shutdown(); }

void SequenceBatcher::Enqueue(std::unique_ptr<ScheduledRequest> request) {
  const std::string& model = options_.model_name;
  if (options_.batched && request->batch_size != 1) {
    return Reject(std::move(request),
                  absl::InvalidArgumentError(StrCat("inference request to model '", model,
                                                    "' must specify batch-size 1 due to requirements of sequence "
                                                    "batcher")));
  }
  absl::StatusOr<SequenceRequest> sequence = ParseSequenceRequest(request->request.parameters, model);
  if (!sequence.ok()) return Reject(std::move(request), sequence.status());
  if (absl::Status type = CheckCorrelationIdType(options_, *sequence); !type.ok()) {
    return Reject(std::move(request), std::move(type));
  }
  const SteadyTime now = clock_->Now();
  request->enqueue_time = now;
  absl::Status refused;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      refused = absl::UnavailableError(StrCat("model '", model, "' is stopping; it takes no new requests"));
    } else {
      absl::StatusOr<int> admitted = slots_.Admit(request, *sequence, now);
      if (!admitted.ok()) {
        refused = admitted.status();
        if (absl::IsResourceExhausted(refused)) {
          // A backlog place frees when a slot does: at the latest after a sequence's idle time.
          const auto idle_s = std::chrono::ceil<std::chrono::seconds>(options_.max_idle).count();
          refused = WithRetryAfter(std::move(refused), static_cast<int>(std::clamp<int64_t>(idle_s, 1, 60)));
        }
      } else if (*admitted >= 0) {
        work_available_[*admitted]->Signal();
      }  // else backlogged: it gets a slot when one is freed

    }
  }
  if (!refused.ok()) Reject(std::move(request), std::move(refused));
}

size_t SequenceBatcher::QueueDepth() const {
  absl::MutexLock lock(&mu_);
  return slots_.QueuedRequests();
}

size_t SequenceBatcher::ActiveSequences() const {
  absl::MutexLock lock(&mu_);
  return slots_.ActiveSequences();
}

size_t SequenceBatcher::BacklogSequences() const {
  absl::MutexLock lock(&mu_);
  return slots_.BacklogSequences();
}

Scheduler::Load SequenceBatcher::CumulativeLoad() const {
  return Load{busy_ns_.load(std::memory_order_relaxed), executed_requests_.load(std::memory_order_relaxed),
              instances_.size()};
}

void SequenceBatcher::Shutdown(absl::Time deadline) {
  absl::MutexLock shutdown_lock(&shutdown_mu_);
  std::vector<std::unique_ptr<ScheduledRequest>> abandoned;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& cv : work_available_) cv->SignalAll();
    if (deadline != absl::InfiniteFuture() &&
        !mu_.AwaitWithDeadline(
            absl::Condition(
                +[](SequenceSlots* slots) ABSL_NO_THREAD_SAFETY_ANALYSIS { return slots->QueuedRequests() == 0; },
                &slots_),
            deadline)) {
      abandoned = slots_.TakeAll();
    }
  }
  for (std::unique_ptr<ScheduledRequest>& r : abandoned) {
    Reject(std::move(r), absl::UnavailableError("the model version is being unloaded and its drain deadline passed "
                                                "while the request was queued"));
  }
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void SequenceBatcher::WakeInstances(const std::vector<int>& instances) {
  for (int instance : instances) work_available_[instance]->Signal();
}

std::vector<SequenceSlots::Row> SequenceBatcher::NextRows(size_t instance, bool& exit) {
  absl::MutexLock lock(&mu_);
  while (true) {
    const SteadyTime now = clock_->Now();
    // Stopping: no request will come, so every slot with nothing queued is idle now and
    // the backlog's sequences get slots without waiting for the idle time.
    WakeInstances(slots_.ReleaseIdle(stopping_ ? now + options_.max_idle : now));
    std::optional<SteadyTime> wake;  // the earliest of a hold's end and the next idle deadline
    const SequenceSlots::Readiness ready = slots_.ReadyRows(static_cast<int>(instance));
    if (ready.rows > 0) {
      SequenceBatchPlan plan = PlanSequenceBatch(options_, ready.rows, ready.oldest_arrival, now);
      // Stopping: no sequence will become ready, so holding for one only delays the drain.
      if (stopping_ && plan.hold_until) plan = SequenceBatchPlan{std::nullopt, ready.rows};
      wake = plan.hold_until;
      if (!wake) {
        return slots_.NextBatch(
            static_cast<int>(instance), now,
            [](const ScheduledRequest& a, const ScheduledRequest& b) { return SameInputShapes(a, b); }, plan.rows);
      }
    } else if (stopping_ && slots_.QueuedRequests() == 0) {
      for (auto& cv : work_available_) cv->SignalAll();  // the other workers exit too
      exit = true;
      return {};
    }
    // Held rows wait for Admit's signal (another sequence ready) or the hold's end.
    if (std::optional<SteadyTime> idle = stopping_ ? std::nullopt : slots_.NextIdleDeadline()) {
      if (!wake || *idle < *wake) wake = idle;
    }
    if (wake) {
      work_available_[instance]->WaitWithTimeout(&mu_, absl::FromChrono(*wake - now));
    } else {
      work_available_[instance]->Wait(&mu_);
    }
  }
}

void SequenceBatcher::Run(size_t instance, std::vector<SequenceSlots::Row> rows) {
  ScheduledRequests batch;
  // The template of padding rows: the first row's inputs before its controls.
  std::unique_ptr<ScheduledRequest> like = MakePaddingRequest(*rows.front().pending.request);
  auto add_padding = [&] {
    auto padding = MakePaddingRequest(*like);
    AppendSequenceControls(options_.controls, options_.batched, nullptr, padding->request.inputs);
    batch.push_back(std::move(padding));
  };
  const bool direct = options_.strategy == SequenceBatchingOptions::Strategy::kDirect;
  int next_slot = 0;
  size_t real = 0;
  for (SequenceSlots::Row& row : rows) {
    // Direct: row i is slot i; idle slots below the highest ready one are padding.
    while (direct && options_.batched && next_slot < row.slot) {
      add_padding();
      ++next_slot;
    }
    next_slot = row.slot + 1;
    std::unique_ptr<ScheduledRequest>& r = row.pending.request;
    if (r->request.cancellation && r->request.cancellation->IsCancelled()) {
      // Answered here (not by the runner, which would drop the row and shift the slots).
      r->callback(absl::CancelledError("request cancelled by the client"), ResponseDelivery{});
      if (direct && options_.batched) add_padding();
      continue;
    }
    AppendSequenceControls(options_.controls, options_.batched, &row.pending.sequence, r->request.inputs);
    batch.push_back(std::move(r));
    ++real;
  }
  const SteadyTime start = clock_->Now();
  if (real > 0) {
    CompletionBatch completions;
    runner_(*instances_[instance], std::move(batch), completions);
  }
  const Nanos duration = clock_->Now() - start;
  busy_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, duration.count())), std::memory_order_relaxed);
  executed_requests_.fetch_add(real, std::memory_order_relaxed);
}

void SequenceBatcher::WorkerLoop(size_t instance) {
  while (true) {
    bool exit = false;
    std::vector<SequenceSlots::Row> rows = NextRows(instance, exit);
    if (exit) return;
    if (!rows.empty()) Run(instance, std::move(rows));
  }
}

}  // namespace infera
