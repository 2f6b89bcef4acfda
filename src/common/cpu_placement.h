// CPU placement (`--cpu-placement pinned`, docs/cpu_placement.md): the seeds' "static CPU
// manager" advice done inside the process. The I/O side (HTTP and gRPC threads and every
// other thread the server starts) owns a few CPUs; each pytorch model instance's worker
// thread and its intra-op (OpenMP) threads own one CPU each, chosen so that threads share
// a CPU only when there are more threads than CPUs, then round-robin (least loaded first).
//
//   CpuPlanner     pure: topology + budget + I/O threads -> the I/O CPUs; then
//                  Assign(threads) / Release(cpus) per instance. No system calls.
//   CpuPlacement   thread-safe owner of a planner for the process: Reserve() hands an
//                  instance a CpuLease (its CPUs, given back when the lease is destroyed)
//                  and logs the assignment; installed process-wide by the server
//                  (SetProcessCpuPlacement) so that backends find it.
//   PinCurrentThread   pthread_setaffinity_np on the calling thread, read back.
//
// Order of preference: one logical CPU of every physical core first (SMT siblings
// last), NUMA node by node; an instance's later threads prefer its first thread's node.
#ifndef INFERA_COMMON_CPU_PLACEMENT_H_
#define INFERA_COMMON_CPU_PLACEMENT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/cpu_topology.h"

namespace infera {

enum class CpuPlacementMode { kNone, kPinned };

// "none" | "pinned"; anything else is InvalidArgument naming the value and the choices.
absl::StatusOr<CpuPlacementMode> ParseCpuPlacementMode(std::string_view text);

// How many CPUs the I/O side gets: one per I/O thread but at most a quarter of the
// CPUs, and at least one. `cpus` >= 1.
int IoCpuCount(int cpus, int io_threads);

class CpuPlanner {
 public:
  struct Assignment {
    std::vector<int> cpus;  // one CPU per thread, thread 0 first
    bool shared = false;    // some CPU already served another thread (or the I/O side)
  };

  // Uses the first `budget` CPUs of `topology` in preference order (budget clamped to
  // [1, CPUs]: a cgroup quota smaller than the cpuset), the first `io_cpus` of them
  // (clamped to [1, budget]) for I/O.
  CpuPlanner(const CpuTopology& topology, int budget, int io_cpus);

  const std::vector<int>& cpus() const { return order_; }  // in preference order
  const std::vector<int>& io_cpus() const { return io_; }  // ascending
  // Threads currently placed on `cpu` (an I/O CPU counts one); 0 for an unused id.
  int Load(int cpu) const;

  // Places `threads` (>= 1) threads: each on the CPU with the fewest threads, ties
  // broken by a different NUMA node than thread 0's last, a less loaded physical core
  // (its SMT siblings' threads count), then preference order.
  Assignment Assign(int threads);
  // Gives back what Assign returned.
  void Release(const std::vector<int>& cpus);

 private:
  std::vector<LogicalCpu> used_;  // preference order
  std::vector<int> order_;
  std::vector<int> io_;
  std::vector<int> load_;       // by position in used_
  std::vector<int> core_load_;  // by LogicalCpu::core
};

class CpuPlacement;

// The CPUs of one model instance, one per thread; destroying it gives them back.
class CpuLease {
 public:
  CpuLease(std::shared_ptr<CpuPlacement> owner, std::vector<int> cpus);
  ~CpuLease();
  CpuLease(const CpuLease&) = delete;
  CpuLease& operator=(const CpuLease&) = delete;

  const std::vector<int>& cpus() const { return cpus_; }

 private:
  const std::shared_ptr<CpuPlacement> owner_;
  const std::vector<int> cpus_;
};

class CpuPlacement : public std::enable_shared_from_this<CpuPlacement> {
 public:
  // `budget`: CPUs the process may use (AvailableCpus(): affinity and cgroup quota);
  // `io_threads`: the server's I/O threads (HTTP threads), for IoCpuCount.
  static std::shared_ptr<CpuPlacement> Create(const CpuTopology& topology, int budget, int io_threads);

  const CpuTopology& topology() const { return topology_; }
  std::vector<int> io_cpus() const;
  // Every CPU of the budget (I/O and instance CPUs), ascending.
  std::vector<int> cpus() const;
  // "I/O threads on CPUs 0; model instances on 1 (least loaded first, 2 CPUs in all)".
  std::string DescribePlan() const;

  // CPUs for the `threads` threads of instance `name` (logged; a warning when a CPU is
  // shared). Thread-safe.
  std::unique_ptr<CpuLease> Reserve(std::string_view name, int threads);

 private:
  friend class CpuLease;
  CpuPlacement(const CpuTopology& topology, int budget, int io_cpus);
  void Release(const std::vector<int>& cpus);

  const CpuTopology topology_;
  mutable absl::Mutex mu_;
  CpuPlanner planner_ ABSL_GUARDED_BY(mu_);
};

// Restricts the calling thread to `cpus` and reads the mask back: FailedPrecondition
// when the kernel refused (naming the CPUs and errno) or applied something else;
// InvalidArgument for an empty set or an id out of range.
absl::Status PinCurrentThread(const std::vector<int>& cpus);

// --cpu-placement pinned: widens the calling thread's mask from the I/O CPUs it inherited
// to every CPU of the placement's budget. Model-loading threads (the start-up load pool,
// the admin executor, the repository poller) call it first: loading and warming a model
// is CPU work that should not queue behind the I/O CPUs, and the threads a load starts
// (schedulers' workers, the LLM engine's threads) inherit the wider mask; a pytorch
// instance still pins its own worker and intra-op team at its first execution. No-op
// without a placement; a refusal is logged and the thread keeps its mask.
void PinCurrentThreadForModelLoading();

// The placement backends consult when they start instances; null (the default) means
// `--cpu-placement none`. Thread-safe.
void SetProcessCpuPlacement(std::shared_ptr<CpuPlacement> placement);
std::shared_ptr<CpuPlacement> ProcessCpuPlacement();

}  // namespace infera

#endif  // INFERA_COMMON_CPU_PLACEMENT_H_
