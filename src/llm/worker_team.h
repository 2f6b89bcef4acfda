// WorkerTeam: the LLM model runner's own intra-op threads, which wait for the next
// parallel region by spinning briefly before they sleep.
//
// Why not at::parallel_for: ATen's regions run in LibTorch's OpenMP runtime (libgomp),
// whose wait policy is one process-wide setting read before main(). infera is deployed
// with OMP_WAIT_POLICY=passive (docs/deploy.md): the torch backends' instances each own an
// OpenMP team, and spinning teams on shared cores slow each other 10-30x
// (docs/torch_backend.md). Passive workers sleep in the kernel at the end of every region,
// and a decode step is ~80 short regions (four projections and attention per layer, 16
// layers, the LM head: each a few hundred microseconds at C=1) — each one then starts
// with a futex wake of the other threads. Measured on the 1 B Q4_0 GGUF, 2 threads, C=1:
// 19.8 tok/s passive vs 21.6 with libgomp spinning (docs/llm.md, "Threading").
// A team of the runner's own spins for at most kSpin after each region, so the regions
// of one step follow each other without a wake, and sleeps between steps and when idle;
// the torch backends keep their passive OpenMP.
//
// Semantics follow at::parallel_for: [begin, end) is split into at most threads()
// contiguous chunks of at least `grain` items; fn(chunk_begin, chunk_end) runs once per
// chunk, chunk i on team thread i (0 is the calling thread). A range of at most `grain`
// items, a one-thread team, or a call from inside a region (any team's) runs fn(begin,
// end) inline on the calling thread. The first exception thrown by fn (lowest chunk
// index) is rethrown by ParallelFor once every chunk has finished.
//
// Thread-compatible: one ParallelFor at a time (the runner calls it from its engine
// thread only). Workers are joined by the destructor. Linux only (futex).
//
// Usage:
//   WorkerTeam team(/*threads=*/2);
//   team.ParallelFor(0, rows, 16, [&](int64_t begin, int64_t end) { ... });
#ifndef INFERA_LLM_WORKER_TEAM_H_
#define INFERA_LLM_WORKER_TEAM_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace infera::llm {

class WorkerTeam {
 public:
  using Fn = absl::FunctionRef<void(int64_t begin, int64_t end)>;

  // How long an idle thread spins before it sleeps: longer than the gap between two
  // regions of a step (microseconds), shorter than the gap between steps under light load.
  static constexpr std::chrono::microseconds kSpin{200};

  // `threads` >= 1: the calling thread plus threads - 1 workers started here.
  explicit WorkerTeam(int threads);
  ~WorkerTeam();
  WorkerTeam(const WorkerTeam&) = delete;
  WorkerTeam& operator=(const WorkerTeam&) = delete;

  int threads() const { return threads_; }

  // See the file comment.
  void ParallelFor(int64_t begin, int64_t end, int64_t grain, Fn fn);

  // True on a team's worker thread, and on a calling thread while it runs a region.
  static bool InRegion();

 private:
  void WorkerLoop(int index);
  void RunChunk(int index);

  const int threads_;
  // The current region, written by the caller before it bumps generation_ (release) and
  // read by the workers after they see the new generation (acquire).
  const Fn* fn_ = nullptr;
  int64_t begin_ = 0, end_ = 0, chunk_ = 0;
  int chunks_ = 0;
  std::vector<std::exception_ptr> errors_;  // per chunk; each written by its own thread

  // Futex words. generation_: bumped once per region (and at shutdown); workers wait on
  // it. pending_: workers yet to finish the current region; the caller waits on it.
  std::atomic<uint32_t> generation_{0};
  std::atomic<uint32_t> pending_{0};
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> workers_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_WORKER_TEAM_H_
