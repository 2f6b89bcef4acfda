#include "backend/builtin/repeat_responder.h"

#include <algorithm>
#include <utility>

#include "absl/time/time.h"
#include "common/str_cat.h"

namespace infera {
namespace {

Tensor Scalar(std::string name, DataType dtype, const void* value) {
  return Tensor{std::move(name), dtype, {1}, Buffer::Copy(value, 4)};
}

// Why a stopped request ends (RequestContext::Stopped tells a client's cancellation and
// a deadline apart; anything else is the unload's CancelOutstandingWork).
absl::Status StoppedStatus(const RequestContext& context, std::string_view model) {
  if (context.cancellation != nullptr && context.cancellation->IsCancelled()) {
    return absl::CancelledError("request cancelled by the client");
  }
  if (context.deadline && *context.deadline <= std::chrono::steady_clock::now()) {
    return absl::DeadlineExceededError(StrCat("request timed out while model '", model, "' answered it"));
  }
  return absl::CancelledError(StrCat("model '", model, "' is being unloaded"));
}

}  // namespace

RepeatResponder::RepeatResponder(std::string model) : model_(std::move(model)), thread_([this] { Run(); }) {}

RepeatResponder::~RepeatResponder() { CancelAll(); }

void RepeatResponder::Add(RepeatJob job) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      auto pending = std::make_unique<Pending>(std::move(job));
      pending->due = Clock::now() + DelayBefore(*pending);
      jobs_.push_back(std::move(pending));
      ++in_flight_;
      added_ = true;
      return;
    }
  }
  job.sender.Finish(absl::UnavailableError(StrCat("model '", model_, "' is being unloaded")));
}

void RepeatResponder::CancelAll() {
  absl::MutexLock cancel(&cancel_mu_);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  std::vector<std::unique_ptr<Pending>> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(jobs_);
    in_flight_ = 0;
  }
  for (std::unique_ptr<Pending>& pending : left) {
    pending->job.sender.Finish(absl::CancelledError(StrCat("model '", model_, "' is being unloaded")));
  }
}

size_t RepeatResponder::InFlight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

RepeatResponder::Clock::duration RepeatResponder::DelayBefore(const Pending& pending) const {
  const RepeatJob& job = pending.job;
  uint32_t ms = 0;
  if (pending.next >= job.values.size()) {
    ms = job.wait_ms;
  } else if (job.delays_ms.size() == 1) {
    ms = job.delays_ms[0];
  } else if (pending.next < job.delays_ms.size()) {
    ms = job.delays_ms[pending.next];
  }
  return std::chrono::milliseconds(ms);
}

bool RepeatResponder::ShouldWake() const { return stopping_ || added_; }

void RepeatResponder::Run() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    added_ = false;
    const Clock::time_point now = Clock::now();
    std::vector<std::unique_ptr<Pending>> ready;
    Clock::time_point next_due = Clock::time_point::max();
    for (size_t i = 0; i < jobs_.size();) {
      if (jobs_[i]->due <= now || jobs_[i]->job.sender.IsStopped()) {
        ready.push_back(std::move(jobs_[i]));
        jobs_[i] = std::move(jobs_.back());
        jobs_.pop_back();
      } else {
        next_due = std::min(next_due, jobs_[i]->due);
        ++i;
      }
    }
    if (!ready.empty()) {
      // The steps run outside the lock: a sender delivers to the frontend, which may
      // take its own locks (a gRPC stream's), and Add() must not wait for them.
      std::vector<std::unique_ptr<Pending>> again;
      mu_.Unlock();
      for (std::unique_ptr<Pending>& pending : ready) {
        if (std::unique_ptr<Pending> left = Step(std::move(pending))) again.push_back(std::move(left));
      }
      mu_.Lock();
      in_flight_ -= ready.size() - again.size();
      for (std::unique_ptr<Pending>& pending : again) jobs_.push_back(std::move(pending));
      continue;
    }
    const absl::Condition wake(this, &RepeatResponder::ShouldWake);
    if (jobs_.empty()) {
      mu_.Await(wake);
    } else {
      const Clock::duration wait = std::min<Clock::duration>(next_due - now, kStopCheck);
      mu_.AwaitWithTimeout(wake, absl::FromChrono(wait));
    }
  }
}

std::unique_ptr<RepeatResponder::Pending> RepeatResponder::Step(std::unique_ptr<Pending> pending) {
  RepeatJob& job = pending->job;
  if (job.sender.IsStopped()) {
    job.sender.Finish(StoppedStatus(job.context, model_));
    return nullptr;
  }
  if (pending->next >= job.values.size()) {
    job.sender.Finish();  // the final flag, no response: Triton's empty final response
    return nullptr;
  }
  const uint32_t index = static_cast<uint32_t>(pending->next);
  std::vector<Tensor> outputs;
  outputs.reserve(2);
  outputs.push_back(Scalar("OUT", DataType::kInt32, &job.values[index]));
  outputs.push_back(Scalar("IDX", DataType::kUint32, &index));
  // A refused response (the request was stopped meanwhile, or broke the config) has
  // already ended the request.
  if (!job.sender.Send(std::move(outputs)).ok()) return nullptr;
  ++pending->next;
  pending->due = Clock::now() + DelayBefore(*pending);
  return pending;
}

}  // namespace infera
