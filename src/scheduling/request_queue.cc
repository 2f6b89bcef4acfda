#include "scheduling/request_queue.h"

#include <algorithm>

#include "api/parameters.h"
#include "common/check.h"
#include "common/checked_math.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/config_limits.h"

namespace infera {
namespace {

using Rejection = RequestQueue::Rejection;

bool Cancelled(const ScheduledRequest& r) {
  return r.request.cancellation && r.request.cancellation->IsCancelled();
}

}  // namespace

bool BatchCompatible(const InferRequest& a, const InferRequest& b) {
  if (a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const Shape& x = a.inputs[i].shape;
    const Shape& y = b.inputs[i].shape;
    if (a.inputs[i].name != b.inputs[i].name || x.size() != y.size() || x.empty() ||
        !std::equal(x.begin() + 1, x.end(), y.begin() + 1)) {
      return false;
    }
  }
  return true;
}

RequestQueue::RequestQueue(const SchedulingOptions& options)
    // Sized once: Level holds deques of unique_ptr, which a vector cannot relocate.
    : levels_(options.policies.size()), default_level_(options.default_priority_level) {
  for (size_t i = 0; i < levels_.size(); ++i) levels_[i].policy = options.policies[i];
}

absl::Status RequestQueue::CheckParameterTypes(const Parameters& parameters) {
  for (std::string_view key : {"priority", "timeout"}) {
    auto it = parameters.find(key);
    if (it == parameters.end() || std::holds_alternative<int64_t>(it->second)) continue;
    const std::string_view given = std::holds_alternative<bool>(it->second)     ? "a bool"
                                   : std::holds_alternative<double>(it->second) ? "a number that is not an integer"
                                                                                : "a string";
    return absl::InvalidArgumentError(StrCat("parameter '", key, "' must be an integer",
                                             key == "timeout" ? " (microseconds)" : "", ", not ", given));
  }
  return absl::OkStatus();
}

absl::Status RequestQueue::CheckParameters(const ScheduledRequest& request) const {
  const Parameters& params = request.request.parameters;
  RETURN_IF_ERROR(CheckParameterTypes(params));
  if (auto priority = GetIntParameter(params, "priority"); priority && *priority != 0) {
    if (*priority < 0 || *priority > static_cast<int64_t>(levels_.size())) {
      return absl::InvalidArgumentError(StrCat(
          "parameter 'priority' ", *priority, " is outside [1, ", levels_.size(),
          "] (the model's priority_levels; 0 means the default level)"));
    }
  }
  if (auto timeout = GetIntParameter(params, "timeout"); timeout && *timeout < 0) {
    return absl::InvalidArgumentError("parameter 'timeout' (µs) must be >= 0");
  } else if (timeout && static_cast<uint64_t>(*timeout) > kMaxTimeoutMicros) {
    return absl::InvalidArgumentError(StrCat("parameter 'timeout' ", *timeout,
                                             " µs is more than the limit of ", kMaxTimeoutMicros,
                                             " µs (1 day)"));
  }
  return absl::OkStatus();
}

std::optional<Rejection> RequestQueue::Push(std::unique_ptr<ScheduledRequest> request,
                                            SteadyTime now, Admitted* admitted) {
  if (absl::Status invalid = CheckParameters(*request); !invalid.ok()) {
    return Rejection{std::move(request), std::move(invalid)};
  }
  const Parameters& params = request->request.parameters;
  int level = default_level_;
  if (auto priority = GetIntParameter(params, "priority"); priority && *priority != 0) {
    level = static_cast<int>(*priority);
  }
  Level& target = levels_[level - 1];
  const QueuePolicy& policy = target.policy;
  std::chrono::microseconds timeout = policy.default_timeout;
  if (auto requested = GetIntParameter(params, "timeout")) {
    if (policy.allow_timeout_override && *requested > 0 &&
        (timeout.count() == 0 || *requested < timeout.count())) {
      timeout = std::chrono::microseconds(*requested);
    }
  }
  if (target.size() >= policy.max_queue_size) {
    // Build the status before `request` is moved into the Rejection.
    // Triton's text leads ("Exceeds maximum queue size"): clients' retry logic matches on it.
    absl::Status full = absl::ResourceExhaustedError(
        StrCat("Exceeds maximum queue size: model '", request->request.model_name, "' queue is full (",
               policy.max_queue_size,
               " requests waiting at priority ", level, ")"));
    return Rejection{std::move(request), std::move(full)};
  }
  request->priority_level = level;
  request->enqueue_time = now;
  // Saturating: a level's default timeout is bounded at load, but the sum must never wrap.
  if (timeout.count() > 0) request->deadline = SaturatingAdd(now, timeout);
  if (admitted != nullptr) {
    admitted->deadline = request->deadline;
    // First in candidate order: nothing queued at a higher level, nor in its own main
    // list (its level's delayed requests come after it).
    admitted->head = target.main.empty();
    for (int l = 0; l < level - 1 && admitted->head; ++l) admitted->head = levels_[l].size() == 0;
  }
  rows_ += request->batch_size;
  target.main.push_back(std::move(request));
  ++size_;
  return std::nullopt;
}

std::vector<Rejection> RequestQueue::Sweep(SteadyTime now) {
  std::vector<Rejection> rejected;
  for (Level& level : levels_) {
    auto sweep = [&](std::deque<std::unique_ptr<ScheduledRequest>>& list, bool apply_timeouts) {
      for (auto it = list.begin(); it != list.end();) {
        ScheduledRequest& r = **it;
        if (Cancelled(r)) {
          rejected.push_back({std::move(*it), absl::CancelledError("request cancelled by the client")});
        } else if (apply_timeouts && r.deadline && *r.deadline <= now) {
          if (level.policy.timeout_action == QueuePolicy::TimeoutAction::kDelay) {
            r.deadline.reset();
            level.delayed.push_back(std::move(*it));
          } else {
            rejected.push_back({std::move(*it),
                                absl::DeadlineExceededError(StrCat(
                                    "request timed out after waiting ",
                                    std::chrono::duration_cast<std::chrono::microseconds>(
                                        now - r.enqueue_time).count(),
                                    " µs in the queue"))});
          }
        } else {
          ++it;
          continue;
        }
        it = list.erase(it);
      }
    };
    sweep(level.main, true);
    sweep(level.delayed, false);
  }
  INFERA_CHECK(size_ >= rejected.size()) << "queue size " << size_ << " < " << rejected.size()
                                         << " swept";
  size_ -= rejected.size();
  for (const Rejection& r : rejected) rows_ -= r.request->batch_size;
  return rejected;
}

template <typename Fn>
void RequestQueue::ForEach(Fn&& fn) const {
  for (const Level& level : levels_) {
    for (const auto& r : level.main) {
      if (!fn(*r)) return;
    }
    for (const auto& r : level.delayed) {
      if (!fn(*r)) return;
    }
  }
}

std::vector<const ScheduledRequest*> RequestQueue::Candidates(int64_t max_rows) const {
  std::vector<const ScheduledRequest*> chosen;
  int64_t rows = 0;
  size_t scanned = 0;
  // Bounded scan: a queue full of incompatible shapes must not make this O(queue).
  const size_t max_scan = static_cast<size_t>(2 * std::max<int64_t>(max_rows, 1) + 16);
  ForEach([&](const ScheduledRequest& r) {
    if (chosen.empty()) {
      chosen.push_back(&r);
      rows = r.batch_size;
      return max_rows > 0 && rows < max_rows;
    }
    if (++scanned > max_scan) return false;
    if (rows + r.batch_size <= max_rows && BatchCompatible(chosen[0]->request, r.request)) {
      chosen.push_back(&r);
      rows += r.batch_size;
    }
    return rows < max_rows;
  });
  return chosen;
}

ScheduledRequests RequestQueue::Take(const std::vector<const ScheduledRequest*>& chosen) {
  ScheduledRequests taken;
  taken.reserve(chosen.size());
  auto take_from = [&](std::deque<std::unique_ptr<ScheduledRequest>>& list,
                       const ScheduledRequest* wanted) {
    auto it = std::find_if(list.begin(), list.end(), [&](const auto& r) { return r.get() == wanted; });
    if (it == list.end()) return false;
    taken.push_back(std::move(*it));
    list.erase(it);
    return true;
  };
  for (const ScheduledRequest* wanted : chosen) {
    bool found = false;
    for (Level& level : levels_) {
      if ((found = take_from(level.main, wanted) || take_from(level.delayed, wanted))) break;
    }
    INFERA_CHECK(found) << "Take(): a chosen request is not in the queue";
  }
  INFERA_CHECK(size_ >= taken.size()) << "queue size " << size_ << " < " << taken.size() << " taken";
  size_ -= taken.size();
  for (const auto& r : taken) rows_ -= r->batch_size;
  return taken;
}

ScheduledRequests RequestQueue::TakeAll() {
  ScheduledRequests all;
  for (Level& level : levels_) {
    for (auto* list : {&level.main, &level.delayed}) {
      for (auto& r : *list) all.push_back(std::move(r));
      list->clear();
    }
  }
  size_ = 0;
  rows_ = 0;
  return all;
}

std::optional<SteadyTime> RequestQueue::EarliestDeadline() const {
  std::optional<SteadyTime> earliest;
  for (const Level& level : levels_) {
    for (const auto& r : level.main) {
      if (r->deadline && (!earliest || *r->deadline < *earliest)) earliest = r->deadline;
    }
  }
  return earliest;
}

}  // namespace infera
