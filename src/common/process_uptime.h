// How long ago this process started, for the start-up summary (docs/cold_start.md).
//
// The kernel's start time of the process (/proc/self/stat field 22, clock ticks since
// boot: 10 ms resolution at the usual 100 Hz) against CLOCK_BOOTTIME now. It is the
// fork() of the process; exec() follows within a millisecond or so when a shell or a
// supervisor starts it.
//
// Thread-safe.
#ifndef INFERA_COMMON_PROCESS_UPTIME_H_
#define INFERA_COMMON_PROCESS_UPTIME_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace infera {

// Seconds since this process started; nullopt when /proc is not readable.
std::optional<std::chrono::duration<double>> ProcessUptime();

// The start time (field 22, clock ticks since boot) of a /proc/<pid>/stat line; nullopt
// for a malformed line. The command name (field 2, in parentheses) may itself contain
// spaces and parentheses: fields are counted from the last ')'.
std::optional<uint64_t> StartTimeTicksFromStat(std::string_view stat);

}  // namespace infera

#endif  // INFERA_COMMON_PROCESS_UPTIME_H_
