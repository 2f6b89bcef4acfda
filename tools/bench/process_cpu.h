// CPU time accounting for the load generator's own process and, when given its pid,
// the server's — how a run shows the client is not the bottleneck and how much CPU
// the server spends per request.
//
// Thread-safe (reads /proc and getrusage only).
#ifndef INFERA_TOOLS_BENCH_PROCESS_CPU_H_
#define INFERA_TOOLS_BENCH_PROCESS_CPU_H_

#include <optional>

namespace infera::bench {

// User + system CPU seconds of this process (all threads).
double SelfCpuSeconds();

// Busy CPU seconds of the whole machine (every process, all CPUs) since boot, from
// /proc/stat; with the two above it gives the CPU other processes took during a
// measurement (a shared machine's noise).
double MachineBusySeconds();

// User + system CPU seconds of process `pid` from /proc/<pid>/stat; nullopt if gone.
std::optional<double> ProcessCpuSeconds(int pid);

// The same for `pid` and all its live descendants (nginx and gunicorn serve from
// worker processes under a master); nullopt if `pid` is gone.
std::optional<double> ProcessTreeCpuSeconds(int pid);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_PROCESS_CPU_H_
