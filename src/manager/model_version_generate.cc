// ModelVersion::Generate: the one path of a text generation (docs/request_path.md).
#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/str_cat.h"
#include "manager/model_version.h"

namespace infera {
namespace {

using SteadyClock = std::chrono::steady_clock;


// What a final output counts as in the statistics.
absl::Status OutcomeOf(const GenerationOutput& output) {
  switch (output.finish_reason) {
    case FinishReason::kError:
      return output.error.ok() ? absl::InternalError("generation failed") : output.error;
    case FinishReason::kAbort:
      return output.error.ok() ? absl::CancelledError("generation aborted") : output.error;
    default:
      return absl::OkStatus();
  }
}

}  // namespace

// One generation in flight: forwards the model's admission and outputs to the caller,
// and ends the request in the version (statistics, in flight, the handle) once both the
// admission and — when admitted — the final output have been delivered, whichever
// comes last (they arrive on different threads, an output possibly first).
//
// Thread-safe.
class ModelVersion::GenerationInFlight {
 public:
  GenerationInFlight(ModelHandle version, GenerationCallbacks callbacks, SteadyClock::time_point arrival)
      : v_(*version), version_(std::move(version)), callbacks_(std::move(callbacks)), arrival_(arrival) {}

  void Admitted(absl::Status status, std::string echo) {
    const bool refused = !status.ok();
    if (refused) v_.statistics_.RecordFailure(status.code(), NanosBetween(arrival_, SteadyClock::now()));
    callbacks_.admitted(std::move(status), std::move(echo));
    Settle(/*admission=*/true, refused);
  }

  // Outputs of one generation come one after the other (the last is final), so
  // first_token_ needs no lock.
  void Output(GenerationOutput output) {
    if (first_token_ == SteadyClock::time_point{} && !output.token_ids.empty()) first_token_ = SteadyClock::now();
    if (output.finish_reason == FinishReason::kNone) return callbacks_.output(std::move(output));
    // The points a generator leaves unset: arrival and end as seen here, the first
    // engine step from the engine's queue time, the first token when it passed here.
    GenerationTimings& timings = output.timings;
    if (timings.arrival == SteadyClock::time_point{}) timings.arrival = arrival_;
    if (timings.finished == SteadyClock::time_point{}) timings.finished = SteadyClock::now();
    if (timings.scheduled == SteadyClock::time_point{} && output.queue_seconds > 0) {
      timings.scheduled = timings.arrival + std::chrono::duration_cast<SteadyClock::duration>(
                                                std::chrono::duration<double>(output.queue_seconds));
    }
    if (timings.first_token == SteadyClock::time_point{}) timings.first_token = first_token_;
    const GenerationTimings& t = output.timings;
    ModelVersion& v = v_;
    const absl::Status outcome = OutcomeOf(output);
    const uint64_t request_ns = NanosBetween(arrival_, t.finished);
    if (outcome.ok()) {
      // Triton's statistics: queue = until the engine first scheduled it, compute = the rest.
      const uint64_t queue_ns = NanosBetween(arrival_, t.scheduled);
      v.statistics_.RecordExecution(1, 1, 0, NanosBetween(t.scheduled, t.finished), 0);
      v.statistics_.RecordSuccess(request_ns, queue_ns, 1);
    } else {
      v.statistics_.RecordFailure(outcome.code(), request_ns);
    }
    callbacks_.output(std::move(output));
    Settle(/*admission=*/false, false);
  }

 private:
  // Ends the request once nothing more will be delivered: a refusal, or an admission and
  // a final output. The handle goes last, after every callback has returned.
  void Settle(bool admission, bool refused) {
    ModelHandle released;
    {
      absl::MutexLock lock(&mu_);
      (admission ? admitted_ : finished_) = true;
      if (!(refused || (admitted_ && finished_))) return;
      released = std::move(version_);
    }
    released->inflight_.fetch_sub(1, std::memory_order_relaxed);
  }

  ModelVersion& v_;  // alive while version_ is held, i.e. until Settle() lets go
  absl::Mutex mu_;
  ModelHandle version_ ABSL_GUARDED_BY(mu_);
  GenerationCallbacks callbacks_;
  const SteadyClock::time_point arrival_;
  SteadyClock::time_point first_token_{};  // when the first output with tokens passed (Output only)
  bool admitted_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

void ModelVersion::Generate(GenerationRequest request, GenerationCallbacks callbacks) {
  const SteadyClock::time_point arrival = request.arrival_time;
  TextGenerator* generator = text_generator();
  absl::Status valid = generator == nullptr
                           ? absl::InvalidArgumentError(StrCat("model '", name(), "' does not generate text"))
                           : request.sampling.Validate();
  if (!valid.ok()) {
    statistics_.RecordFailure(valid.code(), NanosBetween(arrival, SteadyClock::now()));
    return callbacks.admitted(std::move(valid), "");
  }
  arrivals_.fetch_add(1, std::memory_order_relaxed);
  inflight_.fetch_add(1, std::memory_order_relaxed);
  auto in_flight = std::make_shared<GenerationInFlight>(NewHandle(), std::move(callbacks), arrival);
  generator->Generate(std::move(request),
                      GenerationCallbacks{[in_flight](absl::Status status, std::string echo) {
                                            in_flight->Admitted(std::move(status), std::move(echo));
                                          },
                                          [in_flight](GenerationOutput output) {
                                            in_flight->Output(std::move(output));
                                          }});
}

}  // namespace infera
