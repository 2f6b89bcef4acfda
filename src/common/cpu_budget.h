// How many CPUs this process may actually use: the smallest of the CPUs in its affinity
// mask and its cgroup CPU quota (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` /
// `cpu.cfs_period_us`), rounded up. std::thread::hardware_concurrency() reports the
// node's CPUs, so a pod limited to 4 CPUs on a 64-core node would start 64 threads.
//
// Thread-safe (reads the file system each call; call once at start).
#ifndef INFERA_COMMON_CPU_BUDGET_H_
#define INFERA_COMMON_CPU_BUDGET_H_

#include <optional>
#include <string_view>

namespace infera {

int AvailableCpus();

// Parses a cgroup v2 `cpu.max` line ("max 100000" or "150000 100000"): the quota in
// CPUs rounded up, or nullopt for no limit / malformed text.
std::optional<int> CpusFromCgroupV2(std::string_view cpu_max);

}  // namespace infera

#endif  // INFERA_COMMON_CPU_BUDGET_H_
