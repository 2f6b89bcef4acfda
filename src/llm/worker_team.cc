#include "llm/worker_team.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace infera::llm {
namespace {

thread_local bool in_region = false;

// The futex word is the low 32 bits of a std::atomic<uint32_t> (same size and layout on
// Linux/libstdc++). Spurious returns are fine: every caller re-checks in a loop.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or kSpin has passed; true when done() became true.
template <typename Done>
bool SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + WorkerTeam::kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

class RegionScope {
 public:
  RegionScope() { in_region = true; }
  ~RegionScope() { in_region = false; }
};

}  // namespace

WorkerTeam::WorkerTeam(int threads) : threads_(std::max(1, threads)), errors_(static_cast<size_t>(threads_)) {
  workers_.reserve(static_cast<size_t>(threads_ - 1));
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

WorkerTeam::~WorkerTeam() {
  stopping_.store(true);
  generation_.fetch_add(1);
  FutexWakeAll(&generation_);
  for (std::thread& t : workers_) t.join();
}

bool WorkerTeam::InRegion() { return in_region; }

void WorkerTeam::RunChunk(int index) {
  const int64_t b = begin_ + index * chunk_;
  const int64_t e = std::min(end_, b + chunk_);
  if (b >= e) return;
  try {
    (*fn_)(b, e);
  } catch (...) {
    errors_[static_cast<size_t>(index)] = std::current_exception();
  }
}

void WorkerTeam::WorkerLoop(int index) {
  in_region = true;  // a worker's own nested regions run inline
  uint32_t seen = 0;
  for (;;) {
    if (!SpinUntil([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      // Announce the sleep, then re-check (the caller bumps generation_ before it reads
      // sleeping_workers_; both seq_cst), then sleep unless the word moved meanwhile.
      sleeping_workers_.fetch_add(1);
      while (generation_.load() == seen) FutexWait(&generation_, seen);
      sleeping_workers_.fetch_sub(1);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) return;
    if (index < chunks_) RunChunk(index);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) FutexWakeAll(&pending_);
  }
}

void WorkerTeam::ParallelFor(int64_t begin, int64_t end, int64_t grain, Fn fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (threads_ == 1 || n <= grain || in_region) {
    fn(begin, end);
    return;
  }
  RegionScope scope;
  const int64_t chunks = std::min<int64_t>(threads_, (n + grain - 1) / grain);
  fn_ = &fn;
  begin_ = begin;
  end_ = end;
  chunk_ = (n + chunks - 1) / chunks;
  chunks_ = static_cast<int>(chunks);
  std::fill(errors_.begin(), errors_.end(), nullptr);
  pending_.store(static_cast<uint32_t>(threads_ - 1), std::memory_order_relaxed);
  generation_.fetch_add(1);  // seq_cst: publishes the region, ordered before the next load
  if (sleeping_workers_.load() > 0) FutexWakeAll(&generation_);
  RunChunk(0);
  if (!SpinUntil([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
    caller_sleeping_.store(true);
    for (uint32_t left = pending_.load(); left != 0; left = pending_.load()) FutexWait(&pending_, left);
    caller_sleeping_.store(false);
  }
  fn_ = nullptr;
  for (const std::exception_ptr& error : errors_) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace infera::llm
