// LoadDriver: decides when each request of one load level is sent — closed loop
// (a fixed number of requests always outstanding) or open loop (arrivals on a
// constant or Poisson schedule) — and records every completion into WindowStats.
//
// It is a plain state machine over an InferClient and a Clock: no threads, no timers,
// no I/O of its own. Its owner (load_shard.h) runs it on one event-loop thread: calls
// Start(), then Poll() whenever the time Poll() last returned has come, and
// TakeWindow() at window boundaries. Unit tests drive it with a FakeClock and a fake
// client, which is how rate accuracy is tested without sleeping.
//
//   closed loop  Start() sends `concurrency` requests; each completion sends the next.
//                Latency = completion - send.
//   open loop    arrival k is due at start + schedule offset k. Poll() sends every due
//                arrival; when the client has no free slot (max_in_flight reached) the
//                arrival waits in a FIFO backlog and goes out at the next completion.
//                Latency = completion - *scheduled* time (includes the wait);
//                send_lag = send - scheduled.
//
// Payloads are used round-robin. Stop() ends sending: backlog entries never sent are
// counted as `dropped`; outstanding requests still complete and are recorded.
// Invariant, checked by tests: sent == ok + errors + in_flight().
//
// Not thread-safe; owned by one event-loop thread. The client must not call back after
// the driver is destroyed: destroy it only when in_flight() == 0.
//
// Usage:
//   LoadDriver driver(spec, client, clock);
//   driver.Start();
//   std::optional<int64_t> wake = driver.Poll();   // arm a timer for *wake
//   ...
//   WindowStats window = driver.TakeWindow();
#ifndef INFERA_TOOLS_BENCH_LOAD_DRIVER_H_
#define INFERA_TOOLS_BENCH_LOAD_DRIVER_H_

#include <cstdint>
#include <deque>
#include <optional>

#include <vector>

#include "tools/bench/arrival_schedule.h"
#include "tools/bench/bench_clock.h"
#include "tools/bench/infer_client.h"
#include "tools/bench/window_stats.h"

namespace infera::bench {

struct LoadSpec {
  enum class Mode { kConcurrency, kRequestRate };
  Mode mode = Mode::kConcurrency;
  int concurrency = 1;     // closed loop
  double request_rate = 0;  // open loop, requests per second
  ArrivalDistribution distribution = ArrivalDistribution::kConstant;
  std::vector<int64_t> gaps_ns;  // kIntervals: the gaps between arrivals
  uint64_t seed = 1;
  size_t first_payload = 0;  // where the round-robin starts (shards use different ones)
};

struct DriverTotals {
  int64_t sent = 0;
  int64_t ok = 0;
  int64_t errors = 0;
  int64_t dropped = 0;
};

class LoadDriver {
 public:
  LoadDriver(const LoadSpec& spec, InferClient& client, const Clock& clock);
  LoadDriver(const LoadDriver&) = delete;
  LoadDriver& operator=(const LoadDriver&) = delete;

  // Begins the level and the first window at Now().
  void Start();
  // Open loop: sends every arrival due by Now() (or backlogs it). Returns the absolute
  // time of the next scheduled arrival; nullopt for closed loop or after Stop().
  std::optional<int64_t> Poll();
  // No more requests are started; the backlog is dropped.
  void Stop();

  int64_t in_flight() const { return in_flight_; }
  // Completions (ok or failed) in the current window so far.
  int64_t completed_in_window() const { return window_.ok + window_.errors; }
  size_t backlog() const { return backlog_.size(); }
  const DriverTotals& totals() const { return totals_; }

  // Closes the current window at Now() and opens the next one.
  WindowStats TakeWindow();

 private:
  void SendOne(int64_t scheduled_ns);
  void OnDone(int64_t scheduled_ns, int64_t dispatch_ns, RequestResult result);
  bool HasFreeSlot() const { return in_flight_ < client_.max_in_flight(); }

  const LoadSpec spec_;
  InferClient& client_;
  const Clock& clock_;
  std::optional<ArrivalSchedule> schedule_;  // open loop only
  int64_t start_ns_ = 0;
  int64_t next_arrival_ns_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  int64_t in_flight_ = 0;
  size_t next_payload_ = 0;
  std::deque<int64_t> backlog_;  // scheduled times of due arrivals not yet sent
  WindowStats window_;
  DriverTotals totals_;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_LOAD_DRIVER_H_
