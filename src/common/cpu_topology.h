// The CPUs this process may run on and how they sit in the machine: for each usable
// logical CPU its physical core (SMT siblings share one), package and NUMA node, read
// from Linux sysfs (<root>/cpuN/topology/{core_id,physical_package_id}, the
// <root>/cpuN/nodeM link, <root>/online). "Usable" means online and in the process's
// affinity mask (sched_getaffinity: a container's cpuset shows up there).
//
// ReadCpuTopology takes the sysfs root and the affinity set as arguments so that tests
// can feed a fake tree; ReadProcessCpuTopology reads the real ones. A CPU whose topology
// files are missing (some VMs, old kernels) counts as its own core, package 0, node 0.
//
// Thread-safe: free functions over the file system.
#ifndef INFERA_COMMON_CPU_TOPOLOGY_H_
#define INFERA_COMMON_CPU_TOPOLOGY_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace infera {

struct LogicalCpu {
  int id = 0;       // the kernel's CPU number (cpuN)
  int core = 0;     // physical core: equal for SMT siblings (unique across packages)
  int package = 0;  // socket
  int node = 0;     // NUMA node
};

struct CpuTopology {
  std::vector<LogicalCpu> cpus;  // usable CPUs, ascending id; never empty
  int online = 0;                // online CPUs in the machine (usable or not)

  int PhysicalCores() const;
  int NumaNodes() const;
  bool Smt() const;  // some core has more than one usable logical CPU
  // "2 usable CPUs (0-1) of 2 online: 2 physical cores, no SMT, 1 NUMA node".
  std::string Describe() const;
};

// Parses a kernel CPU list ("0-3,8,10-11\n"): ascending, no duplicates. Errors
// (InvalidArgument) quote the offending item: a non-number, a reversed range, an id
// above 4095, an empty list.
absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

// The inverse: {0,1,2,3,8} -> "0-3,8"; "" for none. `cpus` ascending.
std::string FormatCpuList(const std::vector<int>& cpus);

// Reads the topology of `allowed` CPUs under `sysfs_cpu_root` (normally
// /sys/devices/system/cpu). Errors: the root's `online` file is missing or unparsable
// (FailedPrecondition / InvalidArgument, naming the file); no allowed CPU is online.
absl::StatusOr<CpuTopology> ReadCpuTopology(const std::filesystem::path& sysfs_cpu_root,
                                            const std::vector<int>& allowed);

// The calling thread's affinity mask (sched_getaffinity), ascending.
std::vector<int> CurrentThreadCpus();

// ReadCpuTopology("/sys/devices/system/cpu", CurrentThreadCpus()).
absl::StatusOr<CpuTopology> ReadProcessCpuTopology();

}  // namespace infera

#endif  // INFERA_COMMON_CPU_TOPOLOGY_H_
