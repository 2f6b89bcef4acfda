// ResponseBudget: the bytes of HTTP responses produced but not yet taken by the clients'
// sockets, all connections together (--http-max-buffered-response-bytes), plus the
// write-side counters /metrics reports.
//
// Admission: a finished response is admitted when it is small (at most
// kAlwaysAdmittedBytes: health checks and errors always get through), when nothing else is
// buffered (one answer of any size always fits), or when the total stays within the
// limit. A response that is not admitted is dropped by the caller (HttpServer answers 503
// instead). Stream chunks are added without admission (a per-connection bound applies).
//
// Thread-safe (atomics).
//
// Usage:
//   if (!budget.TryReserve(body.size())) -> 503
//   ... write ...
//   budget.Release(body.size());
#ifndef INFERA_HTTP_RESPONSE_BUDGET_H_
#define INFERA_HTTP_RESPONSE_BUDGET_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace infera {

class ResponseBudget {
 public:
  static constexpr int64_t kAlwaysAdmittedBytes = 64 << 10;

  explicit ResponseBudget(size_t max_bytes) : max_bytes_(static_cast<int64_t>(max_bytes)) {}

  // Adds `bytes` when admitted (see above); false (nothing added) otherwise.
  bool TryReserve(int64_t bytes);
  void Add(int64_t bytes) { buffered_.fetch_add(bytes, std::memory_order_relaxed); }
  void Release(int64_t bytes) { buffered_.fetch_sub(bytes, std::memory_order_relaxed); }
  int64_t buffered() const { return buffered_.load(std::memory_order_relaxed); }
  size_t max_bytes() const { return static_cast<size_t>(max_bytes_); }

  void CountWriteTimeout() { write_timeouts_.fetch_add(1, std::memory_order_relaxed); }
  void CountRejected() { rejected_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t write_timeouts() const { return write_timeouts_.load(std::memory_order_relaxed); }
  uint64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }

 private:
  const int64_t max_bytes_;
  std::atomic<int64_t> buffered_{0};
  std::atomic<uint64_t> write_timeouts_{0};
  std::atomic<uint64_t> rejected_{0};
};

}  // namespace infera

#endif  // INFERA_HTTP_RESPONSE_BUDGET_H_
