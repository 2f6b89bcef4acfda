// FakeInferClient: an InferClient for unit tests. Send() records the request; the test
// completes requests explicitly (in any order), on its own thread, at FakeClock times.
//
// Not thread-safe; test-only.
#ifndef INFERA_TOOLS_BENCH_FAKE_INFER_CLIENT_H_
#define INFERA_TOOLS_BENCH_FAKE_INFER_CLIENT_H_

#include <deque>
#include <utility>

#include "tools/bench/bench_clock.h"
#include "tools/bench/infer_client.h"

namespace infera::bench {

class FakeInferClient final : public InferClient {
 public:
  struct Pending {
    size_t payload_index;
    int64_t sent_ns;
    Done done;
  };

  FakeInferClient(const Clock& clock, int max_in_flight, size_t num_payloads = 1)
      : clock_(clock), max_in_flight_(max_in_flight), num_payloads_(num_payloads) {}

  void Send(size_t payload_index, Done done) override {
    pending_.push_back({payload_index, clock_.NowNs(), std::move(done)});
    ++sends_;
  }
  int max_in_flight() const override { return max_in_flight_; }
  size_t num_payloads() const override { return num_payloads_; }
  void Close() override {}

  // Completes the oldest outstanding request (FIFO) with `result` (sent_ns filled in).
  // Returns false when nothing is outstanding.
  bool CompleteOldest(RequestResult result = OkResult()) {
    if (pending_.empty()) return false;
    Pending p = std::move(pending_.front());
    pending_.pop_front();
    result.sent_ns = p.sent_ns;
    std::move(p.done)(std::move(result));
    return true;
  }
  static RequestResult OkResult() {
    RequestResult r;
    r.ok = true;
    return r;
  }

  const std::deque<Pending>& pending() const { return pending_; }
  int64_t sends() const { return sends_; }

 private:
  const Clock& clock_;
  int max_in_flight_;
  size_t num_payloads_;
  std::deque<Pending> pending_;
  int64_t sends_ = 0;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_FAKE_INFER_CLIENT_H_
