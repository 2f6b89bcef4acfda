#include "tools/bench/load_driver.h"

#include <algorithm>
#include <utility>

namespace infera::bench {

LoadDriver::LoadDriver(const LoadSpec& spec, InferClient& client, const Clock& clock)
    : spec_(spec), client_(client), clock_(clock) {
  if (spec_.mode == LoadSpec::Mode::kRequestRate) {
    if (spec_.distribution == ArrivalDistribution::kIntervals) {
      schedule_.emplace(spec_.gaps_ns);
    } else {
      schedule_.emplace(spec_.request_rate, spec_.distribution, spec_.seed);
    }
  }
  const size_t payloads = std::max<size_t>(1, client_.num_payloads());
  next_payload_ = spec_.first_payload % payloads;
}

void LoadDriver::Start() {
  if (started_) return;
  started_ = true;
  start_ns_ = clock_.NowNs();
  window_ = WindowStats();
  window_.start_ns = start_ns_;
  if (schedule_) {
    next_arrival_ns_ = start_ns_ + schedule_->Next();
    Poll();
    return;
  }
  const int n = std::min(spec_.concurrency, client_.max_in_flight());
  for (int i = 0; i < n; ++i) SendOne(start_ns_);
}

std::optional<int64_t> LoadDriver::Poll() {
  if (!started_ || stopped_ || !schedule_) return std::nullopt;
  const int64_t now = clock_.NowNs();
  while (next_arrival_ns_ <= now) {
    if (HasFreeSlot() && backlog_.empty()) {
      SendOne(next_arrival_ns_);
    } else {
      backlog_.push_back(next_arrival_ns_);
    }
    next_arrival_ns_ = start_ns_ + schedule_->Next();
  }
  return next_arrival_ns_;
}

void LoadDriver::Stop() {
  stopped_ = true;
  window_.dropped += static_cast<int64_t>(backlog_.size());
  totals_.dropped += static_cast<int64_t>(backlog_.size());
  backlog_.clear();
}

void LoadDriver::SendOne(int64_t scheduled_ns) {
  const size_t payload = next_payload_;
  next_payload_ = (next_payload_ + 1) % std::max<size_t>(1, client_.num_payloads());
  const int64_t dispatch_ns = clock_.NowNs();
  ++in_flight_;
  ++totals_.sent;
  ++window_.sent;
  client_.Send(payload, [this, scheduled_ns, dispatch_ns](RequestResult result) {
    OnDone(scheduled_ns, dispatch_ns, std::move(result));
  });
}

void LoadDriver::OnDone(int64_t scheduled_ns, int64_t dispatch_ns, RequestResult result) {
  const int64_t now = clock_.NowNs();
  --in_flight_;
  if (result.ok) {
    ++totals_.ok;
    ++window_.ok;
    window_.latency.Record(now - scheduled_ns);
    if (schedule_) window_.send_lag.Record(dispatch_ns - scheduled_ns);
    if (result.first_token_ns > 0) {
      window_.ttft.Record(result.first_token_ns - scheduled_ns);
      if (result.output_tokens > 1) {
        window_.tpot.Record((now - result.first_token_ns) / (result.output_tokens - 1));
      }
    }
    window_.output_tokens += result.output_tokens;
  } else {
    ++totals_.errors;
    ++window_.errors;
    ErrorCount& count = window_.error_counts[result.error_kind];
    if (count.count++ == 0) count.example = std::move(result.error_detail);
  }
  if (stopped_) return;
  if (schedule_) {
    // A freed slot goes to the oldest backlogged arrival first.
    if (!backlog_.empty() && HasFreeSlot()) {
      const int64_t scheduled = backlog_.front();
      backlog_.pop_front();
      SendOne(scheduled);
    }
  } else {
    SendOne(now);
  }
}

WindowStats LoadDriver::TakeWindow() {
  const int64_t now = clock_.NowNs();
  WindowStats done = std::move(window_);
  done.end_ns = now;
  window_ = WindowStats();
  window_.start_ns = now;
  return done;
}

}  // namespace infera::bench
