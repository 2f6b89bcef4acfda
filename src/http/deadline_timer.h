// DeadlineTimer: a deadline that moves on every request but rarely fires, on one Asio
// timer (a connection's read timeout, and its write-progress timeout).
//
// Setting or clearing the deadline is no timer operation: one wait stays pending and,
// when it fires before the deadline (which moved later meanwhile), waits again for the
// rest. Only a deadline earlier than the pending wait's restarts it; a wait superseded so
// is recognised by its number. So a keep-alive request costs no timer operation (and no
// allocation) in steady state. When the deadline passes while set, the owner's
// `kOnExpired` member runs on the timer's thread.
//
// The pending wait holds a shared_ptr to the owner (Owner derives from
// std::enable_shared_from_this); Cancel() ends it (the owner's Close).
//
// Not thread-safe: use on the executor's (the connection's I/O) thread.
#ifndef INFERA_HTTP_DEADLINE_TIMER_H_
#define INFERA_HTTP_DEADLINE_TIMER_H_

#include <chrono>
#include <cstdint>

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>

namespace infera::http_internal {

template <class Owner, void (Owner::*kOnExpired)()>
class DeadlineTimer {
 public:
  using Clock = std::chrono::steady_clock;
  using Executor = boost::asio::io_context::executor_type;

  DeadlineTimer(Owner* owner, const Executor& executor) : owner_(owner), timer_(executor) {}

  // Sets (or moves) the deadline.
  void Set(Clock::time_point deadline) {
    deadline_ = deadline;
    set_ = true;
    expired_ = false;
    if (waiting_ && timer_.expiry() <= deadline_) return;  // fires first, then re-waits
    StartWait();
  }
  // No deadline; a pending wait finds it cleared and ends.
  void Clear() { set_ = false; }
  // Clears it and ends the pending wait now.
  void Cancel() {
    set_ = false;
    timer_.cancel();
  }
  // The last deadline set passed (until the next Set).
  bool expired() const { return expired_; }

 private:
  using Timer = boost::asio::basic_waitable_timer<Clock, boost::asio::wait_traits<Clock>, Executor>;

  void StartWait() {
    timer_.expires_at(deadline_);  // a pending wait completes with operation_aborted
    waiting_ = true;
    const uint64_t wait = ++waits_;
    timer_.async_wait([self = owner_->shared_from_this(), this, wait](const boost::system::error_code& ec) {
      OnWait(ec, wait);
    });
  }
  void OnWait(const boost::system::error_code& ec, uint64_t wait) {
    if (wait != waits_) return;  // superseded by a later wait
    waiting_ = false;
    if (ec || !set_) return;
    if (Clock::now() < deadline_) return StartWait();
    set_ = false;
    expired_ = true;
    (owner_->*kOnExpired)();
  }

  Owner* const owner_;
  Timer timer_;
  Clock::time_point deadline_{};
  uint64_t waits_ = 0;  // the number of the latest wait
  bool set_ = false;
  bool waiting_ = false;
  bool expired_ = false;
};

}  // namespace infera::http_internal

#endif  // INFERA_HTTP_DEADLINE_TIMER_H_
